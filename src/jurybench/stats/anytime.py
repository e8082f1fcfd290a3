"""Anytime-valid inference for sequential judging: a confidence sequence for a bounded mean.

A jury score lies in a known range [a, b] (the rubric's scale: 1..5, -k..k, -1..1), so each
subject's score is sub-Gaussian with variance proxy sigma^2 = ((b - a) / 2)^2 (Hoeffding's
lemma). For n such scores with mean m, the two-sided normal-mixture boundary (Robbins 1970;
Howard, Ramdas, McAuliffe and Sekhon 2021) gives the confidence sequence

    m +- sqrt((n sigma^2 + rho) * log((n sigma^2 + rho) / (rho * alpha^2))) / n,

which covers the true mean at every n at once with probability at least 1 - alpha (Ville's
inequality on the mixture martingale). So a study may look after every batch and stop the first
time the interval is narrow enough, or excludes a value, and the final interval is still valid:
optional stopping does not inflate false positives. The price is width: about 1.5-2 times a
fixed-n interval. ``rho`` only moves where the boundary is tightest; jurybench tunes it to half
the subjects available (any rho > 0 is valid). The always-valid p-value for a value v is
min(1, 1 / max over looks of the mixture martingale at v).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

METHOD = "normal-mixture confidence sequence for a bounded mean (Robbins 1970; Howard et al. 2021)"
_NAME = r"\s*([\w-]+)\s*"
_NUMBER = r"\s*(-?[0-9]*\.?[0-9]+)\s*"
_RULES = {
    "ci_width": re.compile(rf"^\s*ci_width\({_NAME}\)\s*<{_NUMBER}$"),
    "excludes": re.compile(rf"^\s*excludes\({_NAME},{_NUMBER}\)\s*$"),
    "separated": re.compile(rf"^\s*separated\({_NAME}\)\s*$"),
    "gap_excludes": re.compile(rf"^\s*gap_excludes\({_NUMBER}\)\s*$"),
}
RULE_HELP = (
    "ci_width(CRITERION)<WIDTH, excludes(CRITERION,VALUE), separated(CRITERION) (every model's mean "
    "apart from the next: a settled leaderboard) or gap_excludes(VALUE) (pairwise: the treatment gap "
    "G = sum of |category means| decided against VALUE), e.g. 'ci_width(coherence)<0.5' or "
    "'gap_excludes(0)'"
)


@dataclass(frozen=True)
class StoppingRule:
    """When sequential judging stops:

    - ``ci_width(DIM)<W``: the confidence sequence for the jury's mean of DIM is narrower than W;
    - ``excludes(DIM,V)``: it excludes V (the sign, or the difference from V, is decided);
    - ``separated(DIM)``: a leaderboard is settled: the subjects' models, ranked by their jury
      mean of DIM, each have a confidence sequence (alpha split over the models) apart from the
      next one's;
    - ``gap_excludes(V)``: pairwise rubrics: the confidence sequence for the treatment gap
      G = sum over categories of |jury mean| (each category's at alpha split over the categories)
      excludes V (V = 0: a gap is shown).
    """

    text: str
    kind: str
    dimension: str  # "" for gap_excludes (every category)
    threshold: float | None  # None for separated
    alpha: float = 0.05


def is_rule(text: str) -> bool:
    """Whether ``text`` has the form of a stopping rule (its criterion is checked against the rubric later)."""
    return any(r.match(text or "") for r in _RULES.values())


def parse_rule(text: str, dimensions: list[str], alpha: float = 0.05) -> StoppingRule:
    """A stopping rule from its text, checked against the rubric's dimensions; one line on error."""
    kind, found = next(((k, m) for k, r in _RULES.items() if (m := r.match(text or ""))), ("", None))
    if found is None:
        raise JurybenchError(f"--until {text!r} is not a stopping rule.", hint=f"Use {RULE_HELP}.")
    groups = found.groups()
    dimension = "" if kind == "gap_excludes" else groups[0]
    value = {"ci_width": groups[-1], "excludes": groups[-1], "gap_excludes": groups[0]}.get(kind)
    if kind != "gap_excludes" and dimension not in dimensions:
        raise JurybenchError(
            f"--until: {dimension!r} is not a criterion of the rubric.", hint=f"Valid: {', '.join(dimensions)}."
        )
    if not 0 < alpha < 1:
        raise JurybenchError(f"--until-alpha must be between 0 and 1 (got {alpha}).")
    threshold = float(value) if value is not None else None
    if kind == "ci_width" and threshold is not None and threshold <= 0:
        raise JurybenchError("--until: a width must be above 0.")
    return StoppingRule(text.strip(), kind, dimension, threshold, alpha)


def rho_for(planned: int, sigma: float, alpha: float) -> float:
    """The mixture's rho, tuned so the boundary is tightest near half the planned subjects
    (Howard et al.'s approximate optimum for intrinsic time V = sigma^2 n)."""
    v = sigma * sigma * max(1.0, planned / 2)
    return v / max(1.0, 2 * math.log(1 / alpha) + math.log(1 + 2 * math.log(1 / alpha)))


def radius(n: int, sigma: float, alpha: float, rho: float) -> float:
    """Half the width of the confidence sequence after n scores (infinite before the first)."""
    if n < 1:
        return math.inf
    v = n * sigma * sigma + rho
    return math.sqrt(v * math.log(v / (rho * alpha * alpha))) / n


def log_martingale(total: float, n: int, value: float, sigma: float, rho: float) -> float:
    """log of the normal-mixture martingale for mean ``value`` after n scores summing to total."""
    s = total - n * value
    v = n * sigma * sigma
    return 0.5 * math.log(rho / (v + rho)) + s * s / (2 * (v + rho))


def look(values: list[float], low: float, high: float, alpha: float, rho: float) -> dict[str, Any]:
    """The confidence sequence after ``values``: n, mean, interval and its width."""
    sigma = (high - low) / 2
    n = len(values)
    mean = sum(values) / n if n else math.nan
    r = radius(n, sigma, alpha, rho)
    lo, hi = (max(low, mean - r), min(high, mean + r)) if n else (low, high)
    return {"n": n, "mean": mean, "ci_low": lo, "ci_high": hi, "width": hi - lo}


def look_groups(groups: dict[str, list[float]], low: float, high: float, alpha: float, rho: float) -> dict[str, Any]:
    """Each group's confidence sequence at ``alpha`` split over the groups (so all hold at once),
    ranked by mean, and whether each is apart from the next (``separated``); with the pooled
    look's n, mean and interval."""
    share = alpha / max(len(groups), 1)
    ranked = sorted(
        ((name, look(values, low, high, share, rho)) for name, values in groups.items()),
        key=lambda item: (-item[1]["mean"] if item[1]["n"] else math.inf, item[0]),
    )
    apart = len(ranked) >= 2 and all(
        upper[1]["n"] and lower[1]["n"] and upper[1]["ci_low"] > lower[1]["ci_high"]
        for upper, lower in itertools.pairwise(ranked)
    )
    pooled = [v for values in groups.values() for v in values]
    return {
        **look(pooled, low, high, alpha, rho),
        "total": sum(pooled),
        "separated": bool(apart),
        "groups": [{"group": name, **figure} for name, figure in ranked],
    }


def look_gap(categories: dict[str, list[float]], low: float, high: float, alpha: float, rho: float) -> dict[str, Any]:
    """The treatment gap G = sum over categories of |mean| with a confidence sequence: each
    category's at ``alpha`` split over the categories, so all hold at once, and G's bounds are its
    least and greatest value over their box (a category whose interval holds 0 adds 0 at least)."""
    share = alpha / max(len(categories), 1)
    figures = {name: look(values, low, high, share, rho) for name, values in categories.items()}
    present = [f for f in figures.values() if f["n"]]
    n = min((f["n"] for f in figures.values()), default=0)
    gap = sum(abs(f["mean"]) for f in present)
    gap_low = sum(
        0.0 if f["ci_low"] <= 0 <= f["ci_high"] else min(abs(f["ci_low"]), abs(f["ci_high"])) for f in present
    )
    gap_high = sum(max(abs(f["ci_low"]), abs(f["ci_high"])) for f in present)
    if len(present) < len(figures):  # a category with no score yet: its mean may be anywhere
        gap_high += (len(figures) - len(present)) * max(abs(low), abs(high))
    return {
        "n": n,
        "gap": gap,
        "ci_low": gap_low,
        "ci_high": gap_high,
        "width": gap_high - gap_low,
        "categories": {
            name: {"n": f["n"], "mean": f["mean"] if f["n"] else None, "ci_low": f["ci_low"], "ci_high": f["ci_high"]}
            for name, f in figures.items()
        },
    }


def met(rule: StoppingRule, figure: dict[str, Any]) -> bool:
    """Whether a look meets the rule."""
    if figure["n"] == 0:
        return False
    if rule.kind == "ci_width":
        return bool(figure["width"] < rule.threshold)
    if rule.kind == "separated":
        return bool(figure["separated"])
    assert rule.threshold is not None
    return bool(figure["ci_low"] > rule.threshold or figure["ci_high"] < rule.threshold)


def always_valid_p(looks: list[tuple[float, int]], value: float, low: float, high: float, rho: float) -> float:
    """The always-valid p-value for mean == ``value`` after looks (running total, n) at each batch."""
    sigma = (high - low) / 2
    best = max((log_martingale(total, n, value, sigma, rho) for total, n in looks if n), default=0.0)
    return float(min(1.0, math.exp(-best)))


def look_run(
    con: Connection, spec: Any, rule: StoppingRule, run: str, low: float, high: float, rho: float
) -> dict[str, object]:
    """The figure the rule looks at after a batch, from the run's jury scores so far."""
    from collections import defaultdict

    if rule.kind == "gap_excludes":
        by_category: dict[str, list[float]] = {dim: [] for dim in spec.dimensions}
        for category, score in con.execute(
            f"SELECT {spec.dimension_column}, jury_score FROM {spec.jury_view} "
            "WHERE run_id = ? AND jury_score IS NOT NULL",
            [run],
        ).fetchall():
            by_category.setdefault(category, []).append(float(score))
        return look_gap(by_category, low, high, rule.alpha, rho)
    if rule.kind == "separated":
        by_model: dict[str, list[float]] = defaultdict(list)
        for model, score in con.execute(
            f"SELECT coalesce(i.model, '(no model)'), j.jury_score FROM {spec.jury_view} j JOIN items i USING (item_id) "
            f"WHERE j.run_id = ? AND j.{spec.dimension_column} = ? AND j.jury_score IS NOT NULL",
            [run, rule.dimension],
        ).fetchall():
            by_model[model].append(float(score))
        return look_groups(dict(by_model), low, high, rule.alpha, rho)
    values = [
        float(r[0])
        for r in con.execute(
            f"SELECT jury_score FROM {spec.jury_view} WHERE run_id = ? AND {spec.dimension_column} = ? "
            "AND jury_score IS NOT NULL",
            [run, rule.dimension],
        ).fetchall()
    ]
    return {**look(values, low, high, rule.alpha, rho), "total": sum(values)}
