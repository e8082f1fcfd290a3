"""friedman: do groups (models) differ on each criterion, blocking on the prompt?"""

from __future__ import annotations

from typing import Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection


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
) -> dict[str, object]:
    """Friedman test per criterion across groups (blocks = prompts), Holm-corrected post-hoc Wilcoxon matrix."""
    # Friedman with post-hoc tests per criterion over blocks x groups. The block means are
    # computed in DuckDB, for a big run one slice of its subjects at a time (:func:`run_slices`),
    # so DuckDB's hash tables hold one slice's subjects, never the run's; each slice's sums and
    # counts per (criterion, block, group) are added up in DuckDB too (folded as they come, so
    # they hold at most two rows per cell: a block's subjects fall in many slices), and only the block x
    # group matrix of each criterion reaches Python, as arrays.
    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats import _pointwise
    from jurybench.stats._slices import Coverage, drop_temp, run_slices, slices_of
    from jurybench.stats.sql import STATS_HINT, check_run, no_valid_scores, pointwise_sql
    from jurybench.store import execute_user_sql, expression

    check_run(con, run)
    if where:
        expression(where, option="--where")  # checked alone before it is combined with the criterion
    coverage = Coverage(con, run, "jury_pointwise")
    parts = slices_of(con, run, len(coverage.dimensions))
    inner = pointwise_sql(by, where, block, level)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _jb_cells (criterion VARCHAR, blk VARCHAR, grp VARCHAR, total DOUBLE, n BIGINT)"
    )
    folded, added = 0, 0  # rows of _jb_cells when last folded, and added since
    try:
        # At the jury level the coverage and the statistic both read the slice's jury scores.
        with run_slices(con, run, parts, jury_read_twice=level == "jury") as only:
            for part in range(parts):
                with only(part):
                    coverage.add(con, whole=parts == 1)
                    inserted = execute_user_sql(
                        con,
                        f"INSERT INTO _jb_cells SELECT criterion, extra, grp, "
                        f"sum(score), count(score) FROM ({inner}) GROUP BY ALL",
                        {"run": run},
                        what="reading pointwise scores",
                        hint=STATS_HINT,
                    )
                    added += int(inserted.fetchall()[0][0])
                # A block's subjects fall in many slices: the rows of a cell from several slices
                # are folded into one once as many rows were added as there were, so the table
                # holds at most twice its cells and folding costs no more than adding did.
                if parts > 1 and (added >= max(folded, 1) or part == parts - 1):  # one slice: a row per cell
                    folded = con.execute(
                        "CREATE OR REPLACE TEMP TABLE _jb_cells AS SELECT criterion, blk, grp, "
                        "sum(total) AS total, sum(n) AS n FROM temp.main._jb_cells "
                        "GROUP BY ALL"
                    ).fetchall()[0][0]
                    added = 0
        out = {}
        for (criterion,) in con.execute("SELECT DISTINCT criterion FROM _jb_cells ORDER BY 1").fetchall():
            models = [
                str(g)
                for (g,) in con.execute(
                    "SELECT DISTINCT coalesce(grp, 'None') FROM _jb_cells WHERE criterion = ? ORDER BY 1", [criterion]
                ).fetchall()
            ]
            if len(models) < 3:
                raise JurybenchError(
                    f"Friedman needs at least 3 groups; --by gives {len(models)} ({', '.join(models)})."
                )
            # A block mean over slices is their sums over their counts: the mean over every
            # item. Blocks and groups come as row and column numbers, so only numbers reach Python.
            cells = con.execute(
                """SELECT dense_rank() OVER (ORDER BY blk NULLS LAST) - 1,
                          dense_rank() OVER (ORDER BY coalesce(grp, 'None')) - 1, sum(total) / sum(n)
                   FROM _jb_cells WHERE criterion = ? GROUP BY blk, grp""",
                [criterion],
            ).fetchnumpy()
            row, column, mean = (np.asarray(v) for v in cells.values())
            matrix = np.full((int(row.max()) + 1, len(models)), np.nan)
            matrix[row.astype(np.int64), column.astype(np.int64)] = mean.astype(float)
            out[criterion] = _pointwise.friedman_posthoc(matrix, models)
    finally:
        drop_temp(con, "TABLE IF EXISTS temp.main._jb_cells")
    if not out:
        raise no_valid_scores(con, run, "pointwise", where)
    return {"level": level, "jury": coverage.result(con), "block": block, "criteria": out}
