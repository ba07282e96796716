"""Classifiers whose posteriors the methods calibrate, quantify and assess."""

from unishift.classifiers.tabular import CLASSIFIERS, make_classifier, one_thread

__all__ = ["CLASSIFIERS", "make_classifier", "one_thread"]
