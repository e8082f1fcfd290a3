"""Statistics over the store: read judgments for a run (filtered and grouped with SQL),
call the pure functions, and record every result with its parameters and seed.

Scores come from the jury views, so every statistic uses the run's one jury rule:
``level="jury"`` (the default) reads ``jury_pairwise`` / ``jury_pointwise`` (subjects
below quorum are left out and counted); ``level="juror"`` reads ``juror_pairwise`` /
``juror_pointwise`` and makes each juror a group of its own (joined with --by).
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from jurybench.errors import JurybenchError
from jurybench.stats import _pairwise, _pointwise
from jurybench.stats._slices import Coverage, drop_temp, jury_coverage, run_slices, slices_of
from jurybench.store import as_float, execute_user_sql, expression

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray

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


def _query(con: Connection, sql: str, params: dict[str, Any], what: str) -> list[tuple[Any, ...]]:
    return list(execute_user_sql(con, sql, params, what=what, hint=STATS_HINT).fetchall())


def _fragments(group: str, where: str | None, extra: str | None = None) -> tuple[str, str | None]:
    """User --by / --where (and --arm / --block) parsed as single expressions, never statements."""
    if extra is not None:
        expression(extra, option="--arm/--block")
    return expression(group, option="--by"), (expression(where, option="--where") if where else None)


def _check_run(con: Connection, run_id: str) -> None:
    if not con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
        known = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 8").fetchall()]
        raise JurybenchError(f"no run '{run_id}'.", hint=f"Runs: {', '.join(known) or 'none'}.")


def _pairwise_rows(
    con: Connection, run_id: str, *, group: str, columns: str, where: str | None
) -> list[tuple[Any, ...]]:
    """(group, *columns) rows of the run's single-sample pairwise verdicts (both orders side by side)."""
    _check_run(con, run_id)
    group, where = _fragments(group, where)
    sql = f"SELECT CAST(({group}) AS VARCHAR) AS grp, {columns} FROM ({PAIRWISE_BASE}) base WHERE ({where or 'TRUE'})"
    return _query(con, sql, {"run": run_id}, "reading pairwise scores")


def epsilon_matrices(
    con: Connection, run_id: str, *, where: str | None, by: str | None, level: str = "jury"
) -> tuple[dict[str, NDArray[np.float64]], list[str], dict[str, list[str]]]:
    """Per group: pairs x categories of the symmetrized score, the jury's (by its rule) or each juror's."""
    _check_run(con, run_id)
    group, at_jury = _level(level, by)
    grp, where = _fragments(group or "'all'", where)
    base = JURY_PAIRWISE if at_jury else JUROR_PAIRWISE
    sql = (
        f"SELECT CAST(({grp}) AS VARCHAR) AS grp, pair_id, category, avg(epsilon) FROM ({base}) base "
        f"WHERE epsilon IS NOT NULL AND ({where or 'TRUE'}) GROUP BY ALL"
    )
    rows = _query(con, sql, {"run": run_id}, "reading symmetrized scores")
    if not rows:
        raise JurybenchError(
            f"run '{run_id}' has no valid symmetrized pairwise scores{f' where {where}' if where else ''}."
        )
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


def stat_directional(
    con: Connection,
    run_id: str,
    *,
    where: str | None = None,
    by: str | None = None,
    zero_method: str = "wilcox",
    level: str = "jury",
) -> dict[str, Any]:
    matrices, categories, _ = epsilon_matrices(con, run_id, where=where, by=by, level=level)
    return {
        "level": level,
        "jury": jury_coverage(con, run_id, "jury_pairwise"),
        "groups": {
            g: {
                "n_pairs": int(m.shape[0]),
                "no_difference_share": _pairwise.no_difference_share(m),
                "categories": _pairwise.directional_differences(m, categories, zero_method=zero_method),
            }
            for g, m in matrices.items()
        },
    }


def resample_unit(resample: str, named: dict[str, str | None], hint: str) -> str | None:
    """The SQL expression naming each row's bootstrap cluster for ``--resample``: a named unit's
    own (None: every row alone), or the checked expression of ``clusters:<expression>``."""
    if resample in named:
        return named[resample]
    kind, _, expr = resample.partition(":")
    if kind != "clusters" or not expr.strip():
        raise JurybenchError(f"--resample {resample!r} is not valid.", hint=hint)
    return str(expression(expr, option="--resample"))


def _clusters(con: Connection, run_id: str, resample: str, pair_ids: dict[str, list[str]]) -> dict[str, Any] | None:
    """Each group's cluster label per pair for ``--resample clusters:<expression>`` (None: pairs)."""
    column = resample_unit(
        resample,
        {"pairs": None, "instances": None},
        "Valid: pairs (the default), or clusters:<SQL expression over the pair columns>, e.g. clusters:prompt.",
    )
    if column is None:
        return None
    sql = f"SELECT DISTINCT pair_id, CAST(({column}) AS VARCHAR) FROM ({JURY_PAIRWISE}) base"
    label = dict(_query(con, sql, {"run": run_id}, "reading the resampling clusters"))
    return {g: np.array([str(label.get(p)) for p in ids]) for g, ids in pair_ids.items()}


