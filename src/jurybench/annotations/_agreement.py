"""Agreement statistics on arrays: among humans, and between jurors and humans.

Matrices are units x coders with NaN for a missing rating. Everything here is a plain
function of arrays; the store adapters live in ``_report.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def _pairable(matrix: Array) -> Array:
    """Units with at least two ratings (the only ones alpha can use)."""
    counts = np.sum(~np.isnan(matrix), axis=1)
    return np.asarray(matrix[counts >= 2], dtype=float)


def _to_midranks(data: Array) -> Array:
    """Replace each value v by its ordinal position r(v) = (frequency below v) + n_v / 2.

    Krippendorff's ordinal difference between c and k is r(k) - r(c), so ordinal alpha is
    interval alpha computed on these positions (frequencies over all pairable values).
    """
    present = ~np.isnan(data)
    levels, counts = np.unique(data[present], return_counts=True)
    positions = np.concatenate([[0.0], np.cumsum(counts)[:-1]]) + counts / 2
    out = np.full(data.shape, np.nan)
    out[present] = positions[np.searchsorted(levels, data[present])]
    return out


def average_ranks(values: Array) -> Array:
    """Ranks 1..n with ties given their average rank (scipy.stats.rankdata's default)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    return np.asarray((np.cumsum(counts) - (counts - 1) / 2.0)[inverse], dtype=float)


def pearson(x: Array, y: Array) -> float:
    """Pearson's r over the units where both are defined; NaN with fewer than three such units
    or when either side is constant there. (np.corrcoef's value, without its overhead: the
    bootstraps call this tens of thousands of times.)"""
    keep = ~(np.isnan(x) | np.isnan(y))
    if keep.sum() < 3:
        return float("nan")
    xc, yc = x[keep] - x[keep].mean(), y[keep] - y[keep].mean()
    sxx, syy = float(xc @ xc), float(yc @ yc)
    if sxx == 0 or syy == 0:
        return float("nan")
    return float(np.clip((xc @ yc) / np.sqrt(sxx * syy), -1.0, 1.0))


def krippendorff_alpha(matrix: Array, level: str = "interval") -> float:
    """Krippendorff's alpha for interval, ordinal or nominal data, missing values allowed.

    alpha = 1 - D_o / D_e with D_o the mean squared difference within units (each unit's
    ordered pairs weighted 1 / (m_u - 1)) and D_e that over all pairable values.
    """
    data = _pairable(np.asarray(matrix, dtype=float))
    if data.size == 0:
        return float("nan")
    if level == "ordinal":
        data = _to_midranks(data)
    elif level == "nominal":
        return _nominal_alpha(data)
    elif level != "interval":
        raise ValueError(f"level must be interval, ordinal or nominal, not {level!r}")
    present = ~np.isnan(data)
    m = present.sum(axis=1)
    filled = np.where(present, data, 0.0)
    s1 = filled.sum(axis=1)
    s2 = (filled**2).sum(axis=1)
    n = m.sum()
    # Sum over ordered pairs i != j within a unit of (v_i - v_j)^2 = 2 (m S2 - S1^2).
    d_o = np.sum(2 * (m * s2 - s1**2) / (m - 1)) / n
    t1, t2 = s1.sum(), s2.sum()
    d_e = 2 * (n * t2 - t1**2) / (n * (n - 1))
    return float(1 - d_o / d_e) if d_e > 0 else float("nan")


def _nominal_alpha(data: Array) -> float:
    values = np.unique(data[~np.isnan(data)])
    index = {float(v): i for i, v in enumerate(values)}
    coincidence = np.zeros((len(values), len(values)))
    for unit in data:
        vals = unit[~np.isnan(unit)]
        m = len(vals)
        for i in range(m):
            for j in range(m):
                if i != j:
                    coincidence[index[float(vals[i])], index[float(vals[j])]] += 1 / (m - 1)
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    d_o = (n - np.trace(coincidence)) / n
    d_e = (n * n - np.sum(n_c**2)) / (n * (n - 1))
    return float(1 - d_o / d_e)


def fleiss_kappa(matrix: Array) -> float:
    """Fleiss' kappa over units rated by all coders (units with a missing rating are dropped)."""
    data = np.asarray(matrix, dtype=float)
    data = data[~np.isnan(data).any(axis=1)]
    if len(data) == 0 or data.shape[1] < 2:  # agreement needs two raters
        return float("nan")
    categories = np.unique(data)
    counts = np.stack([(data == c).sum(axis=1) for c in categories], axis=1).astype(float)
    n_raters = data.shape[1]
    p_i = (np.sum(counts**2, axis=1) - n_raters) / (n_raters * (n_raters - 1))
    p_bar = p_i.mean()
    p_j = counts.sum(axis=0) / (len(data) * n_raters)
    p_e = np.sum(p_j**2)
    return float((p_bar - p_e) / (1 - p_e)) if p_e < 1 else float("nan")


def mean_pairwise_spearman(matrix: Array) -> float:
    """Mean Spearman correlation over pairs of coders, each on the units both rated.

    Spearman's rho is Pearson's r of the average-tie ranks (as scipy.stats.spearmanr).
    """
    data = np.asarray(matrix, dtype=float)
    values = []
    for i in range(data.shape[1]):
        for j in range(i + 1, data.shape[1]):
            both = ~np.isnan(data[:, i]) & ~np.isnan(data[:, j])
            if both.sum() > 2:
                rho = pearson(average_ranks(data[both, i]), average_ranks(data[both, j]))
                if not np.isnan(rho):
                    values.append(rho)
    return float(np.mean(values)) if values else float("nan")


def cohen_kappa(a: Array, b: Array) -> float:
    """Cohen's kappa between two label vectors (compared as categories)."""
    a, b = np.asarray(a), np.asarray(b)
    labels = np.unique(np.concatenate([a, b]))
    p_o = np.mean(a == b)
    p_e = sum(np.mean(a == label) * np.mean(b == label) for label in labels)
    return float((p_o - p_e) / (1 - p_e)) if p_e < 1 else float("nan")


def gwet_ac1(matrix: Array, n_categories: int | None = None) -> float:
    """Gwet's AC1 for any number of raters (columns; NaN where a rater left a unit out):
    p_a = mean over units rated at least twice of sum_k r_ik (r_ik - 1) / (r_i (r_i - 1));
    pi_k = mean over rated units of r_ik / r_i; p_e = sum_k pi_k (1 - pi_k) / (q - 1), with q
    the number of categories (``n_categories``, else those observed); AC1 = (p_a - p_e)/(1 - p_e).
    Unlike kappa it does not collapse when one category dominates."""
    data = np.asarray(matrix, dtype=float)
    rated = (~np.isnan(data)).sum(axis=1)
    categories = np.unique(data[~np.isnan(data)])
    q = n_categories or len(categories)
    if len(categories) == 0 or q < 2:
        return float("nan")
    counts = np.stack([(data == c).sum(axis=1) for c in categories], axis=1).astype(float)
    pairs = rated >= 2
    if not pairs.any():
        return float("nan")
    r = rated[pairs].astype(float)
    p_a = float(np.mean(np.sum(counts[pairs] * (counts[pairs] - 1), axis=1) / (r * (r - 1))))
    pi = np.mean(counts[rated >= 1] / rated[rated >= 1, None], axis=0)
    p_e = float(np.sum(pi * (1 - pi)) / (q - 1))
    return float((p_a - p_e) / (1 - p_e)) if p_e < 1 else float("nan")


def quadratic_kappa(a: Array, b: Array) -> float:
    """Cohen's kappa with quadratic weights between two ratings on an ordinal scale, each rounded
    to the scale's nearest point (a half to the even point, as ``exact``): 1 - mean((a - b)^2) / mean over all (i, j) of
    (a_i - b_j)^2, the expected squared disagreement of independent raters with the same
    margins (var a + var b + (mean a - mean b)^2, population variances)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = ~np.isnan(x) & ~np.isnan(y)
    x, y = np.rint(x[keep]), np.rint(y[keep])
    if len(x) < 2:
        return float("nan")
    expected = x.var() + y.var() + (x.mean() - y.mean()) ** 2
    return float(1 - np.mean((x - y) ** 2) / expected) if expected > 0 else float("nan")


def mean_pairwise_quadratic_kappa(matrix: Array) -> float:
    """Mean quadratic-weighted kappa over pairs of raters (columns), each on the units both rated."""
    data = np.asarray(matrix, dtype=float)
    values = [
        quadratic_kappa(data[:, i], data[:, j]) for i in range(data.shape[1]) for j in range(i + 1, data.shape[1])
    ]
    values = [v for v in values if not np.isnan(v)]
    return float(np.mean(values)) if values else float("nan")


def score_agreement(pred: Array, truth: Array) -> dict[str, float]:
    """Pearson, Spearman, Kendall, MAE, RMSE, exact and within-one agreement, and the
    quadratic-weighted kappa.

    ``exact``, ``within_one`` and ``quadratic_kappa`` compare both sides rounded to the nearest
    integer (a human mean of 3.33 counts as 3).
    """
    from scipy.stats import kendalltau, pearsonr, spearmanr

    pred, truth = np.asarray(pred, dtype=float), np.asarray(truth, dtype=float)
    keep = ~np.isnan(pred) & ~np.isnan(truth)
    pred, truth = pred[keep], truth[keep]
    n = len(pred)
    if n < 3 or np.std(pred) == 0 or np.std(truth) == 0:
        nan = float("nan")
        return {
            "n": float(n),
            "pearson": nan,
            "spearman": nan,
            "kendall": nan,
            "mae": nan,
            "rmse": nan,
            "exact": nan,
            "within_one": nan,
            "quadratic_kappa": nan,
        }
    diff = np.abs(np.rint(pred) - np.rint(truth))
    return {
        "n": float(n),
        "pearson": float(pearsonr(pred, truth).statistic),
        "spearman": float(spearmanr(pred, truth).statistic),
        "kendall": float(kendalltau(pred, truth).statistic),
        "mae": float(np.mean(np.abs(pred - truth))),
        "rmse": float(np.sqrt(np.mean((pred - truth) ** 2))),
        "exact": float(np.mean(diff == 0)),
        "within_one": float(np.mean(diff <= 1)),
        "quadratic_kappa": quadratic_kappa(pred, truth),
    }


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "ci_low": self.low, "ci_high": self.high}

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


def bootstrap(
    statistic: Callable[[NDArray[np.int64]], float],
    n_units: int,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Estimate:
    """Percentile bootstrap CI of ``statistic(indices)`` resampling units with replacement."""
    rng = np.random.default_rng(seed)
    full = statistic(np.arange(n_units))
    draws = np.array([statistic(rng.integers(0, n_units, n_units)) for _ in range(n_boot)])
    draws = draws[~np.isnan(draws)]
    if len(draws) == 0:
        return Estimate(full, float("nan"), float("nan"))
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Estimate(float(full), float(low), float(high))


def leave_one_annotator_out(matrix: Array) -> list[dict[str, float]]:
    """Each annotator against the mean of the others (the human ceiling)."""
    data = np.asarray(matrix, dtype=float)
    out = []
    for a in range(data.shape[1]):
        others = np.delete(data, a, axis=1)
        with np.errstate(all="ignore"):
            mean_others = np.nanmean(others, axis=1) if others.shape[1] else np.full(len(data), np.nan)
        out.append(score_agreement(data[:, a], mean_others))
    return out


def as_float_dict(values: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in values.items()}
