"""welch and mannwhitney: two groups compared on each criterion."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic, two_values
from jurybench.stats.builtin._groups import per_criterion

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

TwoGroups = Annotated[
    str | tuple[str, str], param("Two groups: a,b.", pair=True, cli_type=str, http_type=str, http={"max_length": 512})
]


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    return per_criterion(result, by_group=False)


@statistic("welch", table=table)
def welch(
    con: Connection,
    run: params.Run,
    *,
    groups: TwoGroups,
    where: params.Where = None,
    by: params.Groups = "model",
    level: params.Level = "jury",
) -> dict[str, Any]:
    """Welch two-sample t-test between two groups."""
    from jurybench.stats._store import stat_compare

    return stat_compare(con, run, test="welch", groups=two_values(groups, "groups"), where=where, by=by, level=level)


@statistic("mannwhitney", table=table)
def mannwhitney(
    con: Connection,
    run: params.Run,
    *,
    groups: TwoGroups,
    where: params.Where = None,
    by: params.Groups = "model",
    level: params.Level = "jury",
) -> dict[str, Any]:
    """Mann-Whitney U test between two groups."""
    from jurybench.stats._store import stat_compare

    return stat_compare(
        con, run, test="mannwhitney", groups=two_values(groups, "groups"), where=where, by=by, level=level
    )
