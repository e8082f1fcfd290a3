"""Migration 2: calibrations and calibrated scores."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment

# The views this migration changed; their current definitions are in store/_views.py.
VIEWS = ("calibrated_items",)


def m002_calibration(con: Connection) -> None:
    con.execute(
        """
        CREATE TABLE calibrations (
            calibration_id VARCHAR PRIMARY KEY,
            name VARCHAR NOT NULL,
            rubric_hash VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            path VARCHAR,
            body JSON NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    comment(
        con,
        "calibrations",
        {
            "": "Fitted calibrations (also saved as files under calibration/).",
            "calibration_id": "sha256 of the calibration file's content",
            "kind": "pointwise (least-squares scores) or preference (logistic A/B)",
            "body": "the calibration artifact as JSON",
        },
    )
    con.execute(
        """
        CREATE TABLE calibrated_scores (
            run_id VARCHAR NOT NULL,
            calibration_id VARCHAR NOT NULL,
            subject_id VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            score DOUBLE,
            probability DOUBLE,
            n_imputed INTEGER NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (run_id, calibration_id, subject_id, criterion)
        )"""
    )
    comment(
        con,
        "calibrated_scores",
        {
            "": "A calibration applied to a run: one calibrated score per subject and criterion.",
            "subject_id": "item_id (pointwise) or pair_id (preference)",
            "score": "calibrated score on the human scale (preference: +1 A, -1 B)",
            "probability": "preference calibrations: probability that A is preferred",
            "n_imputed": "juror votes missing or invalid for this subject, filled by the documented rule",
        },
    )
