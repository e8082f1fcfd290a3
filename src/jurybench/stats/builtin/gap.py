"""gap: the treatment gap G = sum |D_j| per group, with bootstrap intervals and p-values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    cols = [
        "group",
        "gap",
        "ci_low",
        "ci_high",
        "pct_low",
        "pct_high",
        "n_pairs",
        *(f"p_vs_{g['group']}" for g in result["gaps"]),
    ]
    rows = [
        [
            g["group"],
            g["gap"],
            g["ci_low"],
            g["ci_high"],
            g.get("pct_low"),
            g.get("pct_high"),
            g["n_pairs"],
            *(result["bootstrap_p"][g["group"]][o["group"]] for o in result["gaps"]),
        ]
        for g in result["gaps"]
    ]
    return cols, rows


@statistic("gap", table=table, plots=("gap", "posthoc"))
def gap(
    con: Connection,
    run: params.Run,
    *,
    where: params.Where = None,
    by: params.By = None,
    boot: params.Boot = 2000,
    seed: params.Seed = 0,
    level: params.Level = "jury",
    resample: Annotated[
        str,
        param(
            "Bootstrap unit: pairs, or clusters:<expression> (e.g. clusters:prompt).",
            http={"min_length": 1, "max_length": 500},
        ),
    ] = "pairs",
) -> dict[str, Any]:
    """Treatment gap G = sum |D_j| per group with bootstrap CIs, and pairwise bootstrap p-values."""
    from jurybench.stats._store import stat_gap

    return stat_gap(con, run, where=where, by=by, n_boot=boot, seed=seed, level=level, resample=resample)
