"""Calibrators: return calibrated posteriors for every item of an unlabelled test sample."""

from unishift.methods.calibration.platt import Platt
from unishift.registry import MethodSpec, register

_TASK = "calibration"

register(MethodSpec("Platt", _TASK, "baseline", Platt, "Platt", description="Platt scaling"))

__all__ = ["Platt"]
