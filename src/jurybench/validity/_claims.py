"""A claim the tool states, the figure a simulation measured for it, and whether it holds."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class Claim:
    """One stated guarantee beside its measurement.

    ``low``/``high`` bound what the claim allows (None: unbounded on that side); ``ci`` is the
    measurement's 95 % interval (binomial for a rate, normal for a mean ratio). In the full suite
    a claim holds when the measured value is inside its bounds; in the quick one (fewer
    replications) when its interval reaches them, so the quick suite fails only on evidence."""

    area: str
    claim: str
    measured: float
    ci: tuple[float, float]
    low: float | None = None
    high: float | None = None
    replications: int = 0
    note: str = ""
    quick: bool = False
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        if not math.isfinite(self.measured):
            return False
        lo, hi = (self.ci[1], self.ci[0]) if self.quick else (self.measured, self.measured)
        return (self.low is None or lo >= self.low) and (self.high is None or hi <= self.high)

    def target(self) -> str:
        if self.low is not None and self.high is not None:
            return f"{_fmt(self.low)}..{_fmt(self.high)}"
        if self.high is not None:
            return f"<= {_fmt(self.high)}"
        return f">= {_fmt(self.low)}" if self.low is not None else "any"

    def as_dict(self) -> dict[str, object]:
        return {
            "area": self.area,
            "claim": self.claim,
            "measured": self.measured,
            "ci_low": self.ci[0],
            "ci_high": self.ci[1],
            "target": self.target(),
            "replications": self.replications,
            "holds": self.holds,
            "note": self.note,
            **self.extra,
        }


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def rate(
    area: str,
    claim: str,
    hits: int,
    n: int,
    *,
    low: float | None = None,
    high: float | None = None,
    quick: bool = False,
    note: str = "",
) -> Claim:
    """A claim about a rate measured as ``hits`` of ``n``, with its exact binomial interval."""
    from scipy.stats import binomtest

    ci = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="exact")
    return Claim(area, claim, hits / n, (float(ci.low), float(ci.high)), low, high, n, note, quick)


def coverage(area: str, claim: str, hits: int, n: int, *, quick: bool, note: str = "") -> Claim:
    """A 95 % interval's coverage claim: it holds the truth 93-97 % of the time."""
    return rate(area, claim, hits, n, low=0.93, high=0.97, quick=quick, note=note)


def mean_ratio(
    area: str, claim: str, values: list[float], denominator: float, *, high: float, quick: bool = False, note: str = ""
) -> Claim:
    """A claim that the mean of ``values`` over ``denominator`` is at most ``high`` (normal interval)."""
    import numpy as np

    x = np.asarray(values, dtype=float)
    m = float(np.mean(x))
    half = 1.96 * float(np.std(x, ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else math.inf
    return Claim(
        area,
        claim,
        m / denominator,
        ((m - half) / denominator, (m + half) / denominator),
        None,
        high,
        len(x),
        note,
        quick,
    )
