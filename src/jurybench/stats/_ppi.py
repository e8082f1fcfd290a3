"""Prediction-powered inference for a mean (PPI++: Angelopoulos, Duchi and Zrnic, "PPI++:
Efficient prediction-powered inference", 2023; active sampling: Zrnic and Candès, "Active
statistical inference", 2024), on plain arrays.

N subjects all carry the jury's score f; a random sample of n of them also carries the humans'
mean label y. The estimate of the humans' mean over the N subjects is

    theta = lambda * mean_all(f) + mean_sample(y - lambda * f),

unbiased for any fixed lambda whatever the jury's bias, because the sample's rectifier
y - lambda f has the population's mean. lambda = 0 is the humans' labels alone; lambda = 1 is
plain PPI; PPI++ tunes it to the variance-minimising value

    lambda = cov_n(y, f) / ((1 + n / N) var(f over the sample and all N)), clipped to [0, 1],

so the interval is never (asymptotically) wider than the labels' own. With the sample drawn
uniformly (every subject equally likely), the interval is theta +- z sqrt(lambda^2 var(f_all) / N
+ var(y - lambda f) / n) (population variances), as the reference implementation ``ppi-python``
computes it with the jury's scores of all N as its unlabelled predictions. With unequal
inclusion probabilities pi_i (active sampling: a subject's chance rises with the jury's
uncertainty about it; Poisson draws), the rectifier's mean is weighted by 1 / pi_i (the Hajek
ratio), with its variance for the population the subjects come from (inverse-probability
weighting keeps the estimate consistent for that population's mean).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def power_tuning(y: Array, f_labelled: Array, f_all: Array) -> float:
    """PPI++'s lambda for a mean: the sample covariance of y and f (1/n) over (1 + n/N) times
    the variance (ddof 1) of f over the sample and all N together, clipped to [0, 1]."""
    n, big_n = len(y), len(f_all)
    if n < 2:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (f_labelled - f_labelled.mean())))
    var = float(np.var(np.concatenate([f_labelled, f_all]), ddof=1))
    if var <= 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def _z(alpha: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(1 - alpha / 2))


def ppi_mean(
    y: Array,
    f_labelled: Array,
    f_all: Array,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    clusters: tuple[NDArray[Any], NDArray[Any]] | None = None,
) -> dict[str, Any]:
    """PPI++ estimate of the mean of y over the population f_all comes from, for a uniform
    sample (y, f_labelled) of it: estimate, interval, lambda, and the labels-only and jury-only
    figures beside it. ``clusters`` (the labelled subjects' and all subjects' cluster labels):
    subjects of a cluster are not independent, so each part's variance comes from the clusters'
    totals (the sandwich form, with G / (G - 1))."""
    n, big_n = len(y), len(f_all)
    lam = power_tuning(y, f_labelled, f_all) if lam is None else lam
    rectifier = y - lam * f_labelled
    estimate = lam * float(np.mean(f_all)) + float(np.mean(rectifier))
    if clusters is None:
        var = lam * lam * float(np.var(f_all)) / big_n + float(np.var(rectifier)) / n
        return _figure(estimate, math.sqrt(var), lam, y, f_all, alpha)
    var = lam * lam * _clustered(f_all, clusters[1]) + _clustered(rectifier, clusters[0])
    labelled_clusters = len(np.unique(np.asarray(clusters[0], dtype=str)))
    return _figure(estimate, math.sqrt(var), lam, y, f_all, alpha, df=max(labelled_clusters - 1, 1))


def _clustered(values: Array, labels: NDArray[Any]) -> float:
    """The variance of the mean of ``values`` from its clusters' totals of deviations."""
    _, member = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    g = int(member.max()) + 1
    totals = np.bincount(member, weights=values - values.mean(), minlength=g)
    return float(np.sum(totals**2)) / len(values) ** 2 * g / max(g - 1, 1)


def ppi_mean_weighted(
    y: Array, f_labelled: Array, probability: Array, f_all: Array, *, alpha: float = 0.05, lam: float | None = None
) -> dict[str, Any]:
    """The same for a sample drawn with inclusion probabilities ``probability`` (each labelled
    subject's; Poisson draws, as active sampling makes them): the rectifier's mean weighted by
    1 / probability (the Hajek ratio, which centres it), and its variance for the population the
    subjects come from, sum over the sample of (r - mean r)^2 / (pi N)^2."""
    big_n = len(f_all)
    lam = power_tuning(y, f_labelled, f_all) if lam is None else lam
    weights = 1.0 / probability
    rectifier = y - lam * f_labelled
    centre = float(np.sum(weights * rectifier) / np.sum(weights))
    estimate = lam * float(np.mean(f_all)) + centre
    sampled = float(np.sum(weights**2 * (rectifier - centre) ** 2)) / big_n**2
    se = math.sqrt(lam * lam * float(np.var(f_all)) / big_n + sampled)
    return _figure(estimate, se, lam, y, f_all, alpha, weights=weights)


