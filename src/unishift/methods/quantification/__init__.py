"""Quantifiers: estimate the positive-class prevalence of an unlabelled sample.

Each quantifier describes itself in its class; the registry finds every module of this package. The
names below are re-exported for convenience only.
"""

from unishift.methods.quantification.reference import CC, EMQ, EMQBCTS, PACC, PCC, KDEy

__all__ = ["CC", "PCC", "PACC", "EMQ", "EMQBCTS", "KDEy"]
