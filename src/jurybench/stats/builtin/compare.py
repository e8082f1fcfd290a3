"""welch and mannwhitney: two groups compared on each criterion."""

from __future__ import annotations

from typing import Annotated

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic, two_values
from jurybench.stats.builtin._groups import by_criterion
from jurybench.stats.params import Connection

TwoGroups = Annotated[
    str | tuple[str, str], param("Two groups: a,b.", pair=True, cli_type=str, http_type=str, http={"max_length": 512})
]


@statistic("welch", table=by_criterion)
def welch(
    con: Connection,
    run: params.Run,
    *,
    groups: TwoGroups,
    where: params.Where = None,
    by: params.Groups = "model",
    level: params.Level = "jury",
) -> dict[str, object]:
    """Welch two-sample t-test between two groups."""

    return stat_compare(con, run, test="welch", groups=two_values(groups, "groups"), where=where, by=by, level=level)


@statistic("mannwhitney", table=by_criterion)
def mannwhitney(
    con: Connection,
    run: params.Run,
    *,
    groups: TwoGroups,
    where: params.Where = None,
    by: params.Groups = "model",
    level: params.Level = "jury",
) -> dict[str, object]:
    """Mann-Whitney U test between two groups."""

    return stat_compare(
        con, run, test="mannwhitney", groups=two_values(groups, "groups"), where=where, by=by, level=level
    )


def stat_compare(
    con: Connection,
    run_id: str,
    *,
    test: str,
    groups: tuple[str, str],
    where: str | None = None,
    by: str | None = None,
    level: str = "jury",
) -> dict[str, object]:
    from jurybench.errors import JurybenchError
    from jurybench.stats import _pointwise
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import group_values, item_scores

    values = group_values(item_scores(con, run_id, where=where, by=by, level=level))
    out: dict[str, object] = {}
    for crit, by_group in sorted(values.items()):
        missing = [g for g in groups if g not in by_group]
        if missing:
            raise JurybenchError(f"group {missing[0]!r} has no scores.", hint=f"Groups: {', '.join(sorted(by_group))}.")
        a, b = by_group[groups[0]], by_group[groups[1]]
        out[crit] = _pointwise.welch_t(a, b) if test == "welch" else _pointwise.mann_whitney(a, b)
    return {
        "level": level,
        "jury": jury_coverage(con, run_id, "jury_pointwise"),
        "groups": list(groups),
        "test": test,
        "criteria": out,
    }
