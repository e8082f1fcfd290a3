"""welch and mannwhitney: two groups compared on each criterion."""

from __future__ import annotations

from typing import Annotated

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import Statistic, statistic, two_values
from jurybench.stats.builtin._groups import by_criterion
from jurybench.stats.params import Connection

TwoGroups = Annotated[
    str | tuple[str, str], param("Two groups: a,b.", pair=True, cli_type=str, http_type=str, http={"max_length": 512})
]


def _two_groups(test: str, doc: str) -> Statistic[...]:
    """The statistic ``test``: one test of two groups on each criterion (the same options for both)."""

    def compare(
        con: Connection,
        run: params.Run,
        *,
        groups: TwoGroups,
        where: params.Where = None,
        by: params.Groups = "model",
        level: params.Level = "jury",
    ) -> dict[str, object]:
        from jurybench.errors import JurybenchError
        from jurybench.stats import _pointwise
        from jurybench.stats._slices import jury_coverage
        from jurybench.stats.sql import group_values, item_scores

        pair = two_values(groups, "groups")
        values = group_values(item_scores(con, run, where=where, by=by, level=level))
        out: dict[str, object] = {}
        for crit, by_group in sorted(values.items()):
            missing = [g for g in pair if g not in by_group]
            if missing:
                raise JurybenchError(
                    f"group {missing[0]!r} has no scores.", hint=f"Groups: {', '.join(sorted(by_group))}."
                )
            a, b = by_group[pair[0]], by_group[pair[1]]
            out[crit] = _pointwise.welch_t(a, b) if test == "welch" else _pointwise.mann_whitney(a, b)
        return {
            "level": level,
            "jury": jury_coverage(con, run, "jury_pointwise"),
            "groups": list(pair),
            "test": test,
            "criteria": out,
        }

    compare.__doc__ = doc
    return statistic(test, table=by_criterion)(compare)


welch = _two_groups("welch", "Welch two-sample t-test between two groups.")
mannwhitney = _two_groups("mannwhitney", "Mann-Whitney U test between two groups.")
