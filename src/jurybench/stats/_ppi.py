"""Prediction-powered inference for a mean (PPI++: Angelopoulos, Duchi and Zrnic, "PPI++:
Efficient prediction-powered inference", 2023; active sampling: Zrnic and Candès, "Active
statistical inference", 2024), on plain arrays.

N subjects all carry the jury's score f; a random sample of n of them also carries the humans'
mean label y. The estimate of the humans' mean over the population the subjects come from is

    theta = lambda * mean_U(f) + mean_sample(y - lambda * f),

U being the subjects without a label (disjoint from the sample, so the two parts are
independent), unbiased for any fixed lambda whatever the jury's bias, because the sample's
rectifier y - lambda f has the population's mean. lambda = 0 is the humans' labels alone;
lambda = 1 is plain PPI; PPI++ tunes it to the variance-minimising value

    lambda = cov_n(y, f) / ((1 + n / |U|) var(f over the sample and U)), clipped to [0, 1].

The large-sample interval, theta +- z sqrt(lambda^2 var_U(f) / |U| + var(y - lambda f) / n), is
the reference implementation's (``ppi-python``); with few labels of a bounded scale it is too
narrow, and ``ppi_mean`` by default uses t(n - 1) and a rectifier variance with two light
pseudo-labels at the scale's ends (see :func:`ppi_mean`; docs/statistics.md). With unequal
inclusion probabilities pi_i (active sampling: a subject's chance rises with the jury's
uncertainty about it; Poisson draws; stratified samples), the rectifier's mean is weighted by
1 / pi_i (the Hajek ratio), with its variance for the population the subjects come from.
"""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=512)
def _z(alpha: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(1 - alpha / 2))


@functools.lru_cache(maxsize=4096)
def _t(alpha: float, df: float) -> float:
    """The two-sided t quantile (scipy's ppf costs about 0.3 ms; studies ask for the same ones)."""
    from scipy.stats import t

    return float(t.ppf(1 - alpha / 2, df))


SMALL_SAMPLE = 0.03  # c in the pseudo-labels' weight c sqrt(n) (checked by make validity, not from a paper)
CLUSTER_SMALL_SAMPLE = 0.1  # the same for clusters as the units: c sqrt(G) (make validity)
WEIGHTED_SMALL_SAMPLE = 0.05  # the same under unequal chances: c sqrt(n) (make validity)
# The same for votes (-1, 0, +1: a preference's or pairwise verdict's win rate): on three points a
# lopsided share behaves as a proportion does, and c = 0.03 covered 88-89 % at 10 votes (make validity).
VOTES_SMALL_SAMPLE = 0.2
# ... and with clusters as the units or under unequal chances, where the labels' constants (0.1 and
# 0.05) covered 90 % with 5 prompts of votes labelled and 89-90 % on active samples of 10-20
# (make validity: the win-rate claims under --cluster and --design active).
VOTES_CLUSTER_SMALL_SAMPLE = 0.6
VOTES_WEIGHTED_SMALL_SAMPLE = 0.3


# Which c a sample takes, read once: by how it was drawn, and whether its labels are votes.
# Proportional allocation gives every subject of a stratified sample nearly the same chance,
# n_h / N_h, so it takes the uniform design's c: with the active design's 0.05 it covered
# 97.1-97.2 % at 10 and 30 labels (make validity's stratified claims, at 0.03: 95.2-96.5 %).
_SMALL_SAMPLE_C: dict[tuple[str, bool], float] = {
    ("uniform", False): SMALL_SAMPLE,
    ("uniform", True): VOTES_SMALL_SAMPLE,
    ("clusters", False): CLUSTER_SMALL_SAMPLE,
    ("clusters", True): VOTES_CLUSTER_SMALL_SAMPLE,
    ("stratified", False): SMALL_SAMPLE,
    ("stratified", True): VOTES_SMALL_SAMPLE,
    ("active", False): WEIGHTED_SMALL_SAMPLE,
    ("active", True): VOTES_WEIGHTED_SMALL_SAMPLE,
}


def small_sample_c(design: str, *, votes: bool) -> float:
    """The small-sample c of the pseudo-labels' weight for a sample drawn by ``design`` (uniform,
    clusters - whole clusters as the units -, stratified or active), heavier for votes."""
    return _SMALL_SAMPLE_C[(design, votes)]


