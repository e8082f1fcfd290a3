"""An alignment in the store: its figures (``alignments``), the kept rubric version (``rubrics``)
and the labels that made it (``label_uses``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.alignment._align import Alignment
    from jurybench.alignment._data import AlignmentData


def aligned_version(con: Connection, data: AlignmentData, alignment_id: str) -> str:
    """The version a kept variant gets: the same as before when this alignment was made before,
    else the original's version with ``.a<N>``, N one more than the versions aligned from it."""
    row = con.execute(
        "SELECT r.version FROM alignments a JOIN rubrics r ON r.rubric_hash = a.aligned_hash WHERE a.alignment_id = ?",
        [alignment_id],
    ).fetchall()
    if row:
        return str(row[0][0])
    taken = {
        str(r[0]) for r in con.execute("SELECT version FROM rubrics WHERE name = ?", [data.rubric.name]).fetchall()
    }
    n = 1
    while f"{data.rubric.version}.a{n}" in taken:
        n += 1
    return f"{data.rubric.version}.a{n}"


def record_alignment(con: Connection, data: AlignmentData, result: Alignment) -> None:
    """Store the alignment (replacing the same alignment made before), the kept rubric version
    and the labels it used."""
    from jurybench.engine import register_rubric

    aligned_hash = None
    if result.aligned is not None:
        register_rubric(con, result.aligned)
        aligned_hash = result.aligned.content_hash
    con.execute("DELETE FROM label_uses WHERE alignment_id = ?", [result.alignment_id])
    con.execute("DELETE FROM alignments WHERE alignment_id = ?", [result.alignment_id])
    con.execute(
        "INSERT INTO alignments (alignment_id, run_id, juror, juror_key, criterion, measure, rubric_hash, aligned_hash, "
        "chosen, alpha, folds, n_labelled, n_groups, variants, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?)",
        [
            result.alignment_id,
            result.run_id,
            result.juror,
            data.juror.key,
            result.criterion,
            result.measure,
            data.rubric.content_hash,
            aligned_hash,
            result.chosen,
            result.alpha,
            result.folds,
            result.n_labelled,
            result.n_groups,
            json.dumps(
                {
                    "original": result.original.as_dict(),
                    "variants": [v.as_dict() for v in result.variants],
                    "notes": result.notes,
                }
            ),
            result.cost,
        ],
    )
    if aligned_hash is not None:
        con.executemany(
            "INSERT INTO label_uses VALUES (?, ?, 'item', ?, ?)",
            [(result.alignment_id, aligned_hash, s, result.criterion) for s in result.used],
        )
