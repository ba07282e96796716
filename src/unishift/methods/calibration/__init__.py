"""Calibrators: calibrated posteriors (n x k) for every item of an unlabelled test sample.

One module per calibrator or family, named after it (shared helpers in ``shared.py``, the
temperature-type base class in ``temperature.py``); the registry scans every module of this package,
so adding a calibrator is adding a file. Per-shift defaults reproduce the configuration of each paper
table (``label`` = the label-shift calibration table, ``covariate`` = the covariate-shift one,
docs/methods.md), ``binary_defaults`` those of the binary tables.
"""