def ppi_mean(
    y: Array,
    f_labelled: Array,
    f_unlabelled: Array,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    clusters: tuple[NDArray[Any], NDArray[Any]] | None = None,
    scale: tuple[float, float] | None = None,
    small_sample: bool = True,
    pseudo: float = SMALL_SAMPLE,
    cluster_pseudo: float = CLUSTER_SMALL_SAMPLE,
) -> dict[str, Any]:
    """PPI++ estimate of the mean of y over the population the subjects come from, for a uniform
    sample (y, f_labelled) of them and the jury's scores of the subjects *not* labelled
    (``f_unlabelled``; disjoint from the sample, as the method's variance assumes: counting the
    labelled subjects twice leaves their covariance out, 9 % too narrow at 300 of 1,000).

    ``small_sample`` (the default) keeps the level at a few labels: a t quantile with n - 1
    degrees of freedom, and the rectifier's variance (ddof 1) taken with two pseudo-labels at the
    ends of ``scale`` (low and high, with the sample's mean jury score), each of weight
    0.03 sqrt(n) (``pseudo``: the c; VOTES_SMALL_SAMPLE for votes), so a sample that has not met
    a rare value does not claim to know it is absent.
    ``small_sample=False`` is the reference implementation's large-sample interval (normal
    quantile, population variances), which ``ppi-python`` computes to 1e-9.

    ``clusters`` (the labelled subjects' and the unlabelled subjects' cluster labels): subjects
    of a cluster are not independent, so each part's variance comes from the clusters' totals
    (the sandwich form, with G / (G - 1)) and the quantile is t with G - 1 degrees of freedom."""
    tuned = lam is None
    if tuned:
        # Subject-level lambda also under --cluster: tuned on the clusters' variance instead, it
        # narrowed 5-cluster intervals (0.66 against 0.72 of the clustered labels alone, a
        # HANNA-like design) but covered 92.2 % against 92.8 %: a lambda learned from five totals
        # is too noisy to pay (docs/statistics.md).
        tuned_lam = power_tuning(y, f_labelled, f_unlabelled) if len(f_unlabelled) else 0.0
        out = ppi_mean(
            y,
            f_labelled,
            f_unlabelled,
            alpha=alpha,
            lam=tuned_lam,
            clusters=clusters,
            scale=scale,
            small_sample=small_sample,
            pseudo=pseudo,
            cluster_pseudo=cluster_pseudo,
        )
        if small_sample:  # the labels alone, like for like: the same small-sample rule and clusters (lambda 0)
            alone = ppi_mean(
                y,
                f_labelled,
                f_unlabelled,
                alpha=alpha,
                lam=0.0,
                clusters=clusters,
                scale=scale,
                pseudo=pseudo,
                cluster_pseudo=cluster_pseudo,
            )
            out |= {"human_only": alone["estimate"], "human_low": alone["ci_low"], "human_high": alone["ci_high"]}
        return _within(out, scale)
    n, big_n = len(y), len(f_unlabelled)
    if big_n == 0:  # every subject labelled: the labels alone
        lam = 0.0
    assert lam is not None
    rectifier = y - lam * f_labelled
    jury_mean = float(np.mean(f_unlabelled)) if big_n else 0.0
    estimate = lam * jury_mean + float(np.mean(rectifier))
    jury_var = lam * lam * float(np.var(f_unlabelled)) / big_n if big_n else 0.0
    f_all = np.concatenate([f_labelled, f_unlabelled])
    if clusters is not None:
        var = lam * lam * _clustered(f_unlabelled, clusters[1]) if big_n else 0.0
        if small_sample and scale is not None:
            jury_part = lam * float(np.mean(f_labelled))
            var += _clustered_with_pseudo_labels(rectifier, clusters[0], scale, jury_part, cluster_pseudo)
        else:
            var += _clustered(rectifier, clusters[0])
        labelled_clusters = len(np.unique(np.asarray(clusters[0], dtype=str)))
        return _figure(estimate, math.sqrt(var), lam, y, f_all, alpha, df=max(labelled_clusters - 1, 1))
    if not small_sample:
        var = jury_var + float(np.var(rectifier)) / n
        return _figure(estimate, math.sqrt(var), lam, y, f_all, alpha)
    spread = _with_pseudo_labels(rectifier, scale, lam * float(np.mean(f_labelled)), pseudo)
    return _figure(estimate, math.sqrt(jury_var + spread / n), lam, y, f_all, alpha, df=max(n - 1, 1))


