"""Multiclass accuracy predictors: the accuracy of the argmax predictions on an unlabelled sample."""

from unishift.multiclass.cap.confidence import ATC, DoC, Naive
from unishift.multiclass.cap.leap import LEAP, LEAPPCC

__all__ = ["ATC", "DoC", "LEAP", "LEAPPCC", "Naive"]
