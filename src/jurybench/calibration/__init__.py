"""Calibration: fit least-squares juror weights against human labels, validate, save, apply;
and choose the cheapest sub-jury that is good enough (``select_jury``).

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from jurybench.calibration._api import (
    apply_calibration,
    attach_calibration,
    calibration_finisher,
    fit_calibration,
    load_artifact,
)
from jurybench.calibration._data import CalibrationData
from jurybench.calibration._fit import MIN_TEST_ITEMS, fit_criterion, no_worse
from jurybench.calibration._selection import (
    PilotRows,
    Selection,
    SubJury,
    choose_sub_jury,
    jury_file_text,
    non_inferiority,
    price_path,
    score_candidates,
    select_jury,
    write_jury_file,
)

__all__ = [
    "MIN_TEST_ITEMS",
    "CalibrationData",
    "PilotRows",
    "Selection",
    "SubJury",
    "apply_calibration",
    "attach_calibration",
    "calibration_finisher",
    "choose_sub_jury",
    "fit_calibration",
    "fit_criterion",
    "jury_file_text",
    "load_artifact",
    "no_worse",
    "non_inferiority",
    "price_path",
    "score_candidates",
    "select_jury",
    "write_jury_file",
]