def _with_pseudo_labels(
    rectifier: Array, scale: tuple[float, float] | None, jury_part: float, pseudo: float = SMALL_SAMPLE
) -> float:
    """The rectifier's variance (ddof 1), with a pseudo-label at each end of the scale when it is
    known: values low - lambda mean(f) and high - lambda mean(f), each weighing c sqrt(n)."""
    n = len(rectifier)
    if scale is None:
        return float(np.var(rectifier, ddof=1)) if n > 1 else math.inf
    weight = pseudo * math.sqrt(n)
    values = np.concatenate([rectifier, [scale[0] - jury_part, scale[1] - jury_part]])
    weights = np.concatenate([np.ones(n), [weight, weight]])
    centre = float(np.sum(weights * values) / np.sum(weights))
    return float(np.sum(weights * (values - centre) ** 2)) / (float(np.sum(weights)) - 1)


def _clustered(values: Array, labels: NDArray[Any]) -> float:
    """The variance of the mean of ``values`` from its clusters' totals of deviations."""
    _, member = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    g = int(member.max()) + 1
    totals = np.bincount(member, weights=values - values.mean(), minlength=g)
    return float(np.sum(totals**2)) / len(values) ** 2 * g / max(g - 1, 1)


def _clustered_with_pseudo_labels(
    rectifier: Array,
    labels: NDArray[Any],
    scale: tuple[float, float],
    jury_part: float,
    pseudo: float = CLUSTER_SMALL_SAMPLE,
) -> float:
    """The clustered variance of the rectifier's mean with the small-sample pseudo-labels: the G
    clusters are the units, each its mean m_g with size s_g = n_g / mean size (so a cluster's
    deviation s_g (m_g - centre) is its total over the mean size, as in :func:`_clustered`), and
    one pseudo-label at each end of the scale is a cluster of its own (one subject: size
    1 / mean size) of weight CLUSTER_SMALL_SAMPLE sqrt(G). Variance: sum w d^2 / (sum w - 1) / G;
    with clusters of one subject each it is :func:`_with_pseudo_labels`' at c = 0.1."""
    _, member = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    g = int(member.max()) + 1
    sizes = np.bincount(member, minlength=g).astype(float)
    means = np.bincount(member, weights=rectifier, minlength=g) / sizes
    mean_size = float(sizes.mean())
    size = np.concatenate([sizes / mean_size, [1 / mean_size, 1 / mean_size]])
    values = np.concatenate([means, [scale[0] - jury_part, scale[1] - jury_part]])
    weights = np.concatenate([np.ones(g), [pseudo * math.sqrt(g)] * 2])
    centre = float(np.sum(weights * size * values) / np.sum(weights * size))
    deviation = size * (values - centre)
    return float(np.sum(weights * deviation**2)) / (float(np.sum(weights)) - 1) / g


def _weighted_spread(
    rectifier: Array,
    weights: Array,
    big_n: int,
    scale: tuple[float, float] | None,
    jury_part: float,
    pseudo: float = WEIGHTED_SMALL_SAMPLE,
) -> float:
    """The rectifier's part of the variance: sum over the sample of (1/pi)^2 (r - centre)^2 / N^2
    (the Hajek ratio's, centre its weighted mean). With a scale (the small-sample form), two
    pseudo-labels at its ends, of inclusion weight the sample's mean 1 / pi and each counted
    WEIGHTED_SMALL_SAMPLE sqrt(n) times, join the values and the centre, and the sum is taken
    times n / (n + 2 c sqrt(n) - 1): with equal chances n / N this is :func:`_with_pseudo_labels`'
    variance over n."""
    share = weights / np.sum(weights)
    if scale is None:
        centre = float(np.sum(share * rectifier))
        return float(np.sum(weights**2 * (rectifier - centre) ** 2)) / big_n**2
    n = len(rectifier)
    values = np.concatenate([rectifier, [scale[0] - jury_part, scale[1] - jury_part]])
    inverse = np.concatenate([weights, [float(weights.mean())] * 2])
    count = np.concatenate([np.ones(n), [pseudo * math.sqrt(n)] * 2])
    centre = float(np.sum(count * inverse * values) / np.sum(count * inverse))
    total = float(np.sum(count * inverse**2 * (values - centre) ** 2)) / big_n**2
    return total * n / (float(np.sum(count)) - 1)


