"""Migration 7: the jury views read calibrated scores through a materialized CTE (a DuckDB LIMIT defect)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurybench.store._migrations.m004_jury import _jury_pairwise_views, _jury_pointwise_view

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def m007_calibrated_join(con: Connection) -> None:
    """The jury views read calibrated scores through a materialized CTE.

    DuckDB 2.0.0 returns every row of a run for ``SELECT ... FROM jury_pointwise WHERE run_id =
    'q' LIMIT 6``: the run filter is pushed into the LEFT JOIN's calibrated_scores side, its
    statistics prove that side empty, and the rewrite that follows drops the LIMIT. A
    materialized CTE is not filtered through, so the LIMIT stays (same rows, same values)."""
    source = "calibrated AS MATERIALIZED (SELECT run_id, calibration_id, subject_id, criterion, score FROM calibrated_scores), "
    for view in ("jury_pointwise", "jury_pairwise", "jury_pairwise_orders"):
        con.execute(f"DROP VIEW {view}")
    _jury_pointwise_view(con, calibrated_cte=source, calibrated_source="calibrated")
    _jury_pairwise_views(con, calibrated_cte=source, calibrated_source="calibrated")
