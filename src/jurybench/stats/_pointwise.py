"""Pointwise comparisons across models: Friedman with post-hoc tests, t-tests, rank tests."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from jurybench.stats._multiple import holm
from jurybench.stats._pairwise import wilcoxon_method

Array = NDArray[np.float64]


def friedman_posthoc(scores: Array, models: list[str]) -> dict[str, object]:
    """Friedman test across models (columns) with blocks = prompts (rows, complete only),
    then pairwise Wilcoxon signed-rank tests (null distribution as in
    :func:`jurybench.stats._pairwise.wilcoxon_method`), Holm-corrected, as a p-value matrix."""
    from scipy.stats import friedmanchisquare, rankdata, wilcoxon

    complete = scores[~np.isnan(scores).any(axis=1)]
    chi2, p = friedmanchisquare(*[complete[:, j] for j in range(complete.shape[1])])
    pairs, raw = [], []
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            d = complete[:, i] - complete[:, j]
            raw.append(float(wilcoxon(d, method=wilcoxon_method(d)).pvalue) if np.any(d != 0) else 1.0)
            pairs.append((i, j))
    adjusted = holm(raw)
    matrix = {a: dict.fromkeys(models, 1.0) for a in models}
    for (i, j), q in zip(pairs, adjusted, strict=True):
        matrix[models[i]][models[j]] = matrix[models[j]][models[i]] = float(q)
    mean_ranks = np.mean(rankdata(complete, axis=1), axis=0)  # ranks within each block, ties averaged
    return {
        "n_blocks": len(complete),
        "n_dropped": int(len(scores) - len(complete)),
        "chi2": float(chi2),
        "p": float(p),
        "mean_rank": dict(zip(models, map(float, mean_ranks), strict=True)),
        "means": dict(zip(models, map(float, complete.mean(axis=0)), strict=True)),
        "posthoc_holm": matrix,
    }


def mean_t_interval(
    mean: float | None, sd: float | None, n: int, level: float = 0.95
) -> tuple[float | None, float | None]:
    """The t interval of a mean from its summary (mean, sample SD, n): mean ± t(n-1) · sd / sqrt(n).
    None, None when it is undefined: fewer than two values, no SD, or an SD of 0 (a few equal
    values would print [x, x], certainty they cannot give)."""
    if mean is None or sd is None or n < 2 or math.isnan(sd) or sd <= 0:
        return None, None
    from scipy.stats import t

    half = float(t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def one_sample_t(x: Array, baseline: float) -> dict[str, float]:
    from scipy.stats import ttest_1samp

    x = x[~np.isnan(x)]
    res = ttest_1samp(x, baseline)
    return {
        "n": float(len(x)),
        "mean": float(np.mean(x)),
        "baseline": baseline,
        "t": float(res.statistic),
        "df": float(len(x) - 1),
        "p": float(res.pvalue),
    }


def welch_t(a: Array, b: Array) -> dict[str, float]:
    from scipy.stats import ttest_ind

    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    res = ttest_ind(a, b, equal_var=False)
    return {
        "n_a": float(len(a)),
        "n_b": float(len(b)),
        "mean_a": float(a.mean()),
        "mean_b": float(b.mean()),
        "t": float(res.statistic),
        "df": float(res.df),
        "p": float(res.pvalue),
    }


def mann_whitney(a: Array, b: Array) -> dict[str, float]:
    from scipy.stats import mannwhitneyu

    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    res = mannwhitneyu(a, b, alternative="two-sided")
    return {"n_a": float(len(a)), "n_b": float(len(b)), "U": float(res.statistic), "p": float(res.pvalue)}


def kendall_rankings(first: Array, second: Array) -> dict[str, float]:
    from scipy.stats import kendalltau

    res = kendalltau(first, second)
    return {"tau": float(res.statistic), "p": float(res.pvalue), "n": float(len(first))}
