"""Effect sizes over the store: Cohen's d anchored to human baselines, item-level Spearman
between conditions, and accuracy disparity across groups (Gini, max-min gaps)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jurybench.errors import JurybenchError
from jurybench.stats import _disparity, _effects
from jurybench.stats._slices import jury_coverage
from jurybench.stats._store import item_frame
from jurybench.store import as_float, check_query, execute_user_sql, read_only_transaction

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray


def inventory_groups(con: Connection, run_id: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """For a questionnaire run: facet:<name> and factor:<name> -> their items, and factor -> its facets."""
    rows = con.execute(
        """SELECT s.dimension, s.facet, s.factor FROM inventory_structure s JOIN runs r USING (rubric_hash)
           WHERE r.run_id = ? ORDER BY s.dimension""",
        [run_id],
    ).fetchall()
    groups: dict[str, list[str]] = defaultdict(list)
    subs: dict[str, list[str]] = defaultdict(list)
    for dimension, facet, factor in rows:
        groups[f"facet:{facet}"].append(dimension)
        if factor:
            groups[f"factor:{factor}"].append(dimension)
            if f"facet:{facet}" not in subs[f"factor:{factor}"]:
                subs[f"factor:{factor}"].append(f"facet:{facet}")
    return dict(groups), dict(subs)


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


def _item_clusters(con: Connection, run_id: str, resample: str) -> dict[str, str] | None:
    """Each item's cluster for ``--resample clusters:<expression over the item's columns>``
    (None: ``instances``, each arm's items drawn alone)."""
    from jurybench.stats._store import STATS_HINT, resample_unit
    from jurybench.store import execute_user_sql

    column = resample_unit(
        resample,
        {"instances": None},
        "Valid: instances (the default), or clusters:<expression over the item's columns>, e.g. clusters:prompt.",
    )
    if column is None:
        return None
    rows = execute_user_sql(
        con,
        f"SELECT i.item_id, CAST(({column}) AS VARCHAR) FROM items i WHERE i.item_id IN "
        "(SELECT subject_id FROM run_subjects WHERE run_id = $run AND subject_kind = 'item')",
        {"run": run_id},
        what="reading the resampling clusters",
        hint=STATS_HINT,
    ).fetchall()
    return {str(i): str(c) for i, c in rows}


def stat_cohens_d(
    con: Connection,
    run_id: str,
    *,
    arm: str,
    arms: tuple[str, str],
    where: str | None = None,
    by: str | None = None,
    baseline_file: Path | None = None,
    factor_file: Path | None = None,
    factors: dict[str, str] | None = None,
    baselines: dict[tuple[str, str], float] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    thresholds: _effects.AnchorThresholds | None = None,
    level: str = "jury",
    resample: str = "instances",
) -> dict[str, Any]:
    """Cohen's d (three forms, bootstrap CIs) between two arms, per cell (--by) and criterion,
    anchored to human baselines (file: criterion,d_human[,cell], or stored ones) and grouped into
    factors (file: criterion,factor). A questionnaire run is grouped by its own structure: every
    facet and factor gets its d (over item means), and a factor's pattern looks at its facets."""
    thresholds = thresholds or _effects.AnchorThresholds()
    frame = item_frame(con, run_id, where=where, by=by or "'all'", extra=arm, level=level)
    cluster_of = _item_clusters(con, run_id, resample)
    if factor_file or factors:  # criterion -> factor, from a file or given
        factors = {**(_read_factors(factor_file) if factor_file else {}), **(factors or {})}
        groups = {f"factor:{f}": [c for c, g in factors.items() if g == f] for f in sorted(set(factors.values()))}
        subs = dict(groups)
    else:
        groups, subs = inventory_groups(con, run_id)
    baselines = dict(baselines or {})
    if baseline_file:
        baselines.update(_read_d_baselines(baseline_file))
    group_names = sorted(groups)
    out: dict[str, Any] = {}
    for cell, cell_frame in frame.groupby("grp", sort=True):
        present = set(cell_frame["extra"].unique())
        missing = [a for a in arms if a not in present]
        if missing:
            raise JurybenchError(
                f"cell {cell!r}: no items in arm {missing[0]!r}.", hint=f"Arms present: {', '.join(sorted(present))}."
            )
        criteria = sorted(cell_frame.loc[cell_frame["extra"].isin(arms), "criterion"].unique())
        names = criteria + group_names

        kept: dict[str, list[object]] = {}

        def matrix(
            arm_name: str,
            cell_frame: Any = cell_frame,
            criteria: list[str] = criteria,
            kept: dict[str, list[object]] = kept,
        ) -> NDArray[np.float64]:
            wide = cell_frame[cell_frame["extra"] == arm_name].pivot(
                index="item_id", columns="criterion", values="score"
            )
            wide = wide.reindex(columns=criteria)
            columns = [wide.to_numpy(dtype=float)]
            for group in group_names:
                members = [c for c in groups[group] if c in wide.columns]
                with np.errstate(all="ignore"):
                    columns.append(
                        np.nanmean(wide[members].to_numpy(dtype=float), axis=1, keepdims=True)
                        if members
                        else np.full((len(wide), 1), np.nan)
                    )
            m = np.hstack(columns)
            complete = ~np.isnan(m).any(axis=1)
            kept[arm_name] = [i for i, ok in zip(wide.index, complete, strict=True) if ok]
            return np.asarray(m[complete], dtype=float)

        a1, a2 = matrix(arms[0]), matrix(arms[1])
        if len(a1) < 2 or len(a2) < 2:
            raise JurybenchError(
                f"cell {cell!r}: each arm needs at least 2 complete items (got {len(a1)} and {len(a2)})."
            )
        clusters = (
            None if cluster_of is None else tuple([cluster_of.get(str(i), str(i)) for i in kept[a]] for a in arms)
        )
        d = _effects.cohens_d_cells(a1, a2, n_boot=n_boot, seed=seed, clusters=clusters)  # type: ignore[arg-type]
        cell_out: dict[str, Any] = {"n": [len(a1), len(a2)], "effects": {}}
        if clusters is not None:
            cell_out["n_clusters"] = len(set(clusters[0]) | set(clusters[1]))
        for j, n in enumerate(names):
            entry: dict[str, Any] = {
                form: {
                    "value": float(d[form]["value"][j]),
                    "ci_low": float(d[form]["low"][j]),
                    "ci_high": float(d[form]["high"][j]),
                }
                for form in _effects.FORMS
            }
            entry["mean_within_arm_sd"] = _effects.mean_within_group_sd({arms[0]: a1[:, j], arms[1]: a2[:, j]})
            # A cell's own baseline, else that of its --by value (juror level: "juror / value"), else every cell's.
            human = next(
                (baselines[(c, n)] for c in (cell, str(cell).rsplit(" / ", 1)[-1], "") if (c, n) in baselines), None
            )
            if human is not None:
                f = entry["d_avg"]
                entry["anchor"] = _effects.anchor(f["value"], f["ci_low"], f["ci_high"], human, thresholds)
            cell_out["effects"][n] = entry
        for group, members in subs.items():
            anchor = cell_out["effects"].get(group, {}).get("anchor")
            found = [cell_out["effects"][m]["anchor"] for m in members if "anchor" in cell_out["effects"].get(m, {})]
            if anchor and found:
                anchor["pattern"] = _effects.factor_pattern(anchor, found, thresholds)
        out[cell] = cell_out
    return {
        "level": level,
        "jury": jury_coverage(con, run_id, "jury_pointwise"),
        "arm": arm,
        "arms": list(arms),
        "thresholds": vars(thresholds),
        "cells": out,
    }


def stat_item_spearman(
    con: Connection,
    run_id: str,
    *,
    arm: str,
    arms: tuple[str, str],
    by: str,
    where: str | None = None,
    key_file: Path | None = None,
    level: str = "jury",
    keys: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Per condition (--by), each item's keyed difference mean(first arm) - mean(second arm)
    (times its key, +1 or -1, from criterion,key or given); Spearman between conditions over items."""
    frame = item_frame(con, run_id, where=where, by=by, extra=arm, level=level)
    keys = dict(keys or {})
    if key_file is not None:
        from jurybench.store import read_rows

        for number, row in read_rows(key_file):
            try:
                keys[str(row["criterion"])] = as_float(row["key"])
            except (KeyError, TypeError, ValueError):
                raise JurybenchError(f"{key_file} row {number}: needs criterion and a numeric key (1 or -1).") from None
    means = frame[frame["extra"].isin(arms)].groupby(["grp", "criterion", "extra"])["score"].mean().unstack("extra")
    missing = [a for a in arms if a not in means.columns]
    if missing:
        raise JurybenchError(
            f"no items in arm {missing[0]!r}.", hint=f"Arms present: {', '.join(sorted(frame['extra'].unique()))}."
        )
    diff = (means[arms[0]] - means[arms[1]]).unstack("grp")
    if diff.shape[1] < 2:
        raise JurybenchError(f"item-level Spearman needs at least 2 conditions from --by; found {diff.shape[1]}.")
    factor = np.array([keys.get(c, 1.0) for c in diff.index])
    keyed = {str(g): diff[g].to_numpy(dtype=float) * factor for g in diff.columns}
    return {
        "level": level,
        "jury": jury_coverage(con, run_id, "jury_pointwise"),
        "conditions": list(keyed),
        "items": [str(i) for i in diff.index],
        "keyed_differences": keyed,
        "correlations": _effects.item_level_spearman(keyed),
    }


def _read_factors(path: Path) -> dict[str, str]:
    from jurybench.store import read_rows

    out = {}
    for number, row in read_rows(path):
        if not row.get("criterion") or not row.get("factor"):
            raise JurybenchError(f"{path} row {number}: needs criterion and factor.")
        out[str(row["criterion"])] = str(row["factor"])
    return out


def _read_d_baselines(path: Path) -> dict[tuple[str, str], float]:
    from jurybench.store import read_rows

    out = {}
    for number, row in read_rows(path):
        if "criterion" not in row or "d_human" not in row:
            raise JurybenchError(f"{path}: needs columns criterion and d_human (and optionally cell).")
        try:
            out[(str(row.get("cell") or ""), str(row["criterion"]))] = as_float(row["d_human"])
        except (TypeError, ValueError):
            raise JurybenchError(f"{path} row {number}, field 'd_human': {row['d_human']!r} is not a number.") from None
    return out


def stat_disparity(
    con: Connection,
    *,
    sql: str | None = None,
    file: Path | None = None,
    max_invalid_rate: float | None = 0.10,
    reference: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    resample: str = "instances",
) -> dict[str, Any]:
    """Classification disparity from a query or file with columns grp, category, correct, invalid
    (and optionally model: then one result per model)."""
    if (sql is None) == (file is None):
        raise JurybenchError(
            "disparity needs exactly one of --sql QUERY or --file FILE (columns grp, category, correct, invalid)."
        )
    if sql is not None:
        check_query(con, sql, what="--sql")
        with read_only_transaction(con):
            cursor = execute_user_sql(con, sql, what="--sql")
            names = [d[0] for d in cursor.description]
            records = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    else:
        from jurybench.store import read_rows

        assert file is not None
        records = [r for _, r in read_rows(file)]
    required = {"grp", "category", "correct", "invalid"}
    if not records or not required <= set(records[0]):
        raise JurybenchError(f"disparity input needs columns {', '.join(sorted(required))}.")

    def truthy(v: Any) -> bool:
        return str(v).strip().lower() in ("1", "true", "t", "yes")

    column = resample.partition(":")[2] if resample.startswith("clusters:") else None
    if column is not None and column not in records[0]:
        raise JurybenchError(
            f"--resample {resample}: the input has no column {column!r}.", hint=f"Columns: {', '.join(records[0])}."
        )

    def one(rows: list[dict[str, Any]]) -> dict[str, Any]:
        return _disparity.disparity(
            [str(r["grp"]) for r in rows],
            [str(r["category"]) for r in rows],
            np.array([truthy(r["correct"]) for r in rows]),
            np.array([truthy(r["invalid"]) for r in rows]),
            max_invalid_rate=max_invalid_rate,
            reference=reference,
            n_boot=n_boot,
            seed=seed,
            resample=resample,
            clusters=[str(r[column]) for r in rows] if column else None,
        )

    if "model" not in records[0]:
        return one(records)
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_model[str(r["model"])].append(r)
    return {"models": {m: one(rows) for m, rows in sorted(by_model.items())}}
