"""Classifiers whose posteriors the methods calibrate, quantify and assess."""

from unishift.classifiers.specs import (
    ClassifierSpec,
    classifier_display,
    classifier_names,
    make_classifier,
    one_thread,
    order_classifiers,
    register_classifier,
)

__all__ = [
    "ClassifierSpec",
    "classifier_display",
    "classifier_names",
    "make_classifier",
    "one_thread",
    "order_classifiers",
    "register_classifier",
]
