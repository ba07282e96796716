"""Multiclass calibrators: an n x k row-stochastic matrix per unlabelled sample."""

from unishift.multiclass.calibration.dmcal import DMCal
from unishift.multiclass.calibration.domain_weighted import CPCS, TransCal
from unishift.multiclass.calibration.emq import EMQBCTSCalibrator, EMQCalibrator
from unishift.multiclass.calibration.paccal import PacCalSigma
from unishift.multiclass.calibration.scaling import (
    BiasCorrectedTemperatureScaling,
    TemperatureScaling,
    VectorScaling,
)

__all__ = [
    "BiasCorrectedTemperatureScaling",
    "CPCS",
    "DMCal",
    "EMQBCTSCalibrator",
    "EMQCalibrator",
    "PacCalSigma",
    "TemperatureScaling",
    "TransCal",
    "VectorScaling",
]
