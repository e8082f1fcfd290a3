"""Agreement statistics against published hand-worked values and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr

from jurybench.annotations import (
    bootstrap,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    leave_one_annotator_out,
    mean_pairwise_spearman,
    score_agreement,
)

nan = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders x 12 units.
RELIABILITY = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
).T


def test_krippendorff_alpha_matches_the_published_example() -> None:
    # Published: nominal 0.743, ordinal 0.815, interval 0.849 (unit 12 has one value: unpairable).
    # Nominal by hand: D_o = 10/40 * ... gives 1 - (4/40)/(... ) = 0.7434 (paper's coincidence matrix).
    assert krippendorff_alpha(RELIABILITY, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(RELIABILITY, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(RELIABILITY, "interval") == pytest.approx(0.849, abs=5e-4)


def test_interval_alpha_by_hand_on_a_tiny_matrix() -> None:
    # Units (1,2) and (3,3): n = 4 pairable values {1,2,3,3}.
    # D_o = (1/n) * sum_u 1/(m_u-1) * sum_{i!=j} d^2 = (1/4) * (2*1 + 0) = 0.5
    # D_e = 1/(n(n-1)) * sum over ordered pairs of distinct positions d^2:
    #       pairs (1,2):1 (1,3):4 (1,3):4 (2,3):1 (2,3):1 (3,3):0 -> 11, doubled 22 -> 22/12
    # alpha = 1 - 0.5 / (22/12) = 1 - 6/22 = 8/11
    matrix = np.array([[1.0, 2.0], [3.0, 3.0]])
    assert krippendorff_alpha(matrix, "interval") == pytest.approx(8 / 11, abs=1e-12)


def test_fleiss_kappa_matches_the_standard_worked_example() -> None:
    # Fleiss (1971) style example: 10 subjects, 14 raters, 5 categories; P-bar 0.378,
    # P-e 0.213, kappa = (0.378 - 0.213) / (1 - 0.213) = 0.210.
    counts = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
              [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]  # fmt: skip
    ratings = np.array([[c for c, k in enumerate(row, 1) for _ in range(k)] for row in counts], float)
    assert fleiss_kappa(ratings) == pytest.approx(0.20993, abs=1e-5)


def test_cohen_kappa_by_hand() -> None:
    # a = [A A B B], b = [A B B B]: p_o = 3/4; p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2; kappa = 0.5
    assert cohen_kappa(np.array([1, 1, 0, 0]), np.array([1, 0, 0, 0])) == pytest.approx(0.5)


def test_pairwise_spearman_and_scores_match_scipy() -> None:
    rng = np.random.default_rng(3)
    truth = rng.normal(size=60)
    m = np.column_stack([truth + rng.normal(scale=s, size=60) for s in (0.5, 1.0, 2.0)])
    expected = np.mean([spearmanr(m[:, i], m[:, j]).statistic for i, j in ((0, 1), (0, 2), (1, 2))])
    assert mean_pairwise_spearman(m) == pytest.approx(expected, abs=1e-12)
    got = score_agreement(m[:, 0], truth)
    assert got["pearson"] == pytest.approx(pearsonr(m[:, 0], truth).statistic)
    assert got["spearman"] == pytest.approx(spearmanr(m[:, 0], truth).statistic)
    assert got["kendall"] == pytest.approx(kendalltau(m[:, 0], truth).statistic)


def test_exact_and_within_one_round_both_sides() -> None:
    # rounded pred [1, 3, 5, 2], rounded truth [1, 2, 3, 2]: diffs 0, 1, 2, 0
    got = score_agreement(np.array([1.2, 3.4, 4.6, 2.0]), np.array([1.0, 2.4, 3.3, 2.2]))
    assert got["exact"] == pytest.approx(2 / 4) and got["within_one"] == pytest.approx(3 / 4)
    assert got["mae"] == pytest.approx((0.2 + 1.0 + 1.3 + 0.2) / 4)


def test_leave_one_annotator_out() -> None:
    m = np.array([[1, 2, 3], [2, 2, 2], [3, 4, 5], [5, 4, 3.0]])
    ceiling = leave_one_annotator_out(m)
    # annotator 0 vs mean of 1 and 2: [2.5, 2, 4.5, 3.5]
    assert ceiling[0]["pearson"] == pytest.approx(pearsonr([1, 2, 3, 5], [2.5, 2, 4.5, 3.5]).statistic)


def test_bootstrap_is_seeded_and_covers_the_truth() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(loc=1.0, size=400)
    first = bootstrap(lambda idx: float(np.mean(x[idx])), len(x), n_boot=500, seed=7)
    again = bootstrap(lambda idx: float(np.mean(x[idx])), len(x), n_boot=500, seed=7)
    assert first == again
    assert first.low < 1.0 < first.high
    # Width near 2 * 1.96 * sd / sqrt(n) = 0.196.
    assert first.high - first.low == pytest.approx(0.196, abs=0.04)
