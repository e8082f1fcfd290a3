"""consistency: how often a juror gives the same verdict whichever answer is shown first."""

from __future__ import annotations

from typing import Any

from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    cols = ["group", "n", "consistency", "both_zero", "no_difference_share"]
    rows = [
        [g, r["n"], r["consistency"], r["both_zero"], result["no_difference_share"].get(g)]
        for g, r in result["positional_consistency"].items()
    ]
    return cols, rows


@statistic("consistency", table=table)
def consistency(
    con: Connection, run: params.Run, *, where: params.Where = None, by: params.By = None
) -> dict[str, object]:
    """Positional consistency per juror (or --by) and the share of pairs with no difference in any category."""
    from collections import defaultdict

    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats import _pairwise
    from jurybench.stats.sql import epsilon_matrices

    shown = con.execute("SELECT coalesce(orders, 'both') FROM runs WHERE run_id = ?", [run]).fetchall()
    if shown and shown[0][0] != "both":
        raise JurybenchError(
            f"run '{run}' shows each pair in one order (orders: {shown[0][0]}): positional consistency needs "
            "both orders of a pair, so it cannot be measured here.",
            hint="Judge the pairs in both orders (score --orders both) to measure it.",
        )
    group = by or "juror"
    rows = _pairwise_rows(con, run, group=group, columns="score_ab, score_ba, status", where=where)
    by_group: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for grp, ab, ba, status in rows:
        if status == "valid":
            by_group[str(grp)].append((ab, ba))
    out = {}
    for grp, values in sorted(by_group.items()):
        arr = np.array(values, dtype=float)
        out[grp] = _pairwise.positional_consistency(arr[:, 0], arr[:, 1])
    # The no-difference share per the same groups: each juror's own scores by default, else the jury's.
    if by is None:
        matrices, _, _ = epsilon_matrices(con, run, where=where, by=None, level="juror")
    else:
        matrices, _, _ = epsilon_matrices(con, run, where=where, by=by, level="jury")
    return {
        "positional_consistency": out,
        "no_difference_share": {g: _pairwise.no_difference_share(m) for g, m in matrices.items()},
    }


def _pairwise_rows(
    con: Connection, run_id: str, *, group: str, columns: str, where: str | None
) -> list[tuple[Any, ...]]:
    """(group, *columns) rows of the run's single-sample pairwise verdicts (both orders side by side)."""
    from jurybench.stats.sql import check_run, fragments, query

    check_run(con, run_id)
    group, where = fragments(group, where)
    sql = f"SELECT CAST(({group}) AS VARCHAR) AS grp, {columns} FROM ({PAIRWISE_BASE}) base WHERE ({where or 'TRUE'}) ORDER BY ALL"
    return query(con, sql, {"run": run_id}, "reading pairwise scores")


PAIRWISE_BASE = """
WITH members AS (
    SELECT DISTINCT j.rubric_hash, j.juror_key, j.pair_id
    FROM pairwise_judgments j JOIN run_calls rc USING (call_key) WHERE rc.run_id = $run
)
SELECT s.*, ju.name AS juror, ju.model AS juror_model, p.dataset, p.item_a, p.item_b,
       a.model AS model_a, b.model AS model_b, a.language, a.prompt,
       a.treatment AS treatment_a, b.treatment AS treatment_b, p.metadata AS pair_metadata
FROM pairwise_symmetrized s
JOIN members USING (rubric_hash, juror_key, pair_id)
JOIN jurors ju USING (juror_key)
JOIN pairs p USING (pair_id)
JOIN items a ON a.item_id = p.item_a
JOIN items b ON b.item_id = p.item_b
"""
