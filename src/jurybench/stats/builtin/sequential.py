"""sequential: the jury's mean of one criterion with its anytime-valid interval and p-value,
valid however the number of subjects was chosen (``score --until`` stops on what it sees)."""

from __future__ import annotations

import math
from typing import Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection

COLUMNS = [
    "criterion",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "width",
    "value",
    "p_always_valid",
    "fixed_n_low",
    "fixed_n_high",
    "stopped",
    "cluster",
]


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    rows = [[result.get(c) for c in COLUMNS]]
    # A run stopped by separated(...) or gap_excludes(...): each model's or category's interval
    # (alpha split over them), and the gap's, as the rule saw them on everything judged.
    figure = result.get("rule_figure") or {}
    parts = (
        [(g["group"], g) for g in figure.get("groups", [])]
        + [(f"{d['upper']} - {d['lower']}", d) for d in figure.get("differences", [])]
        + [(name, f) for name, f in (figure.get("categories") or {}).items() if f["n"]]
    )
    for name, f in parts:
        rows.append(
            [
                name,
                f["n"],
                f["mean"],
                f["ci_low"],
                f["ci_high"],
                f["ci_high"] - f["ci_low"],
                None,
                None,
                None,
                None,
                "apart" if f.get("apart") else None,
                None,
            ]
        )
    if "gap" in figure:
        rows.append(
            [
                "gap",
                figure["n"],
                figure["gap"],
                figure["ci_low"],
                figure["ci_high"],
                figure["width"],
                result.get("gap_value"),
                None,
                None,
                None,
                result.get("stopped"),
                None,
            ]
        )
    return list(COLUMNS), rows


@statistic("sequential", table=table)
def sequential(
    con: Connection,
    run: params.Run,
    *,
    criterion: Annotated[
        str, param("The criterion (or category) whose jury mean is judged.", http={"min_length": 1, "max_length": 128})
    ],
    value: Annotated[
        float | None, param("The value tested (default: the stopping rule's, else the scale's middle).", number="value")
    ] = None,
    alpha: Annotated[
        float | None,
        param("1 - the interval's level (default: the stopping rule's, else 0.05).", number="alpha"),
    ] = None,
    cluster: Annotated[
        str | None,
        param(
            "The unit observed as one mean: prompt, item or meta.<field> (default: the run's --until-cluster, "
            "else prompt).",
            http={"min_length": 1, "max_length": 200},
        ),
    ] = None,
) -> dict[str, object]:
    """The jury's mean of a criterion with its anytime-valid confidence sequence and always-valid
    p-value (valid under optional stopping: see docs/statistics.md), beside the fixed-n interval
    that stopping early would invalidate; on a run judged with --until, in the order it sampled."""
    from scipy.stats import t

    from jurybench.annotations import run_rubric
    from jurybench.errors import JurybenchError
    from jurybench.stats import anytime

    rubric = run_rubric(con, run)
    if criterion not in rubric.dimensions:
        raise JurybenchError(
            f"{criterion!r} is not a criterion of rubric '{rubric.name}'.",
            hint=f"Valid: {', '.join(rubric.dimensions)}.",
        )
    bounds = rubric.scale_for(criterion)
    if bounds is None or not rubric.answers_in_json:
        raise JurybenchError(f"a {rubric.kind} rubric's answers are labels: there is no mean to bound.")
    low, high = float(bounds[0]), float(bounds[1])
    stopping = anytime.stored_record(con, run)
    legacy = stopping is not None and stopping.get("method") == anytime.LEGACY_METHOD
    seed = int(stopping.get("seed", 0)) if stopping else 0
    unit = anytime.check_cluster(cluster or (stopping or {}).get("cluster") or ("item" if legacy else "prompt"))
    rule_figure = None
    if stopping is not None and stopping.get("kind") in ("separated", "gap_excludes") and not legacy:
        # The rule's own figure on everything judged: the models' (or categories') anytime-valid
        # intervals as the stopping rule used them.
        rule = anytime.StoppingRule(
            stopping["rule"], stopping["kind"], stopping["dimension"], stopping["threshold"], stopping["alpha"]
        )
        scale_low, scale_high = (float(v) for v in stopping["scale"])
        rule_figure = anytime.look_run(con, rubric, rule, run, scale_low, scale_high, unit, seed)
    gap_value = stopping["threshold"] if stopping and stopping.get("kind") == "gap_excludes" else None
    stopping_kept = stopping
    if stopping is not None and stopping["dimension"] != criterion:
        stopping = None  # the recorded looks were at another criterion's figure
    one = anytime.StoppingRule(f"ci_width({criterion})<1", "ci_width", criterion, 1.0)
    values = anytime.streams_of(anytime.run_rows(con, rubric, one, run, unit), one, seed).get("", [])
    if len(values) < 2:
        raise JurybenchError(
            f"run '{run}' has {len(values)} {unit} mean(s) of jury scores for {criterion!r}; the statistic needs 2."
        )
    alpha = alpha if alpha is not None else (stopping["alpha"] if stopping else 0.05)
    if value is None:
        value = stopping["threshold"] if stopping and stopping["kind"] == "excludes" else (low + high) / 2
    if legacy:  # a run recorded with the earlier normal-mixture sequence: read with that method
        rho = float((stopping or stopping_kept or {})["rho"])
        figure = anytime.legacy_look(values, low, high, alpha, rho)
        looks = [(float(k["total"]), int(k["n"])) for k in stopping["looks"]] if stopping else []
        looks.append((sum(values), len(values)))
        p_value = anytime.legacy_p(looks, value, low, high, rho)
        method = anytime.LEGACY_METHOD
    else:
        figure = anytime.look(values, low, high, alpha)
        p_value = anytime.p_value(values, low, high, value)
        method = anytime.METHOD
    mean, n = figure["mean"], figure["n"]
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(t.ppf(1 - alpha / 2, n - 1)) * sd / math.sqrt(n)
    return {
        "criterion": criterion,
        **figure,
        "value": value,
        "alpha": alpha,
        "cluster": unit,
        "p_always_valid": p_value,
        "fixed_n_low": mean - half,
        "fixed_n_high": mean + half,
        "stopped": stopping_kept["stopped"] if stopping_kept else None,
        "rule": stopping_kept["rule"] if stopping_kept else None,
        "rule_figure": rule_figure,
        "gap_value": gap_value,
        "method": method,
    }
