"""consistency: how often a juror gives the same verdict whichever answer is shown first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jurybench.stats import params
from jurybench.stats._registry import statistic

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    cols = ["group", "n", "consistency", "both_zero", "no_difference_share"]
    rows = [
        [g, r["n"], r["consistency"], r["both_zero"], result["no_difference_share"].get(g)]
        for g, r in result["positional_consistency"].items()
    ]
    return cols, rows


@statistic("consistency", table=table)
def consistency(
    con: Connection, run: params.Run, *, where: params.Where = None, by: params.By = None
) -> dict[str, Any]:
    """Positional consistency per juror (or --by) and the share of pairs with no difference in any category."""
    from jurybench.stats._store import stat_consistency

    return stat_consistency(con, run, where=where, by=by)
