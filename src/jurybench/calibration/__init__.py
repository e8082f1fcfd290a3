"""Calibration: fit least-squares juror weights against human labels, validate, save, apply."""

from jurybench.calibration._api import (
    apply_calibration,
    attach_calibration,
    calibration_finisher,
    fit_calibration,
    load_artifact,
)
from jurybench.calibration._fit import METHODS, fit_criterion, regression_metrics

__all__ = [
    "METHODS",
    "apply_calibration",
    "attach_calibration",
    "calibration_finisher",
    "fit_calibration",
    "fit_criterion",
    "load_artifact",
    "regression_metrics",
]
