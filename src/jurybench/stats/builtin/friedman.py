"""friedman: do groups (models) differ on each criterion, blocking on the prompt?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    cols = ["criterion", "n_blocks", "chi2", "p", "group", "mean", "mean_rank", "posthoc_holm"]
    rows = []
    for crit, r in result["criteria"].items():
        for g in r["means"]:
            post = "; ".join(f"{o}:{p:.3g}" for o, p in r["posthoc_holm"][g].items() if o != g)
            rows.append([crit, r["n_blocks"], r["chi2"], r["p"], g, r["means"][g], r["mean_rank"][g], post])
    return cols, rows


@statistic("friedman", table=table, plots=("posthoc",), capped=True)
def friedman(
    con: Connection,
    run: params.Run,
    *,
    where: params.Where = None,
    by: Annotated[str, param("The compared groups (SQL expression).", http=params.EXPR)] = "model",
    block: Annotated[str, param("Blocks (SQL expression).", http=params.EXPR)] = "prompt",
    level: params.Level = "jury",
) -> dict[str, Any]:
    """Friedman test per criterion across groups (blocks = prompts), Holm-corrected post-hoc Wilcoxon matrix."""
    from jurybench.stats._store import stat_friedman

    return stat_friedman(con, run, where=where, by=by, block=block, level=level)