def _figure(
    estimate: float,
    se: float,
    lam: float,
    y: Array,
    f_all: Array,
    alpha: float,
    weights: Array | None = None,
    df: int | None = None,
) -> dict[str, Any]:
    """An estimate with its interval (normal; t with ``df`` degrees of freedom when the sample
    is of clusters), lambda, the sizes, and the labels-only and jury-only figures."""
    from scipy.stats import t

    z = _z(alpha) if df is None else float(t.ppf(1 - alpha / 2, df))
    return {
        "estimate": estimate,
        "ci_low": estimate - z * se,
        "ci_high": estimate + z * se,
        "se": se,
        "lambda": lam,
        "n_labelled": len(y),
        "n_subjects": len(f_all),
        **_beside(y, f_all, z, weights=weights),
    }


def _beside(y: Array, f_all: Array, z: float, weights: Array | None = None) -> dict[str, float]:
    """The labels alone (their mean, weighted by 1/pi when given, with a CLT interval) and the
    jury alone (its mean over all N, with its own interval, valid only if the jury is unbiased)."""
    if weights is None:
        human = float(np.mean(y))
        human_se = float(np.std(y, ddof=1)) / math.sqrt(len(y)) if len(y) > 1 else math.inf
    else:
        w = weights / weights.sum()
        human = float(np.sum(w * y))
        human_se = math.sqrt(float(np.sum(w**2 * (y - human) ** 2))) if len(y) > 1 else math.inf
    jury = float(np.mean(f_all))
    jury_se = float(np.std(f_all, ddof=1)) / math.sqrt(len(f_all)) if len(f_all) > 1 else math.inf
    return {
        "human_only": human,
        "human_low": human - z * human_se,
        "human_high": human + z * human_se,
        "jury_only": jury,
        "jury_low": jury - z * jury_se,
        "jury_high": jury + z * jury_se,
    }


def labels_needed(width: float, y: Array, f_labelled: Array, f_all: Array, *, alpha: float = 0.05) -> dict[str, Any]:
    """How many uniformly drawn labels reach an interval of total ``width``: with this jury
    (PPI++ at the pilot's lambda and variances) and without it (the labels alone). Never more
    than the N subjects there are: where the count reaches N, labelling every subject is the
    answer (the humans' mean itself, no interval needed), and ``label_everything`` says so."""
    big_n = len(f_all)
    lam = power_tuning(y, f_labelled, f_all)
    z = _z(alpha)
    half_sq = (width / 2 / z) ** 2
    jury_part = lam * lam * float(np.var(f_all)) / big_n
    rect_var = float(np.var(y - lam * f_labelled))

    def count(variance: float, room: float) -> int:
        needed = variance / room if room > 0 else math.inf
        return big_n if not math.isfinite(needed) or needed >= big_n else max(math.ceil(needed), 1)

    with_jury = count(rect_var, half_sq - jury_part)
    without = count(float(np.var(y, ddof=1)), half_sq)
    return {
        "width": width,
        "lambda": lam,
        "labels_with_jury": with_jury,
        "labels_without_jury": without,
        "label_everything": with_jury >= big_n,
    }


def all_alike(y: Array, low: float, high: float, *, alpha: float = 0.05) -> dict[str, Any]:
    """An interval for the humans' mean when all n labels are the same value v (their variance
    is zero, so a plug-in interval would have width zero), from the labels alone.

    On a scale of K points from ``low`` to ``high``, n equal draws of a value w happen with
    probability P(w)^n; the test that rejects a distribution when the n labels are all some w
    with P(w)^n <= alpha / K has level alpha (summed over the K values). The distributions it
    keeps give v a share of at least q = (alpha / K)^(1 / n), so their mean lies in
    [v - (1 - q)(v - low), v + (1 - q)(high - v)]. Exact for bounded labels, and wide when n is
    small: two equal labels of 3 on 1..5 give [1.2, 4.8]."""
    n, v = len(y), float(y[0])
    points = max(round(high - low) + 1, 2)
    q = (alpha / points) ** (1.0 / n)
    return {
        "estimate": v,
        "ci_low": v - (1 - q) * (v - low),
        "ci_high": v + (1 - q) * (high - v),
        "se": math.nan,
        "lambda": 0.0,
        "n_labelled": n,
        "method_note": f"all {n} labels are {v:g}: the exact interval for equal bounded labels, not PPI",
    }