def stat_gap(
    con: Connection,
    run_id: str,
    *,
    where: str | None = None,
    by: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: str = "jury",
    resample: str = "pairs",
) -> dict[str, Any]:
    matrices, categories, pair_ids = epsilon_matrices(con, run_id, where=where, by=by, level=level)
    clusters = _clusters(con, run_id, resample, pair_ids)
    results, pmatrix = _pairwise.treatment_gaps(matrices, n_boot=n_boot, seed=seed, clusters=clusters)
    out = {
        "level": level,
        "jury": jury_coverage(con, run_id, "jury_pairwise"),
        "categories": categories,
        "gaps": [vars(r) for r in results],
        "bootstrap_p": pmatrix,
        "resample": resample,
    }
    if clusters:
        out["n_clusters"] = {g: len(set(c)) for g, c in clusters.items()}
    return out


def stat_consistency(
    con: Connection, run_id: str, *, where: str | None = None, by: str | None = None
) -> dict[str, Any]:
    group = by or "juror"
    rows = _pairwise_rows(con, run_id, group=group, columns="score_ab, score_ba, status", where=where)
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
        matrices, _, _ = epsilon_matrices(con, run_id, where=where, by=None, level="juror")
    else:
        matrices, _, _ = epsilon_matrices(con, run_id, where=where, by=by, level="jury")
    return {
        "positional_consistency": out,
        "no_difference_share": {g: _pairwise.no_difference_share(m) for g, m in matrices.items()},
    }


def stat_robustness(con: Connection, run_id: str, *, other_run: str, where: str | None = None) -> dict[str, Any]:
    first = stat_directional(con, run_id, where=where)["groups"]["all"]["categories"]
    second = stat_directional(con, other_run, where=where)["groups"]["all"]["categories"]
    d1 = {r["category"]: r["D"] for r in first}
    d2 = {r["category"]: r["D"] for r in second}
    common = sorted(set(d1) & set(d2))
    return {
        "categories": common,
        **_pairwise.robustness(np.array([d1[c] for c in common]), np.array([d2[c] for c in common])),
    }


def _pointwise_sql(by: str | None, where: str | None, extra: str | None, level: str) -> str:
    group, at_jury = _level(level, by or ("model" if level == "jury" else None))
    grp, where = _fragments(group or "model", where, extra)
    extra_sel = f", CAST(({extra}) AS VARCHAR) AS extra" if extra else ""
    base = JURY_POINTWISE if at_jury else JUROR_POINTWISE
    return (
        f"SELECT CAST(({grp}) AS VARCHAR) AS grp, item_id, criterion{extra_sel}, avg(score) AS score "
        f"FROM ({base}) base WHERE score IS NOT NULL AND ({where or 'TRUE'}) GROUP BY ALL"
    )


def item_scores(
    con: Connection, run_id: str, *, where: str | None, by: str | None, extra: str | None = None, level: str = "jury"
) -> list[tuple[Any, ...]]:
    """(group, item, criterion, [extra], score): the jury's score by the run's rule (or each juror's)."""
    _check_run(con, run_id)
    rows = _query(con, _pointwise_sql(by, where, extra, level), {"run": run_id}, "reading pointwise scores")
    if not rows:
        raise JurybenchError(f"run '{run_id}' has no valid pointwise scores{f' where {where}' if where else ''}.")
    return rows


def item_frame(
    con: Connection, run_id: str, *, where: str | None, by: str | None, extra: str, level: str = "jury"
) -> Any:
    """The same rows as :func:`item_scores` as a DataFrame: grp, item_id, criterion, extra, score."""
    _check_run(con, run_id)
    sql = _pointwise_sql(by, where, extra, level)
    frame = execute_user_sql(con, sql, {"run": run_id}, what="reading pointwise scores", hint=STATS_HINT).df()
    if frame.empty:
        raise JurybenchError(f"run '{run_id}' has no valid pointwise scores{f' where {where}' if where else ''}.")
    return frame


