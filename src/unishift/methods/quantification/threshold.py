"""MAX, X, T50, MS and MS2: Forman's (2006, 2008) threshold-selection variants of ACC, as QuaPy
implements them, on the pass-through classifier's decision function p_1 - 0.5 (docs/methods.md §0.5,
§6.1)."""

from __future__ import annotations

from unishift.methods.quantification.aggregative import _PaperQuantifier

_BINARY = "Forman's threshold selection sweeps one decision threshold on p_1"


class _Threshold(_PaperQuantifier):
    group = "field"
    binary_only = _BINARY


class MAX(_Threshold):
    name, description = "MAX", "ACC at the threshold maximising tpr - fpr"
    quapy_class = "MAX"


class X(_Threshold):
    name, description = "X", "ACC at the threshold where fpr = 1 - tpr"
    quapy_class = "X"


class T50(_Threshold):
    name, description = "T50", "ACC at the threshold where tpr = 0.5"
    quapy_class = "T50"


class MS(_Threshold):
    name, description = "MS", "median sweep: the median ACC estimate over all thresholds"
    quapy_class = "MS"


class MS2(_Threshold):
    name, description = "MS2", "median sweep over the thresholds with tpr - fpr > 0.25"
    quapy_class = "MS2"