def ppi_mean_weighted(
    y: Array,
    f_labelled: Array,
    probability: Array,
    f_all: Array,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    scale: tuple[float, float] | None = None,
    pseudo: float = WEIGHTED_SMALL_SAMPLE,
) -> dict[str, Any]:
    """The same for a sample drawn with inclusion probabilities ``probability`` (each labelled
    subject's; Poisson draws, as active sampling makes them): the rectifier's mean weighted by
    1 / probability (the Hajek ratio, which centres it), and its variance for the population the
    subjects come from, sum over the sample of (r - mean r)^2 / (pi N)^2, plus the jury's part
    lambda^2 var(f) / N and their covariance 2 lambda cov(f, r) / N (f_all holds the labelled
    subjects too, so both parts share them); t with n - 1 degrees of freedom. With ``scale``
    (the criterion's low and high), the rectifier's part takes the small-sample pseudo-labels
    (:func:`_weighted_spread`), as :func:`ppi_mean` does."""
    if lam is None:
        tuned = power_tuning(y, f_labelled, f_all)
        out = ppi_mean_weighted(y, f_labelled, probability, f_all, alpha=alpha, lam=tuned, scale=scale, pseudo=pseudo)
        if scale is not None:  # the labels alone, like for like: weighted, with the same small-sample rule
            alone = ppi_mean_weighted(
                y, f_labelled, probability, f_all, alpha=alpha, lam=0.0, scale=scale, pseudo=pseudo
            )
            out |= {"human_only": alone["estimate"], "human_low": alone["ci_low"], "human_high": alone["ci_high"]}
        return _within(out, scale)
    big_n = len(f_all)
    weights = 1.0 / probability
    rectifier = y - lam * f_labelled
    share = weights / np.sum(weights)
    centre = float(np.sum(share * rectifier))
    estimate = lam * float(np.mean(f_all)) + centre
    sampled = _weighted_spread(rectifier, weights, big_n, scale, lam * float(np.sum(share * f_labelled)), pseudo)
    together = float(np.sum(share * (f_labelled - np.sum(share * f_labelled)) * (rectifier - centre)))
    var = lam * lam * float(np.var(f_all)) / big_n + sampled + 2 * lam * together / big_n
    return _figure(estimate, math.sqrt(max(var, 0.0)), lam, y, f_all, alpha, weights=weights, df=max(len(y) - 1, 1))


def _within(out: dict[str, Any], scale: tuple[float, float] | None) -> dict[str, Any]:
    """The figure's intervals cut to the scale (``scale``: its low and high): the humans' mean
    lies within it, so the part of an interval beyond an end holds no value it could take, and
    cutting it off changes no interval's coverage. ``clipped_to_scale`` says whether any was cut."""
    if scale is None:
        return out
    low, high = scale
    clipped = False
    for a, b in (("ci_low", "ci_high"), ("human_low", "human_high"), ("jury_low", "jury_high")):
        if a in out and out[a] is not None and math.isfinite(out[a]) and out[a] < low:
            out[a], clipped = float(low), True
        if b in out and out[b] is not None and math.isfinite(out[b]) and out[b] > high:
            out[b], clipped = float(high), True
    out["clipped_to_scale"] = clipped
    return out


def _figure(
    estimate: float,
    se: float,
    lam: float,
    y: Array,
    f_all: Array,
    alpha: float,
    weights: Array | None = None,
    df: int | None = None,
) -> dict[str, object]:
    """An estimate with its interval (normal; t with ``df`` degrees of freedom), lambda, the
    sizes, and the labels-only and jury-only figures."""
    z = _z(alpha) if df is None else _t(alpha, df)
    return {
        "estimate": estimate,
        "ci_low": estimate - z * se,
        "ci_high": estimate + z * se,
        "se": se,
        "df": df,  # None: normal
        "lambda": lam,
        "n_labelled": len(y),
        "n_subjects": len(f_all),
        **_beside(y, f_all, alpha, weights=weights),
    }


