"""Pairwise treatment studies: directional differences, Wilcoxon tests, treatment gaps.

Inputs are symmetrized scores epsilon (pairs x categories), where epsilon > 0 means the
category is more present in A than in B (A and B being the two treatment arms).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from jurybench.stats._multiple import benjamini_hochberg, holm

Array = NDArray[np.float64]
ZERO_METHODS = ("wilcox", "pratt", "zsplit")


def directional_differences(
    eps: Array, categories: list[str], *, zero_method: str = "wilcox"
) -> list[dict[str, object]]:
    """Per category: D_j = mean epsilon, and the Wilcoxon signed-rank test of symmetry about 0.

    ``eps`` is pairs x categories (NaN = excluded). Zero differences follow ``zero_method``:
    ``wilcox`` drops them (default), ``pratt`` ranks them then drops them, ``zsplit`` splits
    their ranks between the signs (scipy.stats.wilcoxon's methods). A category whose
    differences are all zero has no test (p = NaN). p-values are two-sided
    and corrected across categories by Holm and by Benjamini-Hochberg.
    """
    from scipy.stats import wilcoxon

    if zero_method not in ZERO_METHODS:
        raise ValueError(f"zero_method must be one of {ZERO_METHODS}")
    rows: list[dict[str, object]] = []
    pvalues = []
    for j, name in enumerate(categories):
        x = eps[:, j]
        x = x[~np.isnan(x)]
        n_zero = int(np.sum(x == 0))
        p = stat = float("nan")
        if np.any(x != 0):
            res = wilcoxon(x, zero_method=zero_method, alternative="two-sided", method=wilcoxon_method(x))
            p, stat = float(res.pvalue), float(res.statistic)
        rows.append(
            {
                "category": name,
                "n": len(x),
                "n_zero": n_zero,
                "D": float(np.mean(x)) if len(x) else float("nan"),
                "wilcoxon_statistic": stat,
                "p": p,
            }
        )
        pvalues.append(p)
    raw = np.array(pvalues)
    p_holm = holm(raw)
    p_bh = benjamini_hochberg(raw)
    for r, ph, pb in zip(rows, p_holm, p_bh, strict=True):
        r["p_holm"], r["p_bh"] = float(ph), float(pb)
    return rows


def wilcoxon_method(x: Array) -> str:
    """``exact`` for at most 50 non-zero differences without ties or zeros, else ``approx``.

    The normal approximation (with scipy's tie correction) is used whenever ties or zeros
    make the exact null distribution inapplicable; scipy's own 'auto' would instead run a
    permutation test there, which costs about a second per category.
    """
    nonzero = x[x != 0]
    has_ties = len(np.unique(np.abs(nonzero))) < len(nonzero)
    return "exact" if len(nonzero) <= 50 and not has_ties and len(nonzero) == len(x) else "approx"


def gap(eps: Array) -> float:
    """Treatment gap G = sum over categories of |D_j| (NaN entries ignored per category)."""
    with np.errstate(all="ignore"):
        return float(np.nansum(np.abs(np.nanmean(eps, axis=0))))


def bootstrap_means(eps: Array, *, n_boot: int = 2000, seed: int = 0, clusters: object = None) -> Array:
    """B bootstrap replicates of the category means D (B x categories), resampling pairs (rows)
    with replacement, or whole clusters of pairs (``clusters``: one label per row; each drawn
    cluster brings all its rows), vectorised: (counts of resampled rows) @ eps / n for all
    replicates at once as one matrix product."""
    rng = np.random.default_rng(seed)
    n = eps.shape[0]
    valid = ~np.isnan(eps)
    filled = np.where(valid, eps, 0.0)
    if clusters is None:
        counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(n_boot)]).astype(float)
    else:
        _, member = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
        k = int(member.max()) + 1
        drawn = np.stack([np.bincount(rng.integers(0, k, k), minlength=k) for _ in range(n_boot)]).astype(float)
        counts = drawn[:, member]  # each row counts as often as its cluster was drawn
    sums = counts @ filled
    ns = counts @ valid.astype(float)
    with np.errstate(all="ignore"):
        return np.asarray(sums / ns, dtype=float)


def bootstrap_gaps(eps: Array, *, n_boot: int = 2000, seed: int = 0) -> Array:
    """B bootstrap replicates of G, resampling pairs (rows) with replacement."""
    return np.asarray(np.nansum(np.abs(bootstrap_means(eps, n_boot=n_boot, seed=seed)), axis=1), dtype=float)


def gap_interval(eps: Array, means: Array, *, level: float = 0.95) -> tuple[float, float]:
    """A bias-aware interval for G = sum |D_j| that contains the estimate and keeps its coverage
    when some D_j are 0 (where a percentile interval of G* does neither: |.| pushes every
    replicate up, and at D_j = 0 the bootstrap of |D_j| is biased by the noise alone).

    Lower bound: the distance from 0 of a simultaneous (1 - alpha/2) bootstrap band for the D_j
    (max-|t| over categories of the replicates' centred, standardised means), summed: a category
    whose band holds 0 adds 0. Upper bound: the (1 - alpha/2) percentile of G*, or G if larger.
    Each bound misses with probability at most alpha/2, so the interval covers with at least
    ``level`` (checked by simulation in the tests)."""
    alpha = 1 - level
    with np.errstate(all="ignore"):
        d_hat = np.nanmean(eps, axis=0)
        se = np.nanstd(means, axis=0, ddof=1)
        t = np.abs(means - d_hat) / np.where(se > 0, se, np.inf)
        worst = np.nanmax(np.where(np.isnan(t), -np.inf, t), axis=1)
    keep = np.isfinite(d_hat)
    c = float(np.quantile(worst[np.isfinite(worst)], 1 - alpha / 2)) if np.isfinite(worst).any() else 0.0
    low_j, high_j = d_hat - c * np.nan_to_num(se), d_hat + c * np.nan_to_num(se)
    distance = np.where((low_j <= 0) & (high_j >= 0), 0.0, np.minimum(np.abs(low_j), np.abs(high_j)))
    estimate = float(np.sum(np.abs(d_hat[keep])))
    g_star = np.nansum(np.abs(means), axis=1)
    upper = max(float(np.percentile(g_star, 100 * (1 - alpha / 2))), estimate)
    return float(np.sum(distance[keep])), upper


def bootstrap_gaps_loop(eps: Array, *, n_boot: int = 2000, seed: int = 0) -> Array:
    """The same replicates, one resample at a time (the straightforward version, for the bench)."""
    rng = np.random.default_rng(seed)
    n = eps.shape[0]
    out = np.empty(n_boot)
    for b in range(n_boot):
        idx = np.repeat(np.arange(n), np.bincount(rng.integers(0, n, n), minlength=n))
        out[b] = gap(eps[idx])
    return out


@dataclass
class GapResult:
    """G with its bias-aware interval (``ci_low``, ``ci_high``: the default in tables and
    plots; see :func:`gap_interval`) and the percentile interval published studies report
    (``pct_low``, ``pct_high``), which can miss the estimate."""

    group: str
    gap: float
    ci_low: float
    ci_high: float
    n_pairs: int
    pct_low: float = float("nan")
    pct_high: float = float("nan")
    interval: str = "bias-aware"
    p_zero: float = float("nan")  # sign-flip permutation p-value of G = 0


def treatment_gaps(
    groups: dict[str, Array],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    clusters: dict[str, object] | None = None,
    test: str = "permutation",
) -> tuple[list[GapResult], dict[str, dict[str, float]]]:
    """G per group with its bias-aware and percentile CIs, and a matrix of two-sided p-values
    for G_a = G_b by ``test``:

    - ``permutation`` (the default): :func:`permutation_gap_p`, ``n_boot`` permutations; its
      type-I error is alpha (checked in ``make validity``);
    - ``bootstrap``: each group resampled independently (seed + its index) and
      2 * min(P(G_a* - G_b* <= 0), P(G_a* - G_b* >= 0)), capped at 1 (conservative: about
      0.5 % of null studies below 5 %).

    Each result's ``p_zero`` is the sign-flip permutation p-value of G = 0.
    """
    if test not in GAP_TESTS:
        raise ValueError(f"test must be one of {GAP_TESTS}")
    names = list(groups)
    draws = {}
    results = []
    tail = (1 - level) / 2 * 100
    for i, name in enumerate(names):
        means = bootstrap_means(
            groups[name], n_boot=n_boot, seed=seed + i, clusters=clusters.get(name) if clusters else None
        )
        draws[name] = np.asarray(np.nansum(np.abs(means), axis=1), dtype=float)
        low, high = np.percentile(draws[name], [tail, 100 - tail])
        ci_low, ci_high = gap_interval(groups[name], means, level=level)
        results.append(
            GapResult(
                name,
                gap(groups[name]),
                ci_low,
                ci_high,
                int(groups[name].shape[0]),
                pct_low=float(low),
                pct_high=float(high),
                p_zero=sign_flip_gap_p(
                    groups[name], n_perm=n_boot, seed=seed + i, clusters=clusters.get(name) if clusters else None
                ),
            )
        )
    matrix: dict[str, dict[str, float]] = {}
    for a in names:
        matrix[a] = {}
        for b in names:
            if a == b:
                matrix[a][b] = 1.0
                continue
            if test == "permutation":
                i, j = sorted((names.index(a), names.index(b)))
                first, second = names[i], names[j]  # the same permutations for (a, b) and (b, a)
                pair = (clusters[first], clusters[second]) if clusters else None
                matrix[a][b] = permutation_gap_p(
                    groups[first], groups[second], n_perm=n_boot, seed=seed + 7919 * (i + 1) + j, clusters=pair
                )
                continue
            diff = draws[a] - draws[b]
            tail = min(float(np.mean(diff <= 0)), float(np.mean(diff >= 0)))
            matrix[a][b] = min(1.0, 2 * tail)
    return results, matrix


GAP_TESTS = ("permutation", "bootstrap")


def _membership(
    units: NDArray[np.intp],
    n_units: int,
    strata: NDArray[np.intp] | None,
    first: int,
    n_perm: int,
    rng: np.random.Generator,
) -> Array:
    """n_perm x rows: 1 where a permuted labelling puts the row in the first group. Without
    strata, the units (rows, or whole clusters) are shuffled and the first ``first`` units form
    the first group; with strata, the group labels are shuffled among the rows of each stratum."""
    if strata is None:
        keys = rng.random((n_perm, n_units)).argsort(axis=1)
        in_first = np.zeros((n_perm, n_units))
        np.put_along_axis(in_first, keys[:, :first], 1.0, axis=1)
        return np.asarray(in_first[:, units], dtype=float)
    out = np.empty((n_perm, len(units)))
    labels = (np.arange(len(units)) < first).astype(float)  # rows of the first group come first
    for stratum in np.unique(strata):
        rows = np.flatnonzero(strata == stratum)
        keys = rng.random((n_perm, len(rows))).argsort(axis=1)
        out[:, rows] = labels[rows][keys]
    return out


def permutation_gap_p(
    first: Array,
    second: Array,
    *,
    n_perm: int = 2000,
    seed: int = 0,
    clusters: tuple[object, object] | None = None,
) -> float:
    """Two-sided permutation p-value for G_first = G_second: the groups' labels are permuted
    (pairs, or whole clusters when every cluster lies in one group; within clusters when a
    cluster spans both) and |G_first* - G_second*| compared with the observed difference.
    p = (1 + #{T* >= T}) / (1 + n_perm): exact under exchangeability of the groups' pairs."""
    rng = np.random.default_rng(seed)
    rows = np.vstack([first, second])
    n_first = first.shape[0]
    valid = ~np.isnan(rows)
    filled = np.where(valid, rows, 0.0)
    observed = abs(gap(first) - gap(second))
    units, strata, n_units, first_units = np.arange(len(rows)), None, len(rows), n_first
    if clusters is not None:
        labels = np.concatenate([np.asarray(clusters[0], dtype=str), np.asarray(clusters[1], dtype=str)])
        names, units = np.unique(labels, return_inverse=True)
        in_first = set(labels[:n_first].tolist())
        if in_first.isdisjoint(labels[n_first:].tolist()):  # nested: clusters move whole
            n_units = len(names)
            order = np.argsort([name not in in_first for name in names], kind="stable")
            rank = np.empty(len(names), dtype=int)
            rank[order] = np.arange(len(names))
            units, first_units = rank[units], len(in_first)
        else:  # crossed: labels permuted within each cluster
            strata, units = units, np.arange(len(rows))
    member = _membership(units, n_units, strata, first_units, n_perm, rng)
    with np.errstate(all="ignore"):
        g_first = np.nansum(np.abs((member @ filled) / (member @ valid)), axis=1)
        g_second = np.nansum(np.abs(((1 - member) @ filled) / ((1 - member) @ valid)), axis=1)
    extreme = int(np.sum(np.abs(g_first - g_second) >= observed - 1e-12))
    return float((1 + extreme) / (1 + n_perm))


def sign_flip_gap_p(eps: Array, *, n_perm: int = 2000, seed: int = 0, clusters: object = None) -> float:
    """One-sided permutation p-value for G = 0 against G > 0: the treatment arms swapped at
    random within each pair (or each cluster of pairs), which turns epsilon into -epsilon.
    Exact when, with no treatment effect, a pair's epsilon is as likely as its negative."""
    rng = np.random.default_rng(seed)
    valid = ~np.isnan(eps)
    filled = np.where(valid, eps, 0.0)
    counts = valid.sum(axis=0)
    if clusters is None:
        units, k = np.arange(eps.shape[0]), eps.shape[0]
    else:
        _, units = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
        k = int(units.max()) + 1 if len(units) else 0
    signs = rng.choice([-1.0, 1.0], size=(n_perm, k))[:, units]
    with np.errstate(all="ignore"):
        observed = float(np.nansum(np.abs(filled.sum(axis=0) / counts)))
        flipped = np.nansum(np.abs((signs @ filled) / counts), axis=1)
    return float((1 + int(np.sum(flipped >= observed - 1e-12))) / (1 + n_perm))


def positional_consistency(score_ab: Array, score_ba: Array) -> dict[str, float]:
    """Share of category verdicts that name the same response in both orders.

    Consistent: sign(score_ab) == sign(-score_ba) (a tie in both orders counts as
    consistent); only rows with both orders valid count.
    """
    ok = ~np.isnan(score_ab) & ~np.isnan(score_ba)
    a, b = score_ab[ok], score_ba[ok]
    consistent = np.sign(a) == np.sign(-b)
    return {
        "n": float(ok.sum()),
        "consistency": float(np.mean(consistent)) if ok.any() else float("nan"),
        "both_zero": float(np.mean((a == 0) & (b == 0))) if ok.any() else float("nan"),
    }


def no_difference_share(eps: Array) -> float:
    """Share of pairs whose symmetrized score is 0 in every category (pairs with any NaN left out)."""
    complete = ~np.isnan(eps).any(axis=1)
    return float(np.mean(np.all(eps[complete] == 0, axis=1))) if complete.any() else float("nan")


def robustness(d_first: Array, d_second: Array) -> dict[str, float]:
    """Spearman correlation between two D vectors (e.g. two judges, or original vs neutralised)."""
    from scipy.stats import spearmanr

    res = spearmanr(d_first, d_second)
    return {"spearman": float(res.statistic), "p": float(res.pvalue), "n": float(len(d_first))}
