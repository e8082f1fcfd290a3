"""cohens-d: the effect of an arm (e.g. gender) on each criterion, anchored to human effect sizes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic, two_values

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

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
    min_gap: Annotated[float, param("Smallest |d - d_human| that counts as deviating.", http={"ge": 0})] = 0.0,
    reorganization_gap: Annotated[float, param("Sub-scale deviation for 'reorganization'.", http={"ge": 0})] = 0.2,
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
) -> dict[str, Any]:
    """Cohen's d (three forms) with bootstrap CIs per cell and criterion, anchored to human baselines.
    ``resample``: ``instances`` (each arm's items, the default) or ``clusters:<expression over the
    item's columns>`` (e.g. ``clusters:prompt``: a drawn prompt brings its items in both arms)."""
    from jurybench.stats._effects import AnchorThresholds
    from jurybench.stats._store_effects import stat_cohens_d, stored_baselines

    stored = stored_baselines(con, baselines, "d") if baselines else None
    return stat_cohens_d(
        con,
        run,
        arm=arm,
        arms=two_values(arms, "arms"),
        where=where,
        by=by,
        baseline_file=baseline_file,
        factor_file=factor_file,
        factors=factors,
        baselines=stored,
        n_boot=boot,
        seed=seed,
        thresholds=AnchorThresholds(min_gap, reorganization_gap),
        level=level,
        resample=resample,
    )
