"""Classifiers whose posteriors the methods calibrate, quantify and assess."""

from unishift.classifiers.specs import (
    ClassifierSpec,
    classifier_display,
    classifier_names,
    classifier_spec,
    make_classifier,
    order_classifiers,
    register_classifier,
)
from unishift.classifiers.tabular import one_thread

__all__ = [
    "ClassifierSpec",
    "classifier_display",
    "classifier_names",
    "classifier_spec",
    "make_classifier",
    "one_thread",
    "order_classifiers",
    "register_classifier",
]
