from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wilcoxon

from jurybench.stats._pairwise import bootstrap_gaps_loop, wilcoxon_method
from jurybench.stats.functions import (
    bootstrap_gaps,
    directional_differences,
    gap,
    no_difference_share,
    positional_consistency,
    robustness,
    treatment_gaps,
)


def test_directional_matches_scipy_and_hand_means() -> None:
    eps = np.array([[1.0, 0.0], [1.5, -0.5], [0.5, 0.0], [2.0, 0.5], [0.0, -1.0], [1.0, np.nan]])
    rows = directional_differences(eps, ["logos", "ethos"])
    # logos D = (1 + 1.5 + .5 + 2 + 0 + 1) / 6 = 1.0; ethos D over 5 valid = (0 - .5 + 0 + .5 - 1) / 5 = -0.2
    assert rows[0]["D"] == pytest.approx(1.0) and rows[1]["D"] == pytest.approx(-0.2)
    assert (rows[0]["n"], rows[0]["n_zero"], rows[1]["n"], rows[1]["n_zero"]) == (6, 1, 5, 2)
    # logos has ties (1, 1) and a zero: the tie-corrected normal approximation is used.
    assert wilcoxon_method(eps[:, 0]) == "approx"
    expected = wilcoxon(eps[:, 0], zero_method="wilcox", method="approx").pvalue
    assert rows[0]["p"] == pytest.approx(expected)
    zsplit = directional_differences(eps, ["logos", "ethos"], zero_method="zsplit")
    assert zsplit[0]["p"] == pytest.approx(wilcoxon(eps[:, 0], zero_method="zsplit", method="approx").pvalue)
    # No ties or zeros and n <= 50: the exact distribution, as scipy's default gives.
    clean = np.array([[0.3], [-1.2], [2.5], [0.7], [1.9], [-0.4], [1.1]])
    assert wilcoxon_method(clean[:, 0]) == "exact"
    assert directional_differences(clean, ["c"])[0]["p"] == pytest.approx(wilcoxon(clean[:, 0]).pvalue)
    # Holm over two tests: min(1, 2 * p) for the smaller p.
    assert rows[0]["p_holm"] == pytest.approx(min(1.0, 2 * min(rows[0]["p"], rows[1]["p"])))


def test_all_zero_category_has_no_test() -> None:
    rows = directional_differences(np.zeros((5, 1)), ["x"])
    assert np.isnan(rows[0]["p"]) and rows[0]["D"] == 0


def test_gap_by_hand() -> None:
    # D = [(1 + 2 + 0) / 3, (-1 + 0 - 2) / 3] = [1, -1]; G = |1| + |-1| = 2
    assert gap(np.array([[1.0, -1.0], [2.0, 0.0], [0.0, -2.0]])) == pytest.approx(2.0)


def test_vectorised_bootstrap_equals_the_loop() -> None:
    rng = np.random.default_rng(1)
    eps = rng.normal(0.3, 1, size=(40, 5))
    eps[3, 2] = np.nan
    fast = bootstrap_gaps(eps, n_boot=300, seed=5)
    slow = bootstrap_gaps_loop(eps, n_boot=300, seed=5)
    assert fast == pytest.approx(slow, abs=1e-12)


def test_planted_gap_is_recovered_and_tested() -> None:
    rng = np.random.default_rng(2)
    strong = rng.normal(0.8, 1, size=(150, 19))  # true G = 19 * 0.8 = 15.2
    weak = rng.normal(0.1, 1, size=(150, 19))
    results, p = treatment_gaps({"strong": strong, "weak": weak}, n_boot=2000, seed=0)
    by = {r.group: r for r in results}
    assert by["strong"].ci_low < 15.2 < by["strong"].ci_high
    assert p["strong"]["weak"] < 0.001 and p["weak"]["strong"] < 0.001 and p["strong"]["strong"] == 1.0


def test_null_p_values_look_uniform() -> None:
    """Under H0 (epsilon symmetric about 0) the Wilcoxon p-values are roughly uniform."""
    ps = []
    for seed in range(300):
        eps = np.random.default_rng(seed).normal(0, 1, size=(40, 1))
        ps.append(directional_differences(eps, ["c"])[0]["p"])
    ps = np.array(ps)
    assert 0.02 <= np.mean(ps < 0.05) <= 0.09
    assert 0.4 <= np.mean(ps < 0.5) <= 0.6


def test_positional_consistency_and_no_difference_by_hand() -> None:
    # consistent when sign(ab) == sign(-ba): (2,-1) yes, (1,1) no, (0,0) yes (tie both), (-1,2) yes
    got = positional_consistency(np.array([2.0, 1, 0, -1, np.nan]), np.array([-1.0, 1, 0, 2, 1]))
    assert got == {"n": 4.0, "consistency": 0.75, "both_zero": 0.25}
    assert no_difference_share(np.array([[0.0, 0.0], [0.0, 1.0], [0.0, np.nan], [0.0, 0.0]])) == pytest.approx(2 / 3)


def test_robustness_is_spearman() -> None:
    got = robustness(np.array([1.0, 2, 3, 4]), np.array([10.0, 30, 20, 40]))
    assert got["spearman"] == pytest.approx(0.8)