def _beside(y: Array, f_all: Array, alpha: float, weights: Array | None = None) -> dict[str, float]:
    """The labels alone (their mean, weighted by 1/pi when given, with a t interval on n - 1
    degrees of freedom) and the jury alone (its mean over all N, with its own interval, valid only
    if the jury is unbiased)."""
    z = _t(alpha, max(len(y) - 1, 1))
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
        "jury_low": jury - _z(alpha) * jury_se,
        "jury_high": jury + _z(alpha) * jury_se,
    }


def slice_difference(first: dict[str, Any], second: dict[str, Any], *, alpha: float = 0.05) -> dict[str, Any]:
    """FIRST - SECOND of two disjoint slices' figures (as :func:`ppi_mean` returns them), with the
    interval of independent estimates: se = sqrt(se_1^2 + se_2^2) and t on the
    Welch-Satterthwaite degrees of freedom of the two slices' own (normal when both are). When a
    slice has the exact interval of labels that agree (no se), the intervals' extremes, which
    hold together at the level the two slices' intervals hold together."""
    diff = first["estimate"] - second["estimate"]
    v1, v2 = first["se"] ** 2, second["se"] ** 2
    se = math.sqrt(v1 + v2)
    df = _welch(v1, first.get("df") or math.inf, v2, second.get("df") or math.inf)
    q = _z(alpha) if not math.isfinite(df) else _t(alpha, df)
    low, high = diff - q * se, diff + q * se
    if not math.isfinite(se):
        low, high = first["ci_low"] - second["ci_high"], first["ci_high"] - second["ci_low"]
    return {
        "estimate": diff,
        "ci_low": low,
        "ci_high": high,
        "se": se,
        "df": df if math.isfinite(df) else None,
        "n_labelled": first["n_labelled"] + second["n_labelled"],
        "n_subjects": first["n_subjects"] + second["n_subjects"],
        "human_only": first["human_only"] - second["human_only"],
        "jury_only": first["jury_only"] - second["jury_only"],
    }


def _welch(v1: float, df1: float, v2: float, df2: float) -> float:
    """The Welch-Satterthwaite degrees of freedom of a sum of two variances with their own."""
    if not (math.isfinite(v1) and math.isfinite(v2)) or v1 + v2 <= 0:
        return math.inf
    parts = (v1 * v1 / df1 if math.isfinite(df1) else 0.0) + (v2 * v2 / df2 if math.isfinite(df2) else 0.0)
    return (v1 + v2) ** 2 / parts if parts > 0 else math.inf


def labels_needed(width: float, y: Array, f_labelled: Array, f_all: Array, *, alpha: float = 0.05) -> dict[str, Any]:
    """How many uniformly drawn labels reach an interval of total ``width``: with this jury
    (PPI++ at the pilot's lambda and variances) and without it (the labels alone). Never more
    than the N subjects there are: where the count reaches N, labelling every subject is the
    answer (the humans' mean itself, no interval needed), and ``label_everything`` says so."""
    big_n = len(f_all)
    lam = power_tuning(y, f_labelled, f_all)
    z = _z(alpha)
    half = width / 2 / z
    half_sq = half * half  # inf, not an OverflowError, for a width past a float's square root
    jury_part = lam * lam * float(np.var(f_all)) / big_n
    rect_var = float(np.var(y - lam * f_labelled))

    def count(variance: float, room: float) -> int:
        needed = variance / room if room > 0 else math.inf
        # at least 2: an interval from labels needs their spread
        return big_n if not math.isfinite(needed) or needed >= big_n else max(math.ceil(needed), 2)

    with_jury = count(rect_var, half_sq - jury_part)
    without = count(float(np.var(y, ddof=1)), half_sq)
    return {
        "width": width,
        "lambda": lam,
        "labels_with_jury": with_jury,
        "labels_without_jury": without,
        "label_everything": with_jury >= big_n,
    }


def all_alike(y: Array, low: float, high: float, *, alpha: float = 0.05) -> dict[str, object]:
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