def stat_friedman(
    con: Connection,
    run_id: str,
    *,
    where: str | None = None,
    by: str | None = None,
    block: str = "prompt",
    level: str = "jury",
) -> dict[str, Any]:
    """Friedman with post-hoc tests per criterion over blocks x groups. The block means are
    computed in DuckDB, for a big run one slice of its subjects at a time (:func:`run_slices`),
    so DuckDB's hash tables hold one slice's subjects, never the run's; each slice's sums and
    counts per (criterion, block, group) are added up in DuckDB too (folded as they come, so
    they hold at most two rows per cell: a block's subjects fall in many slices), and only the block x
    group matrix of each criterion reaches Python, as arrays."""
    _check_run(con, run_id)
    if where:
        expression(where, option="--where")  # checked alone before it is combined with the criterion
    coverage = Coverage(con, run_id, "jury_pointwise")
    parts = slices_of(con, run_id, len(coverage.dimensions))
    inner = _pointwise_sql(by, where, block, level)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _jb_cells (criterion VARCHAR, blk VARCHAR, grp VARCHAR, total DOUBLE, n BIGINT)"
    )
    folded, added = 0, 0  # rows of _jb_cells when last folded, and added since
    try:
        # At the jury level the coverage and the statistic both read the slice's jury scores.
        with run_slices(con, run_id, parts, jury_read_twice=level == "jury") as only:
            for part in range(parts):
                with only(part):
                    coverage.add(con, whole=parts == 1)
                    inserted = execute_user_sql(
                        con,
                        f"INSERT INTO _jb_cells SELECT criterion, extra, grp, "
                        f"sum(score), count(score) FROM ({inner}) GROUP BY ALL",
                        {"run": run_id},
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
        raise JurybenchError(f"run '{run_id}' has no valid pointwise scores{f' where {where}' if where else ''}.")
    return {"level": level, "jury": coverage.result(con), "block": block, "criteria": out}


def _group_values(rows: list[tuple[Any, ...]]) -> dict[str, dict[str, NDArray[np.float64]]]:
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for grp, _, crit, score in rows:
        values[crit][grp].append(score)
    return {c: {g: np.array(v, dtype=float) for g, v in gs.items()} for c, gs in values.items()}


def stat_ttest(
    con: Connection,
    run_id: str,
    *,
    where: str | None = None,
    by: str | None = None,
    baseline: float | None = None,
    baseline_file: Path | None = None,
    stored: dict[tuple[str, str], float] | None = None,
    level: str = "jury",
) -> dict[str, Any]:
    """One-sample t-test of each group's item scores against a baseline (one value, or per group)."""
    values = _group_values(item_scores(con, run_id, where=where, by=by, level=level))
    baselines = _read_baselines(baseline_file) if baseline_file else {}
    for (cell, target), value in (stored or {}).items():
        baselines[f"{cell}|{target}" if target else cell] = value
    if baseline is None and not baselines:
        raise JurybenchError("ttest needs --baseline VALUE or --baseline-file FILE (group,value).")
    out: dict[str, Any] = {}
    for crit, groups in sorted(values.items()):
        out[crit] = {}
        for grp, x in sorted(groups.items()):
            b = baselines.get(grp, baselines.get(f"{grp}|{crit}", baseline))
            if b is not None:
                out[crit][grp] = _pointwise.one_sample_t(x, float(b))
    return {"level": level, "jury": jury_coverage(con, run_id, "jury_pointwise"), "criteria": out}


def stat_compare(
    con: Connection,
    run_id: str,
    *,
    test: str,
    groups: tuple[str, str],
    where: str | None = None,
    by: str | None = None,
    level: str = "jury",
) -> dict[str, Any]:
    values = _group_values(item_scores(con, run_id, where=where, by=by, level=level))
    out: dict[str, Any] = {}
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


def stat_kendall(
    con: Connection,
    run_id: str,
    *,
    baseline_file: Path | None = None,
    reference: dict[str, float] | None = None,
    where: str | None = None,
    by: str | None = None,
    level: str = "jury",
) -> dict[str, Any]:
    """Kendall tau between the groups' mean scores and a reference (a file group,value, or a mapping)."""
    if (baseline_file is None) == (reference is None):
        raise JurybenchError("kendall needs a reference ranking: a baseline file or group values, one of them.")
    values = _group_values(item_scores(con, run_id, where=where, by=by, level=level))
    reference = _read_baselines(baseline_file) if baseline_file is not None else dict(reference or {})
    source = str(baseline_file) if baseline_file is not None else "the reference"
    out = {}
    for crit, by_group in sorted(values.items()):
        common = sorted(set(by_group) & set(reference))
        if len(common) < 3:
            raise JurybenchError(f"Kendall tau needs at least 3 groups present in {source}; found {len(common)}.")
        out[crit] = {
            **_pointwise.kendall_rankings(
                np.array([by_group[g].mean() for g in common]), np.array([reference[g] for g in common])
            ),
            "groups": common,
        }
    return {"level": level, "jury": jury_coverage(con, run_id, "jury_pointwise"), "criteria": out}


def _read_baselines(path: Path) -> dict[str, float]:
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


def record_result(
    con: Connection, name: str, run_id: str | None, params: dict[str, Any], seed: int | None, result: dict[str, Any]
) -> str:
    result_id = uuid.uuid4().hex
    con.execute(
        "INSERT INTO stats_results (result_id, name, run_id, params, seed, result) VALUES (?, ?, ?, ?, ?, ?)",
        [result_id, name, run_id, json.dumps(params, default=str), seed, json.dumps(jsonable(result))],
    )
    return result_id


@overload
def jsonable(value: Mapping[str, object]) -> dict[str, object]: ...
@overload
def jsonable(value: object) -> object: ...
def jsonable(value: object) -> object:
    """``value`` as JSON takes it: numpy arrays and numbers as Python's, NaN and infinities as None."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, float | np.floating):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value