def test_gap_interval_by_hand() -> None:
    """Two categories, four pairs. D = [0.5, 0]; three bootstrap replicates of the means given by
    hand: category 1 {0.2, 0.5, 0.8} (sd 0.3), category 2 {-0.3, 0, 0.3} (sd 0.3). Standardised
    |deviations|: replicate 1 max(1, 1) = 1, replicate 2 max(0, 0) = 0, replicate 3 max(1, 1) = 1.
    At level 0.5 the band uses the 0.75 quantile of [1, 0, 1] = 1: category 1's band is
    [0.2, 0.8] (distance 0.2 from 0), category 2's [-0.3, 0.3] holds 0 -> lower bound 0.2.
    G* = |0.2| + |-0.3| = 0.5, 0.5, 1.1: the 75th percentile is 0.8 -> upper bound 0.8."""
    from jurybench.stats.functions import gap_interval

    eps = np.array([[1.0, 1.0], [0.0, -1.0], [1.0, 0.0], [0.0, 0.0]])
    means = np.array([[0.2, -0.3], [0.5, 0.0], [0.8, 0.3]])
    low, high = gap_interval(eps, means, level=0.5)
    assert low == pytest.approx(0.2) and high == pytest.approx(0.8)


@pytest.mark.parametrize("n_effects", [0, 3])
def test_gap_interval_covers_a_planted_zero_effect(n_effects: int) -> None:
    """Simulation: 12 categories, 80 pairs, true D_j = 0.5 in ``n_effects`` categories and 0 in
    the rest. The percentile interval of G* misses the true G almost always (its replicates sit
    above it); the bias-aware interval covers it at least at its level and always holds the
    estimate."""
    from jurybench.stats.functions import bootstrap_means, gap_interval

    rng = np.random.default_rng(11)
    truth = np.zeros(12)
    truth[:n_effects] = 0.5
    true_g = float(np.abs(truth).sum())
    covered = percentile_covered = inside = 0
    sims = 150
    for s in range(sims):
        eps = rng.normal(truth, 1.0, size=(80, 12))
        means = bootstrap_means(eps, n_boot=400, seed=s)
        low, high = gap_interval(eps, means)
        g_star = np.abs(means).sum(axis=1)
        p_low, p_high = np.percentile(g_star, [2.5, 97.5])
        covered += low <= true_g <= high
        percentile_covered += p_low <= true_g <= p_high
        inside += low <= gap(eps) <= high
    assert covered / sims >= 0.93  # nominal 0.95; 150 draws
    assert percentile_covered / sims <= 0.2
    assert inside == sims


def test_cluster_bootstrap_by_hand() -> None:
    """One category, two clusters of two pairs: cluster a's epsilons are +1, cluster b's -1.
    Drawing whole clusters gives D* = +1 (a, a), 0 (a, b or b, a) or -1 (b, b), so G* is 0 or 1;
    drawing pairs gives other values too (e.g. three +1 and one -1: D* = 0.5)."""
    from jurybench.stats.functions import bootstrap_means

    eps = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    by_cluster = np.abs(bootstrap_means(eps, n_boot=500, seed=0, clusters=["a", "a", "b", "b"])).sum(axis=1)
    assert set(np.round(by_cluster, 12)) == {0.0, 1.0}
    by_pair = np.abs(bootstrap_means(eps, n_boot=500, seed=0)).sum(axis=1)
    assert 0.5 in set(np.round(by_pair, 12))
    # One pair per cluster, in row order: the same draws as resampling pairs.
    assert bootstrap_means(eps, n_boot=50, seed=3, clusters=["w", "x", "y", "z"]) == pytest.approx(
        bootstrap_means(eps, n_boot=50, seed=3)
    )


def test_the_permutation_gap_test_by_hand() -> None:
    """Issue 42, item 5. Two groups of two pairs, one category: G_a = |mean(2, 2)| = 2 and
    G_b = |mean(0, 0)| = 0, T = 2. Of the six ways to choose group a's two rows of four, only
    {2, 2} (T = 2) and {0, 0} (T = 2) are as extreme: p = 2/6 exactly, which the Monte Carlo
    p-value (1 + hits) / (1 + B) approaches."""
    from jurybench.stats._pairwise import permutation_gap_p, sign_flip_gap_p

    a, b = np.array([[2.0], [2.0]]), np.array([[0.0], [0.0]])
    assert permutation_gap_p(a, b, n_perm=20000, seed=1) == pytest.approx(1 / 3, abs=0.01)
    # Sign flips of (1, 1, 1): |mean| = 1 only when all signs agree, 2 of 8 ways: p = 1/4.
    assert sign_flip_gap_p(np.array([[1.0], [1.0], [1.0]]), n_perm=20000, seed=2) == pytest.approx(0.25, abs=0.01)
    # Clusters nested in groups move whole: a's two rows are one cluster, b's two rows another:
    # two ways to place the clusters, both as extreme: p = 1.
    assert permutation_gap_p(a, b, n_perm=500, seed=3, clusters=(np.array(["x", "x"]), np.array(["y", "y"]))) == 1.0


def test_the_permutation_gap_test_uses_its_alpha_where_the_bootstrap_did_not() -> None:
    """Issue 42, item 5 (fails before: the bootstrap test was the only one). Over 400 null
    studies the permutation test's type-I error is within 3-6 % at 5 %; the bootstrap test's is
    below 2 %."""
    from jurybench.validity import _gap as v

    rng = np.random.default_rng(42)
    null = [v.study(rng, 0.0, 60, 300, s) for s in range(400)]
    perm = np.mean([p <= 0.05 for p, _ in null])
    boot = np.mean([b <= 0.05 for _, b in null])
    assert 0.03 <= perm <= 0.06
    assert boot < 0.02
