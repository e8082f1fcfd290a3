"""cohens-d: the effect of an arm (e.g. gender) on each criterion, anchored to human effect sizes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic, two_values
from jurybench.stats.params import Connection

if TYPE_CHECKING:
    from numpy.typing import NDArray


COLUMNS = [
    "cell",
    "effect",
    "n_arm1",
    "n_arm2",
    "d_avg",
    "d_avg_low",
    "d_avg_high",
    "d_pooled",
    "d_pooled_low",
    "d_pooled_high",
    "raw",
    "raw_low",
    "raw_high",
    "mean_within_arm_sd",
    "d_human",
    "ratio",
    "baseline_in_ci",
    "pattern",
]


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    rows = []
    for cell, block in result["cells"].items():
        for effect, e in block["effects"].items():
            a = e.get("anchor", {})
            rows.append(
                [
                    cell,
                    effect,
                    *block["n"],
                    *(e[f][k] for f in ("d_avg", "d_pooled", "raw") for k in ("value", "ci_low", "ci_high")),
                    e["mean_within_arm_sd"],
                    a.get("d_human"),
                    a.get("ratio"),
                    a.get("baseline_in_ci"),
                    a.get("pattern"),
                ]
            )
    return list(COLUMNS), rows


@statistic("cohens-d", table=table, plots=("cohens-d",))
def cohens_d(
    con: Connection,
    run: params.Run,
    *,
    arm: params.Arm,
    arms: params.Arms,
    where: params.Where = None,
    by: params.By = None,
    baseline_file: Annotated[
        Path | None, param("CSV criterion,d_human[,cell]: human effect sizes.", faces="cli python")
    ] = None,
    factor_file: Annotated[
        Path | None, param("CSV criterion,factor: sub-scales of each factor.", faces="cli python")
    ] = None,
    baselines: Annotated[
        str | None, param("Stored human d baselines (jurybench baselines import).", http={"max_length": 128})
    ] = None,
    factors: Annotated[
        dict[str, str] | None,
        param("criterion -> factor (the CLI's --factor-file).", faces="http python", http={"max_length": 1000}),
    ] = None,
    min_gap: Annotated[float, param("Smallest |d - d_human| that counts as deviating.", number="amount")] = 0.0,
    reorganization_gap: Annotated[float, param("Sub-scale deviation for 'reorganization'.", number="amount")] = 0.2,
    boot: params.Boot = 2000,
    seed: params.Seed = 0,
    level: params.Level = "jury",
    resample: Annotated[
        str,
        param(
            "Bootstrap unit: instances (each arm's items) or clusters:<expression>, e.g. clusters:prompt.",
            http={"min_length": 1, "max_length": 500},
        ),
    ] = "instances",
) -> dict[str, object]:
    """Cohen's d (three forms) with bootstrap CIs per cell and criterion, anchored to human baselines.
    ``resample``: ``instances`` (each arm's items, the default) or ``clusters:<expression over the
    item's columns>`` (e.g. ``clusters:prompt``: a drawn prompt brings its items in both arms)."""
    # Between the two arms, per cell (--by) and criterion, anchored to human baselines (file:
    # criterion,d_human[,cell], or stored ones) and grouped into factors (file: criterion,factor).
    # A questionnaire run is grouped by its own structure: every facet and factor gets its d (over
    # item means), and a factor's pattern looks at its facets.
    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats import _effects
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import item_frame, stored_baselines

    stored = stored_baselines(con, baselines, "d") if baselines else None
    arm_values = two_values(arms, "arms")
    thresholds = _effects.AnchorThresholds(min_gap, reorganization_gap)
    frame = item_frame(con, run, where=where, by=by or "'all'", extra=arm, level=level)
    cluster_of = _item_clusters(con, run, resample)
    if factor_file or factors:  # criterion -> factor, from a file or given
        factors = {**(_read_factors(factor_file) if factor_file else {}), **(factors or {})}
        groups = {f"factor:{f}": [c for c, g in factors.items() if g == f] for f in sorted(set(factors.values()))}
        subs = dict(groups)
    else:
        groups, subs = inventory_groups(con, run)
    human_d = dict(stored or {})
    if baseline_file:
        human_d.update(_read_d_baselines(baseline_file))
    group_names = sorted(groups)
    out: dict[str, object] = {}
    for cell, cell_frame in frame.groupby("grp", sort=True):
        present = set(cell_frame["extra"].unique())
        missing = [a for a in arm_values if a not in present]
        if missing:
            raise JurybenchError(
                f"cell {cell!r}: no items in arm {missing[0]!r}.", hint=f"Arms present: {', '.join(sorted(present))}."
            )
        criteria = sorted(cell_frame.loc[cell_frame["extra"].isin(arm_values), "criterion"].unique())
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

        a1, a2 = matrix(arm_values[0]), matrix(arm_values[1])
        if len(a1) < 2 or len(a2) < 2:
            raise JurybenchError(
                f"cell {cell!r}: each arm needs at least 2 complete items (got {len(a1)} and {len(a2)})."
            )
        clusters = (
            None if cluster_of is None else tuple([cluster_of.get(str(i), str(i)) for i in kept[a]] for a in arm_values)
        )
        d = _effects.cohens_d_cells(a1, a2, n_boot=boot, seed=seed, clusters=clusters)  # type: ignore[arg-type]
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
            entry["mean_within_arm_sd"] = _effects.mean_within_group_sd(
                {arm_values[0]: a1[:, j], arm_values[1]: a2[:, j]}
            )
            # A cell's own baseline, else that of its --by value (juror level: "juror / value"), else every cell's.
            human = next(
                (human_d[(c, n)] for c in (cell, str(cell).rsplit(" / ", 1)[-1], "") if (c, n) in human_d), None
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
        "jury": jury_coverage(con, run, "jury_pointwise"),
        "arm": arm,
        "arms": list(arm_values),
        "thresholds": vars(thresholds),
        "cells": out,
    }


def inventory_groups(con: Connection, run_id: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """For a questionnaire run: facet:<name> and factor:<name> -> their items, and factor -> its facets."""
    from collections import defaultdict

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


def _item_clusters(con: Connection, run_id: str, resample: str) -> dict[str, str] | None:
    """Each item's cluster for ``--resample clusters:<expression over the item's columns>``
    (None: ``instances``, each arm's items drawn alone)."""
    from jurybench.stats.sql import STATS_HINT, resample_unit
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


def _read_factors(path: Path) -> dict[str, str]:

    from jurybench.errors import JurybenchError
    from jurybench.store import read_rows

    out = {}
    for number, row in read_rows(path):
        if not row.get("criterion") or not row.get("factor"):
            raise JurybenchError(f"{path} row {number}: needs criterion and factor.")
        out[str(row["criterion"])] = str(row["factor"])
    return out


def _read_d_baselines(path: Path) -> dict[tuple[str, str], float]:

    from jurybench.errors import JurybenchError
    from jurybench.store import as_float, read_rows

    out = {}
    for number, row in read_rows(path):
        if "criterion" not in row or "d_human" not in row:
            raise JurybenchError(f"{path}: needs columns criterion and d_human (and optionally cell).")
        try:
            out[(str(row.get("cell") or ""), str(row["criterion"]))] = as_float(row["d_human"])
        except (TypeError, ValueError):
            raise JurybenchError(f"{path} row {number}, field 'd_human': {row['d_human']!r} is not a number.") from None
    return out
