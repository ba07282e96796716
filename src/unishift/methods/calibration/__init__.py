"""Calibrators: return calibrated posteriors for every item of an unlabelled test sample.

Each calibrator describes itself in its class (per-shift defaults reproduce the configuration of each
paper table: ``label`` = the label-shift calibration table, ``covariate`` = the covariate-shift one,
docs/methods.md); the registry finds every module of this package, so adding a calibrator is adding a
file. The names below are re-exported for convenience only.
"""

from unishift.methods.calibration.adapted import (
    DMCal,
    EMQBCTSCalibrator,
    EMQCalibrator,
    EMQLasCal,
    EMQTransCal,
    PacCalSigma,
)
from unishift.methods.calibration.platt import Platt
from unishift.methods.calibration.temperature import CPCS, Head2Tail, LasCal, TransCal

__all__ = [
    "Platt",
    "Head2Tail",
    "CPCS",
    "TransCal",
    "LasCal",
    "EMQCalibrator",
    "EMQBCTSCalibrator",
    "EMQTransCal",
    "EMQLasCal",
    "PacCalSigma",
    "DMCal",
]
