"""Classifier accuracy predictors: estimate the accuracy of the classifier on an unlabelled sample.

Each predictor describes itself in its class; the registry finds every module of this package. The
names below are re-exported for convenience only.
"""

from unishift.methods.cap.atc import ATC
from unishift.methods.cap.doc import DoC
from unishift.methods.cap.leap import LEAP, LEAPPCC
from unishift.methods.cap.naive import Naive

__all__ = ["ATC", "LEAP", "LEAPPCC", "DoC", "Naive"]
