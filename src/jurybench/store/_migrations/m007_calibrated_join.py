"""Migration 7: the jury views read calibrated scores through a materialized CTE (a DuckDB LIMIT defect)."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection

# The views this migration changed; their current definitions are in store/_views.py.
VIEWS = ("jury_pointwise", "jury_pairwise", "jury_pairwise_orders")


def m007_calibrated_join(con: Connection) -> None:
    """The jury views read calibrated scores through a materialized CTE.

    DuckDB 2.0.0 returns every row of a run for ``SELECT ... FROM jury_pointwise WHERE run_id =
    'q' LIMIT 6``: the run filter is pushed into the LEFT JOIN's calibrated_scores side, its
    statistics prove that side empty, and the rewrite that follows drops the LIMIT. A
    materialized CTE is not filtered through, so the LIMIT stays (same rows, same values).
    The views are made from store/_views.py once the migrations are applied."""
