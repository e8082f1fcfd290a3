"""directional: per category, D_j (the mean symmetrized score) and the Wilcoxon signed-rank test."""

from __future__ import annotations

from typing import Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection

ZERO_METHODS = ("wilcox", "pratt", "zsplit")


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    cols = ["group", "category", "n", "n_zero", "D", "wilcoxon_statistic", "p", "p_holm", "p_bh"]
    rows: list[list[object]] = []
    for g, block in result["groups"].items():
        rows += [[g, *(r[c] for c in cols[1:])] for r in block["categories"]]
    return cols, rows


@statistic("directional", table=table, plots=("directional",))
def directional(
    con: Connection,
    run: params.Run,
    *,
    where: params.Where = None,
    by: params.By = None,
    zero_method: Annotated[
        str, param("Zero differences: wilcox (drop), pratt or zsplit.", choices=ZERO_METHODS)
    ] = "wilcox",
    level: params.Level = "jury",
) -> dict[str, Any]:
    """Per category: D_j (mean symmetrized score) and the Wilcoxon signed-rank test, Holm and BH corrected."""
    from jurybench.stats import _pairwise
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import epsilon_matrices

    matrices, categories, _ = epsilon_matrices(con, run, where=where, by=by, level=level)
    return {
        "level": level,
        "jury": jury_coverage(con, run, "jury_pairwise"),
        "groups": {
            g: {
                "n_pairs": int(m.shape[0]),
                "no_difference_share": _pairwise.no_difference_share(m),
                "categories": _pairwise.directional_differences(m, categories, zero_method=zero_method),
            }
            for g, m in matrices.items()
        },
    }
