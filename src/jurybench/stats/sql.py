"""The toolkit of a statistic over the store, built-in or a plug-in's (public): check a run,
read its scores filtered by ``--where`` and grouped by ``--by`` (user SQL, parsed as single
expressions and run read-only, errors in one line), at the jury or the juror level; the
built-in statistics read the store with these.

Scores come from the jury views, so every statistic uses the run's one jury rule:
``level="jury"`` (the default) reads ``jury_pairwise`` / ``jury_pointwise`` (subjects
below quorum are left out and counted); ``level="juror"`` reads ``juror_pairwise`` /
``juror_pointwise`` and makes each juror a group of its own (joined with --by).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jurybench.errors import JurybenchError
from jurybench.store import as_float, execute_user_sql, expression

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray


_PAIR_COLUMNS = """p.dataset, p.item_a, p.item_b, a.model AS model_a, b.model AS model_b, a.language, a.prompt,
       a.treatment AS treatment_a, b.treatment AS treatment_b, p.metadata AS pair_metadata"""
# One row per pair x category: the jury's symmetrized score by the run's rule.
JURY_PAIRWISE = f"""
SELECT v.pair_id, v.category, v.jury_score AS epsilon, v.below_quorum, v.n_jurors_present, v.n_jurors_expected,
       {_PAIR_COLUMNS}
FROM jury_pairwise v JOIN pairs p USING (pair_id) JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b
WHERE v.run_id = $run
"""
# One row per pair x category x juror: the juror's symmetrized score (mean over its samples).
JUROR_PAIRWISE = f"""
SELECT v.pair_id, v.category, v.juror_epsilon AS epsilon, v.juror_epsilon IS NULL AS below_quorum, v.juror,
       ju.model AS juror_model, {_PAIR_COLUMNS}
FROM juror_pairwise v JOIN jurors ju USING (juror_key)
JOIN pairs p USING (pair_id) JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b
WHERE v.run_id = $run
"""
_ITEM_COLUMNS = "i.model, i.language, i.prompt, i.dataset, i.treatment, i.metadata"
JURY_POINTWISE = f"""
SELECT v.item_id, v.criterion, v.jury_score AS score, v.below_quorum, v.n_jurors_present, v.n_jurors_expected,
       {_ITEM_COLUMNS}
FROM jury_pointwise v JOIN items i USING (item_id) WHERE v.run_id = $run
"""
JUROR_POINTWISE = f"""
SELECT v.item_id, v.criterion, v.juror_score AS score, v.juror_score IS NULL AS below_quorum, v.juror,
       ju.model AS juror_model, {_ITEM_COLUMNS}
