"""Effect sizes between two treatment arms, anchored to human baselines.

Cohen's d in three forms, each with percentile bootstrap CIs:

- ``d_avg``:    (M1 - M2) / ((SD1 + SD2) / 2)  (the cross-cultural personality literature's form)
- ``d_pooled``: (M1 - M2) / sqrt(((n1 - 1) SD1^2 + (n2 - 1) SD2^2) / (n1 + n2 - 2))
- ``raw``:      M1 - M2

SDs use ddof = 1. The bootstrap resamples each arm's runs with replacement; cells (e.g.
sub-scales) measured on the same runs share the resample, so the draws form one cluster
bootstrap over runs and are computed for all cells at once as matrix products.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
FORMS = ("d_avg", "d_pooled", "raw")


def _forms(m1: Array, s1: Array, n1: Any, m2: Array, s2: Array, n2: Any) -> dict[str, Array]:
    with np.errstate(all="ignore"):
        pooled = np.sqrt(((n1 - 1) * s1**2 + (n2 - 1) * s2**2) / (n1 + n2 - 2))
        return {"d_avg": (m1 - m2) / ((s1 + s2) / 2), "d_pooled": (m1 - m2) / pooled, "raw": m1 - m2}


def cohens_d(a: Array, b: Array) -> dict[str, float]:
    """The three forms for one pair of samples (NaN dropped)."""
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    forms = _forms(
        np.array(a.mean()), np.array(a.std(ddof=1)), len(a), np.array(b.mean()), np.array(b.std(ddof=1)), len(b)
    )
    return {k: float(v) for k, v in forms.items()}


def _moments(counts: Array, data: Array, n: Any) -> tuple[Array, Array]:
    """Bootstrap means and SDs (ddof 1) of every column of ``data`` for every row of ``counts``."""
    sums = counts @ data
    sq = counts @ (data**2)
    mean = sums / n
    var = (sq - n * mean**2) / (n - 1)
    return mean, np.sqrt(np.maximum(var, 0.0))


def cohens_d_cells(
    arm1: Array,
    arm2: Array,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    clusters: tuple[object, object] | None = None,
) -> dict[str, dict[str, Array]]:
    """d for many cells measured on the same runs: ``arm1`` is runs1 x cells, ``arm2`` runs2 x cells.

    ``clusters`` (a label per row of each arm): the bootstrap draws clusters (e.g. prompts) from
    both arms' labels together, each bringing its rows in both arms, instead of each arm's rows.
    Returns, per form, arrays over cells: ``value``, ``low``, ``high``.
    """
    rng = np.random.default_rng(seed)
    n1, n2 = arm1.shape[0], arm2.shape[0]
    point = _forms(arm1.mean(0), arm1.std(0, ddof=1), n1, arm2.mean(0), arm2.std(0, ddof=1), n2)
    if clusters is None:
        c1 = rng.multinomial(n1, np.full(n1, 1 / n1), size=n_boot).astype(float)
        c2 = rng.multinomial(n2, np.full(n2, 1 / n2), size=n_boot).astype(float)
        k1: Any = n1
        k2: Any = n2
    else:
        labels, member = np.unique(np.concatenate([np.asarray(c, dtype=str) for c in clusters]), return_inverse=True)
        drawn = rng.multinomial(len(labels), np.full(len(labels), 1 / len(labels)), size=n_boot).astype(float)
        c1, c2 = drawn[:, member[:n1]], drawn[:, member[n1:]]
        k1, k2 = c1.sum(axis=1, keepdims=True), c2.sum(axis=1, keepdims=True)  # rows drawn vary by replicate
    with np.errstate(all="ignore"):
        m1, s1 = _moments(c1, arm1, k1)
        m2, s2 = _moments(c2, arm2, k2)
        draws = _forms(m1, s1, k1, m2, s2, k2)
    tail = (1 - level) / 2 * 100
    out = {}
    for form in FORMS:
        with np.errstate(all="ignore"):  # a replicate with one distinct value per arm has d = +-inf
            low, high = np.nanpercentile(draws[form], [tail, 100 - tail], axis=0)
        out[form] = {"value": np.asarray(point[form], dtype=float), "low": low, "high": high}
    return out


def cohens_d_loop(arm1: Array, arm2: Array, *, n_boot: int = 2000, seed: int = 0) -> Array:
    """d_avg replicates one resample and one cell at a time (the straightforward version, for the bench)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_boot, arm1.shape[1]))
    for b in range(n_boot):
        i1 = rng.integers(0, arm1.shape[0], arm1.shape[0])
        i2 = rng.integers(0, arm2.shape[0], arm2.shape[0])
        for c in range(arm1.shape[1]):
            out[b, c] = cohens_d(arm1[i1, c], arm2[i2, c])["d_avg"]
    return out


