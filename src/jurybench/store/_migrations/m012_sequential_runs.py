"""Migration 12: a run judged sequentially records its stopping rule and its looks."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m012_sequential_runs(con: Connection) -> None:
    con.execute("ALTER TABLE runs ADD COLUMN stopping JSON")
    comment(
        con,
        "runs",
        {
            "stopping": "score --until: the stopping rule, its alpha, the batch size and seed, every look (subjects "
            "judged, mean, anytime-valid interval) and why judging stopped (met, or the subjects ran out)",
        },
    )