FROM juror_pointwise v JOIN jurors ju USING (juror_key) JOIN items i USING (item_id) WHERE v.run_id = $run
"""
LEVELS = ("jury", "juror")


def _level(level: str, by: str | None) -> tuple[str | None, bool]:
    """The group expression for a level (each juror its own group at the juror level)."""
    if level not in LEVELS:
        raise JurybenchError(f"--level {level!r} is not valid.", hint="Valid: jury (the run's jury rule), juror.")
    if level == "jury":
        return by, True
    return (f"juror || ' / ' || CAST(({by}) AS VARCHAR)" if by else "juror"), False


STATS_HINT = "--where takes a SQL predicate and --by a SQL expression over the columns in docs/statistics.md."


def query(con: Connection, sql: str, params: dict[str, object], what: str) -> list[tuple[Any, ...]]:
    return list(execute_user_sql(con, sql, params, what=what, hint=STATS_HINT).fetchall())


def fragments(group: str, where: str | None, extra: str | None = None) -> tuple[str, str | None]:
    """User --by / --where (and --arm / --block) parsed as single expressions, never statements."""
    if extra is not None:
        expression(extra, option="--arm/--block")
    return expression(group, option="--by"), (expression(where, option="--where") if where else None)


def check_run(con: Connection, run_id: str) -> None:
    if not con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
        known = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 8").fetchall()]
        raise JurybenchError(f"no run '{run_id}'.", hint=f"Runs: {', '.join(known) or 'none'}.")


def epsilon_matrices(
    con: Connection, run_id: str, *, where: str | None, by: str | None, level: str = "jury"
) -> tuple[dict[str, NDArray[np.float64]], list[str], dict[str, list[str]]]:
    """Per group: pairs x categories of the symmetrized score, the jury's (by its rule) or each juror's."""
    check_run(con, run_id)
    group, at_jury = _level(level, by)
    grp, where = fragments(group or "'all'", where)
    base = JURY_PAIRWISE if at_jury else JUROR_PAIRWISE
    sql = (
        f"SELECT CAST(({grp}) AS VARCHAR) AS grp, pair_id, category, avg(epsilon) FROM ({base}) base "
        f"WHERE epsilon IS NOT NULL AND ({where or 'TRUE'}) GROUP BY ALL ORDER BY ALL"
    )
    rows = query(con, sql, {"run": run_id}, "reading symmetrized scores")
    if not rows:
        raise no_valid_scores(con, run_id, "symmetrized pairwise", where)
    categories = sorted({r[2] for r in rows})
    cat_index = {c: j for j, c in enumerate(categories)}
    by_group: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for grp_value, pair, cat, eps in rows:
        by_group[str(grp_value)][pair][cat] = eps
    matrices, pair_ids = {}, {}
    for g, pairs in sorted(by_group.items()):
        ids = sorted(pairs)
        m = np.full((len(ids), len(categories)), np.nan)
        for i, pid in enumerate(ids):
            for cat, value in pairs[pid].items():
                m[i, cat_index[cat]] = value
        matrices[g], pair_ids[g] = m, ids
    return matrices, categories, pair_ids


def no_valid_scores(con: Connection, run_id: str, kind: str, where: str | None) -> JurybenchError:
    """The one line for a run (or its --where) with no valid score of ``kind``, naming the jurors
    of its panel that gave no valid answer at all: the usual reason, with a real judge."""
    from jurybench.stats._silent import jurors_without_valid_answers, named_jurors

    silent = jurors_without_valid_answers(con, run_id)
    return JurybenchError(
        f"run '{run_id}' has no valid {kind} scores{f' where {where}' if where else ''}.",
        hint=f"No valid answers from {named_jurors(silent)}." if silent else None,
    )


def resample_unit(resample: str, named: dict[str, str | None], hint: str) -> str | None:
    """The SQL expression naming each row's bootstrap cluster for ``--resample``: a named unit's
    own (None: every row alone), or the checked expression of ``clusters:<expression>``."""
    if resample in named:
        return named[resample]
    kind, _, expr = resample.partition(":")
    if kind != "clusters" or not expr.strip():
        raise JurybenchError(f"--resample {resample!r} is not valid.", hint=hint)
    return str(expression(expr, option="--resample"))


def pointwise_sql(by: str | None, where: str | None, extra: str | None, level: str) -> str:
    group, at_jury = _level(level, by or ("model" if level == "jury" else None))
    grp, where = fragments(group or "model", where, extra)
    extra_sel = f", CAST(({extra}) AS VARCHAR) AS extra" if extra else ""
    base = JURY_POINTWISE if at_jury else JUROR_POINTWISE
    return (
        f"SELECT CAST(({grp}) AS VARCHAR) AS grp, item_id, criterion{extra_sel}, avg(score) AS score "
        f"FROM ({base}) base WHERE score IS NOT NULL AND ({where or 'TRUE'}) GROUP BY ALL ORDER BY ALL"
    )


def item_scores(
    con: Connection, run_id: str, *, where: str | None, by: str | None, extra: str | None = None, level: str = "jury"
) -> list[tuple[object, ...]]:
    """(group, item, criterion, [extra], score): the jury's score by the run's rule (or each juror's)."""
    check_run(con, run_id)
    rows = query(con, pointwise_sql(by, where, extra, level), {"run": run_id}, "reading pointwise scores")
    if not rows:
        raise no_valid_scores(con, run_id, "pointwise", where)
    return rows


def item_frame(
    con: Connection, run_id: str, *, where: str | None, by: str | None, extra: str, level: str = "jury"
) -> Any:
    """The same rows as :func:`item_scores` as a DataFrame: grp, item_id, criterion, extra, score."""
    check_run(con, run_id)
    sql = pointwise_sql(by, where, extra, level)
    frame = execute_user_sql(con, sql, {"run": run_id}, what="reading pointwise scores", hint=STATS_HINT).df()
    if frame.empty:
        raise no_valid_scores(con, run_id, "pointwise", where)
    return frame


def group_values(rows: list[tuple[Any, ...]]) -> dict[str, dict[str, NDArray[np.float64]]]:
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for grp, _, crit, score in rows:
        values[crit][grp].append(score)
    return {c: {g: np.array(v, dtype=float) for g, v in gs.items()} for c, gs in values.items()}


def read_baselines(path: Path) -> dict[str, float]:
    from jurybench.store import read_rows

    rows = read_rows(path)
    out = {}
    for number, row in rows:
        if "group" not in row or "value" not in row:
            raise JurybenchError(f"{path}: needs columns group and value (and optionally criterion).")
        try:
            value = as_float(row["value"])
        except (TypeError, ValueError):
            raise JurybenchError(f"{path} row {number}, field 'value': {row['value']!r} is not a number.") from None
        key = str(row["group"]) + (f"|{row['criterion']}" if row.get("criterion") else "")
        out[key] = value
    return out


def stored_baselines(con: Connection, name: str, statistic: str) -> dict[tuple[str, str], float]:
    """Human baselines imported under ``name`` ('jurybench baselines import'): (cell, target) -> value."""
    rows = con.execute(
        "SELECT cell, target, value FROM human_baselines WHERE name = ? AND statistic = ?", [name, statistic]
    ).fetchall()
    if not rows:
        known = [r[0] for r in con.execute("SELECT DISTINCT name FROM human_baselines ORDER BY 1").fetchall()]
        raise JurybenchError(
            f"no {statistic} baselines named '{name}' in the store.",
            hint=f"Import them with 'jurybench baselines import FILE --name {name}'"
            + (f"; stored: {', '.join(known)}." if known else "."),
        )
    return {(str(cell), str(target)): float(value) for cell, target, value in rows}


def pairwise_category(con: Connection, run_id: str, category: str | None) -> str:
    found = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT category FROM jury_pairwise_orders WHERE run_id = ? ORDER BY 1", [run_id]
        ).fetchall()
    ]
    if not found:
        raise JurybenchError(
            f"run '{run_id}' has no pairwise judgments to rank models by.",
            hint="A leaderboard needs a pairwise or preference run over pairs of items.",
        )
    if category is None:
        if len(found) > 1:
            raise JurybenchError(
                f"run '{run_id}' judged {len(found)} categories: say which one to rank by.",
                hint=f"--category {found[0]} (valid: {', '.join(found)}).",
            )
        return str(found[0])
    if category not in found:
        raise JurybenchError(f"--category {category!r} is not one of the run's.", hint=f"Valid: {', '.join(found)}.")
    return category