@dataclass(frozen=True)
class AnchorThresholds:
    """When an effect counts as deviating from its human baseline.

    - ``min_gap``: besides the CI excluding the baseline, |d - d_human| must reach this
      (0 = the CI alone decides).
    - ``reorganization_gap``: a concordant factor is *reorganized* when at least one of
      its sub-scales lies above its baseline by more than this and another below by more.
    """

    min_gap: float = 0.0
    reorganization_gap: float = 0.2


def anchor(
    value: float, low: float, high: float, human: float, thresholds: AnchorThresholds = AnchorThresholds()
) -> dict[str, object]:
    """Compare an effect (with its CI) to a human baseline: ratio, inside-CI, and a pattern.

    Patterns: ``concordance`` (the baseline lies within the CI), ``suppression`` (the CI lies
    wholly below the baseline in the baseline's direction: a weaker, absent or reversed
    effect), ``amplification`` (wholly above: a stronger effect in the same direction).
    A deviation smaller than ``min_gap`` counts as concordance.
    """
    thresholds = thresholds or AnchorThresholds()
    inside = low <= human <= high
    direction = 1.0 if human >= 0 else -1.0
    lo_p, hi_p = sorted((direction * low, direction * high))
    base = abs(human)
    if inside or abs(value - human) < thresholds.min_gap:
        pattern = "concordance"
    elif hi_p < base:
        pattern = "suppression"
    elif lo_p > base:
        pattern = "amplification"
    else:  # pragma: no cover - the CI contains the baseline in projected space
        pattern = "concordance"
    ratio = value / human if human != 0 else float("nan")
    return {
        "d": value,
        "ci_low": low,
        "ci_high": high,
        "d_human": human,
        "ratio": ratio,
        "baseline_in_ci": bool(inside),
        "reversed": bool(value * human < 0),
        "pattern": pattern,
    }


def factor_pattern(
    factor: dict[str, object], subscales: list[dict[str, Any]], thresholds: AnchorThresholds | None = None
) -> str:
    """The factor's pattern, upgraded to ``reorganization`` when it is concordant while its
    sub-scales deviate from their baselines in opposite directions beyond the threshold."""
    thresholds = thresholds or AnchorThresholds()
    if factor["pattern"] != "concordance":
        return str(factor["pattern"])
    gaps = [s["d"] - s["d_human"] for s in subscales]
    tau = thresholds.reorganization_gap
    if any(g > tau for g in gaps) and any(g < -tau for g in gaps):
        return "reorganization"
    return "concordance"


# Differences of means of integer ratings are exact rationals; floating point can make equal
# ones differ in the last bit (7/3 - 4/3 = 1.0000000000000002). Rounding far below any real
# difference between ratings keeps exact ties tied before ranking.
TIE_DECIMALS = 9


def item_level_spearman(keyed_differences: dict[str, Array]) -> list[dict[str, float | str]]:
    """Spearman correlation between conditions of per-item keyed differences, with p-values."""
    from scipy.stats import spearmanr

    names = list(keyed_differences)
    out: list[dict[str, float | str]] = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            x = np.round(keyed_differences[a], TIE_DECIMALS)
            y = np.round(keyed_differences[b], TIE_DECIMALS)
            ok = ~np.isnan(x) & ~np.isnan(y)
            res = spearmanr(x[ok], y[ok])
            out.append(
                {
                    "first": a,
                    "second": b,
                    "n_items": float(ok.sum()),
                    "spearman": float(res.statistic),
                    "p": float(res.pvalue),
                }
            )
    return out


def mean_within_group_sd(groups: dict[str, Array]) -> float:
    """Mean over groups of the within-group SD (ddof 1): a response-distribution diagnostic."""
    sds = [float(np.nanstd(v, ddof=1)) for v in groups.values() if np.sum(~np.isnan(v)) > 1]
    return float(np.mean(sds)) if sds else float("nan")


@dataclass
class CellEffect:
    cell: str
    forms: dict[str, dict[str, float]] = field(default_factory=dict)
