"""Classifiers whose posteriors the methods calibrate, quantify and assess."""

from unishift.classifiers.tabular import CLASSIFIERS, make_classifier

__all__ = ["CLASSIFIERS", "make_classifier"]
