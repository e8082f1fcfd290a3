from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import friedmanchisquare, kendalltau, mannwhitneyu, ttest_1samp, ttest_ind, wilcoxon

from jurybench.stats.functions import friedman_posthoc, holm, kendall_rankings, mann_whitney, one_sample_t, welch_t


def test_friedman_and_holm_posthoc_match_scipy() -> None:
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(30, 3)) + np.array([0.0, 0.3, 1.0])
    scores[4, 1] = np.nan  # an incomplete block is dropped
    got = friedman_posthoc(scores, ["a", "b", "c"])
    complete = np.delete(scores, 4, axis=0)
    assert got["n_blocks"] == 29 and got["n_dropped"] == 1
    assert got["p"] == pytest.approx(friedmanchisquare(*complete.T).pvalue)
    # Continuous scores: no ties, 29 blocks, so the exact distribution (scipy's default here too).
    raw = [wilcoxon(complete[:, i] - complete[:, j]).pvalue for i, j in ((0, 1), (0, 2), (1, 2))]
    adjusted = holm(raw)
    assert got["posthoc_holm"]["a"]["c"] == pytest.approx(adjusted[1]) and got["posthoc_holm"]["c"][
        "a"
    ] == pytest.approx(adjusted[1])
    assert got["mean_rank"]["c"] > got["mean_rank"]["a"]


def test_t_tests_and_rank_tests_match_scipy() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(3.2, 1, 25), rng.normal(3.8, 2, 40)
    assert one_sample_t(a, 3.0)["p"] == pytest.approx(ttest_1samp(a, 3.0).pvalue)
    w = welch_t(a, b)
    assert w["p"] == pytest.approx(ttest_ind(a, b, equal_var=False).pvalue) and w["df"] < 63
    assert mann_whitney(a, b)["p"] == pytest.approx(mannwhitneyu(a, b).pvalue)
    assert kendall_rankings(np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4]))["tau"] == pytest.approx(
        kendalltau([1, 2, 3, 4], [1, 3, 2, 4]).statistic
    )


def test_mean_t_interval_is_the_hand_worked_t_interval() -> None:
    """mean 10, SD 2, n 4: t(0.975, 3) = 3.182446, so 10 ± 3.182446 · 2 / 2 = [6.817554, 13.182446]."""
    from jurybench.stats.functions import mean_t_interval

    low, high = mean_t_interval(10.0, 2.0, 4)
    assert low == pytest.approx(6.817554, abs=1e-6) and high == pytest.approx(13.182446, abs=1e-6)
    assert mean_t_interval(10.0, 2.0, 1) == (None, None)  # one value: no interval
    assert mean_t_interval(10.0, None, 5) == (None, None)
    assert mean_t_interval(10.0, float("nan"), 5) == (None, None)
    # 90 %: t(0.95, 3) = 2.353363
    assert mean_t_interval(10.0, 2.0, 4, level=0.9)[0] == pytest.approx(10 - 2.353363, abs=1e-6)
