"""robustness: do two runs (two judges, original vs neutralised texts) agree on the D vector?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jurybench.stats import params
from jurybench.stats._registry import statistic

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    return ["n", "spearman", "p"], [[result["n"], result["spearman"], result["p"]]]


@statistic("robustness", table=table)
def robustness(
    con: Connection, run: params.Run, *, other_run: params.OtherRun, where: params.Where = None
) -> dict[str, Any]:
    """Spearman correlation between the D vectors of two runs (e.g. two judges, original vs neutralised)."""
    from jurybench.stats._store import stat_robustness

    return stat_robustness(con, run, other_run=other_run, where=where)
