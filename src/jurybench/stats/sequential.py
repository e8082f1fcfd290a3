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

import math
import re
from dataclasses import dataclass
from typing import Any

from jurybench.errors import JurybenchError

METHOD = "normal-mixture confidence sequence for a bounded mean (Robbins 1970; Howard et al. 2021)"
_RULE = re.compile(
    r"^\s*(?:(ci_width)\(\s*([\w-]+)\s*\)\s*<\s*([0-9]*\.?[0-9]+)|(excludes)\(\s*([\w-]+)\s*,\s*(-?[0-9]*\.?[0-9]+)\s*\))\s*$"
)


@dataclass(frozen=True)
class StoppingRule:
    """When sequential judging stops: ``ci_width(DIM)<W`` (the confidence sequence for the jury's
    mean of DIM is narrower than W) or ``excludes(DIM,V)`` (it excludes V: the sign, or the
    difference from V, is decided)."""

    text: str
    kind: str
    dimension: str
    threshold: float
    alpha: float = 0.05


def is_rule(text: str) -> bool:
    """Whether ``text`` has the form of a stopping rule (its criterion is checked against the rubric later)."""
    return _RULE.match(text or "") is not None


def parse_rule(text: str, dimensions: list[str], alpha: float = 0.05) -> StoppingRule:
    """A stopping rule from its text, checked against the rubric's dimensions; one line on error."""
    found = _RULE.match(text or "")
    if not found:
        raise JurybenchError(f"--until {text!r} is not a stopping rule.",
                             hint="Use ci_width(CRITERION)<WIDTH or excludes(CRITERION,VALUE), e.g. "
                                  "'ci_width(coherence)<0.5' or 'excludes(logos,0)'.")  # fmt: skip
    kind, dimension, value = (found.group(1), found.group(2), found.group(3)) if found.group(1) else (
        found.group(4), found.group(5), found.group(6))  # fmt: skip
    if dimension not in dimensions:
        raise JurybenchError(f"--until: {dimension!r} is not a criterion of the rubric.",
                             hint=f"Valid: {', '.join(dimensions)}.")  # fmt: skip
    if not 0 < alpha < 1:
        raise JurybenchError(f"--until-alpha must be between 0 and 1 (got {alpha}).")
    threshold = float(value)
    if kind == "ci_width" and threshold <= 0:
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


def met(rule: StoppingRule, figure: dict[str, Any]) -> bool:
    """Whether a look meets the rule."""
    if figure["n"] == 0:
        return False
    if rule.kind == "ci_width":
        return bool(figure["width"] < rule.threshold)
    return bool(figure["ci_low"] > rule.threshold or figure["ci_high"] < rule.threshold)


def always_valid_p(looks: list[tuple[float, int]], value: float, low: float, high: float, rho: float) -> float:
    """The always-valid p-value for mean == ``value`` after looks (running total, n) at each batch."""
    sigma = (high - low) / 2
    best = max((log_martingale(total, n, value, sigma, rho) for total, n in looks if n), default=0.0)
    return float(min(1.0, math.exp(-best)))
