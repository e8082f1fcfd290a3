"""robustness: do two runs (two judges, original vs neutralised texts) agree on the D vector?"""

from __future__ import annotations

from typing import Any

from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection


def table(result: dict[str, object], summary: bool) -> tuple[list[str], list[list[object]]]:
    return ["n", "spearman", "p"], [[result["n"], result["spearman"], result["p"]]]


@statistic("robustness", table=table)
def robustness(
    con: Connection, run: params.Run, *, other_run: params.OtherRun, where: params.Where = None
) -> dict[str, object]:
    """Spearman correlation between the D vectors of two runs (e.g. two judges, original vs neutralised)."""
    import numpy as np

    from jurybench.stats import _pairwise
    from jurybench.stats.builtin.directional import directional

    one: dict[str, Any] = directional.compute(con, run, where=where)
    other: dict[str, Any] = directional.compute(con, other_run, where=where)
    first, second = one["groups"]["all"]["categories"], other["groups"]["all"]["categories"]
    d1 = {r["category"]: r["D"] for r in first}
    d2 = {r["category"]: r["D"] for r in second}
    common = sorted(set(d1) & set(d2))
    return {
        "categories": common,
        **_pairwise.robustness(np.array([d1[c] for c in common]), np.array([d2[c] for c in common])),
    }
