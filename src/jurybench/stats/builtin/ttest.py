"""ttest: each group's mean score against a human baseline (one-sample t-test)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.builtin._groups import per_criterion

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    return per_criterion(result, by_group=True)


@statistic("ttest", table=table)
def ttest(
    con: Connection,
    run: params.Run,
    *,
    where: params.Where = None,
    by: params.Groups = "model",
    baseline: Annotated[float | None, param("Human baseline value for every group.")] = None,
    baseline_file: Annotated[
        Path | None, param("CSV group,value[,criterion] of per-group baselines.", faces="cli python")
    ] = None,
    baselines: Annotated[
        str | None,
        param("Stored human mean baselines (cell = group, target = criterion or '').", http={"max_length": 128}),
    ] = None,
    level: params.Level = "jury",
) -> dict[str, Any]:
    """One-sample t-test of each group's mean score against a human baseline."""
    from jurybench.stats._store import stat_ttest
    from jurybench.stats._store_effects import stored_baselines

    stored = stored_baselines(con, baselines, "mean") if baselines else None
    return stat_ttest(
        con, run, where=where, by=by, baseline=baseline, baseline_file=baseline_file, stored=stored, level=level
    )
