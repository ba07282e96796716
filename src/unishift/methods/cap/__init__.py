"""Classifier accuracy predictors: estimate the accuracy of the classifier on an unlabelled sample."""

from unishift.methods.cap.naive import Naive
from unishift.registry import MethodSpec, register

_TASK = "cap"

register(MethodSpec("Naive", _TASK, "baseline", Naive, "Naive", description="validation accuracy"))

__all__ = ["Naive"]
