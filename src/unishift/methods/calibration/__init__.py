"""Calibrators: return calibrated posteriors for every item of an unlabelled test sample.

Each calibrator describes itself in its class (per-shift defaults reproduce the configuration of each
paper table: ``label`` = the label-shift calibration table, ``covariate`` = the covariate-shift one,
docs/methods.md); the registry finds every module of this package, so adding a calibrator is adding a
file (one module per calibrator, named after it; shared helpers in ``shared.py`` and the
temperature-type base class in ``temperature.py``). The names below are re-exported for convenience
only.
"""

from unishift.methods.calibration.cpcs import CPCS
from unishift.methods.calibration.dmcal import DMCal
from unishift.methods.calibration.emq import EMQCalibrator
from unishift.methods.calibration.emq_bcts import EMQBCTSCalibrator
from unishift.methods.calibration.emq_lascal import EMQLasCal
from unishift.methods.calibration.emq_transcal import EMQTransCal
from unishift.methods.calibration.head2tail import Head2Tail
from unishift.methods.calibration.lascal import LasCal
from unishift.methods.calibration.paccal_sigma import PacCalSigma
from unishift.methods.calibration.platt import Platt
from unishift.methods.calibration.transcal import TransCal

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
