"""Calibrated scores and calibration artifacts as the store keeps them."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.store import transaction

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

# /2: weights keyed by juror_key (identity), with labels for display.


def register_artifact(con: Connection, artifact: dict[str, Any], path: Path, text: str) -> str:
    calibration_id = hashlib.sha256(text.encode()).hexdigest()
    con.execute(
        "INSERT OR IGNORE INTO calibrations (calibration_id, name, rubric_hash, kind, path, body) VALUES (?, ?, ?, ?, ?, ?)",
        [calibration_id, artifact["name"], artifact["rubric"]["hash"], artifact["kind"], str(path), text],
    )
    return calibration_id


def write_calibrated_scores(
    con: Connection, artifact: dict[str, object], text: str, path: Path, run_id: str, rows: list[dict[str, Any]]
) -> dict[str, object]:
    """Replace a run's scores under this calibration in one transaction (rows: subject_id,
    criterion, score, n_imputed and, for preference calibrations, probability)."""
    import pyarrow as pa

    calibration_id = hashlib.sha256(text.encode()).hexdigest()
    table = pa.Table.from_pylist([{"probability": None, **r} for r in rows])
    with transaction(con):
        register_artifact(con, artifact, path, text)
        con.execute("DELETE FROM calibrated_scores WHERE run_id = ? AND calibration_id = ?", [run_id, calibration_id])
        con.register("new_scores", table)
        con.execute(
            """INSERT INTO calibrated_scores (run_id, calibration_id, subject_id, criterion, score, probability, n_imputed)
               SELECT ?, ?, subject_id, criterion, score, probability::DOUBLE, n_imputed FROM new_scores""",
            [run_id, calibration_id],
        )
        con.unregister("new_scores")
    return {
        "calibration": artifact["name"],
        "calibration_id": calibration_id,
        "run_id": run_id,
        "rows": len(rows),
        "imputed": int(sum(r["n_imputed"] for r in rows)),
    }
