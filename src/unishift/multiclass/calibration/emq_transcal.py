"""EMQ^TransCal for k classes: TransCal's posteriors, then EM from the training prevalence.

The binary EMQ_TransCal (docs/methods.md §2.8) re-weights TransCal's calibrated posteriors by Saerens
et al.'s EM. Both steps are class-generic: TransCal is the class-generic binary code (see
``domain_weighted.py``) and EM is QuaPy's k-class EM, so for two classes the numbers are the binary
method's (tests/test_multiclass_binary_invariant.py). The output is EM's adapted posterior vectors,
canonical in form; whether they are calibrated depends on TransCal's input being calibrated on the
training distribution (then EM's Bayes re-weighting is exact under label shift, docs/multiclass.md §4).
"""

from __future__ import annotations

from unishift.multiclass.calibration.domain_weighted import TransCal
from unishift.multiclass.calibration.emq import ThenEM


class EMQTransCal(ThenEM, TransCal):
    name, display, group = "EMQ_TransCal", r"EMQ$^{\text{TransCal}}$", "adapted"
    binary_name = "EMQ_TransCal"
    shifts = ("covariate",)
    assumption = "label"
    calibration_notion = "canonical"
    defaults = {"logits": "L", "train_prevalence": "training"}
    description = "TransCal then EM from the classifier-training prevalence"

    def __init__(
        self,
        logits: str = "L",
        weights: str = "domain_classifier",
        zero_posteriors: str = "faithful",
        variance_term: bool = True,
        train_prevalence: str = "training",
    ):
        super().__init__(logits, weights, zero_posteriors, variance_term)
        self._set_prior_source(train_prevalence)


__all__ = ["EMQTransCal"]
