from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from jurybench.stats.functions import benjamini_hochberg, holm


def test_holm_by_hand() -> None:
    # sorted p: .005 .01 .03 .04; times (4, 3, 2, 1): .02 .03 .06 .04; running max: .02 .03 .06 .06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_bh_by_hand_and_against_scipy() -> None:
    # sorted p * 4 / rank: .02 .02 .04 .04 (running min from the top keeps them)
    p = np.array([0.01, 0.04, 0.03, 0.005])
    assert benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    rng = np.random.default_rng(0)
    q = rng.uniform(size=30) ** 2
    assert benjamini_hochberg(q) == pytest.approx(false_discovery_control(q))


def test_nan_p_values_are_kept_and_not_counted() -> None:
    out = holm([0.01, np.nan, 0.02])
    assert np.isnan(out[1]) and out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.02)
