"""Recorded statistics as Python users list them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurybench.store import reading

if TYPE_CHECKING:
    import pandas as pd

    from jurybench.store import StoreRef

RESULTS_SQL = "SELECT result_id, name, run_id, seed, params, created_at FROM stats_results "


def result_rows(store: StoreRef, *, name: str | None = None) -> list[tuple[object, ...]]:
    """Recorded statistics (id, name, run, seed, parameters, time) as rows, oldest first."""
    with reading(store) as con:
        return list(
            con.execute(
                RESULTS_SQL + ("WHERE name = ? " if name else "") + "ORDER BY created_at", [name] if name else []
            ).fetchall()
        )


def results(store: StoreRef, *, name: str | None = None) -> pd.DataFrame:
    """Recorded statistics (id, name, run, seed, parameters, time) as a DataFrame, oldest first."""
    with reading(store) as con:
        return con.execute(
            RESULTS_SQL + ("WHERE name = ? " if name else "") + "ORDER BY created_at", [name] if name else []
        ).df()
