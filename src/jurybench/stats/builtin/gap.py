"""gap: the treatment gap G = sum |D_j| per group, with bootstrap intervals and p-values."""

from __future__ import annotations

from typing import Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    cols = [
        "group",
        "gap",
        "ci_low",
        "ci_high",
        "pct_low",
        "pct_high",
        "n_pairs",
        "p_zero",
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
            g.get("p_zero"),
            *(result["p"][g["group"]][o["group"]] for o in result["gaps"]),
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
    test: Annotated[
        str,
        param(
            "Test of G_a = G_b: permutation (group labels permuted; type-I error alpha) or bootstrap "
            "(the groups resampled apart; conservative). --boot draws or permutations.",
            choices=("permutation", "bootstrap"),
        ),
    ] = "permutation",
) -> dict[str, object]:
    """Treatment gap G = sum |D_j| per group with bootstrap CIs, the sign-flip permutation
    p-value of G = 0, and p-values for G_a = G_b (permutation test by default)."""
    from jurybench.stats import _pairwise
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import epsilon_matrices

    matrices, categories, pair_ids = epsilon_matrices(con, run, where=where, by=by, level=level)
    clusters = _clusters(con, run, resample, pair_ids)
    if test not in _pairwise.GAP_TESTS:
        from jurybench.errors import JurybenchError

        raise JurybenchError(f"--test {test!r} is not a gap test.", hint="Use permutation or bootstrap.")
    results, pmatrix = _pairwise.treatment_gaps(matrices, n_boot=boot, seed=seed, clusters=clusters, test=test)
    out: dict[str, object] = {
        "level": level,
        "jury": jury_coverage(con, run, "jury_pairwise"),
        "categories": categories,
        "gaps": [vars(r) for r in results],
        "p": pmatrix,
        "test": test,
        **({"bootstrap_p": pmatrix} if test == "bootstrap" else {"permutation_p": pmatrix}),
        "resample": resample,
    }
    if clusters:
        out["n_clusters"] = {g: len(set(c)) for g, c in clusters.items()}
    return out


def _clusters(con: Connection, run_id: str, resample: str, pair_ids: dict[str, list[str]]) -> dict[str, Any] | None:
    """Each group's cluster label per pair for ``--resample clusters:<expression>`` (None: pairs)."""
    import numpy as np

    from jurybench.stats.sql import JURY_PAIRWISE, query, resample_unit

    column = resample_unit(
        resample,
        {"pairs": None, "instances": None},
        "Valid: pairs (the default), or clusters:<SQL expression over the pair columns>, e.g. clusters:prompt.",
    )
    if column is None:
        return None
    sql = f"SELECT DISTINCT pair_id, CAST(({column}) AS VARCHAR) FROM ({JURY_PAIRWISE}) base"
    label = dict(query(con, sql, {"run": run_id}, "reading the resampling clusters"))
    return {g: np.array([str(label.get(p)) for p in ids]) for g, ids in pair_ids.items()}
