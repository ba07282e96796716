"""Multiclass quantifiers: a prevalence vector per unlabelled sample (QuaPy's implementations)."""

from unishift.multiclass.quantification.aggregative import ACC, CC, PACC, PCC, KDEy
from unishift.multiclass.quantification.emq import EMQ, EMQBCTS

__all__ = ["ACC", "CC", "EMQ", "EMQBCTS", "KDEy", "PACC", "PCC"]
