"""kendall: do the groups' mean scores rank them as a reference ranking does?"""

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
    return per_criterion(result, by_group=False)


@statistic("kendall", table=table)
def kendall(
    con: Connection,
    run: params.Run,
    *,
    baseline_file: Annotated[
        Path | None, param("CSV group,value: the reference ranking.", faces="cli python", required_in="cli")
    ] = None,
    reference: Annotated[
        dict[str, float] | None,
        param(
            "The reference ranking inline: group -> value (the CLI's --baseline-file).",
            faces="http python",
            required_in="http",
            http={"min_length": 3, "max_length": 1000},
        ),
    ] = None,
    where: params.Where = None,
    by: params.Groups = "model",
    level: params.Level = "jury",
) -> dict[str, Any]:
    """Kendall tau between the groups' mean scores and a reference ranking: a CSV group,value
    (``baseline_file``) or the values themselves (``reference``, group -> value)."""
    from jurybench.stats._store import stat_kendall

    path = Path(baseline_file) if baseline_file is not None else None
    return stat_kendall(con, run, baseline_file=path, reference=reference, where=where, by=by, level=level)
