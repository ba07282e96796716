"""The six adaptations between tasks for k classes (docs/multiclass.md §2)."""

from unishift.multiclass.adapt.to_calibration import CAPToCalibration, QuantificationToCalibration
from unishift.multiclass.adapt.to_cap import CalibrationToCAP, QuantificationToCAP
from unishift.multiclass.adapt.to_quantification import (
    CalibratedEMQ,
    CalibrationToQuantification,
    CAPToQuantification,
)

__all__ = [
    "CAPToCalibration",
    "CAPToQuantification",
    "CalibratedEMQ",
    "CalibrationToCAP",
    "CalibrationToQuantification",
    "QuantificationToCAP",
    "QuantificationToCalibration",
]
