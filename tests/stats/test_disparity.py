from __future__ import annotations

import numpy as np
import pytest

from jurybench.errors import JurybenchError
from jurybench.stats.functions import disparity, gini


def test_gini_by_hand() -> None:
    assert gini(np.array([0.5, 0.5])) == pytest.approx(0.0)
    # [0, 1]: 2 * (1*0 + 2*1) / (2 * 1) - 3/2 = 0.5
    assert gini(np.array([1.0, 0.0])) == pytest.approx(0.5)
    # [.2 .4 .6 .8]: sum i x = 6.0; 2 * 6 / (4 * 2) - 5/4 = 0.25
    assert gini(np.array([0.8, 0.2, 0.6, 0.4])) == pytest.approx(0.25)


def test_accuracy_counts_invalid_as_wrong_and_reports_gaps() -> None:
    # en: 4 instances, 3 correct -> .75; ko: 4, 2 correct + 1 invalid -> .5 (invalid rate .25);
    # zh: 4, 1 correct, 2 invalid -> .25 (invalid rate .5, excluded at 10%... unless threshold)
    groups = ["en"] * 4 + ["ko"] * 4 + ["zh"] * 4
    cats = ["joy", "joy", "anger", "anger"] * 3
    correct = np.array([1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0], bool)
    invalid = np.array([0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0], bool)
    got = disparity(groups, cats, correct, invalid, max_invalid_rate=0.3, reference="en", n_boot=200)
    assert got["excluded_for_invalid_rate"] == ["zh"] and got["groups"] == ["en", "ko"]
    assert got["accuracy"]["ko"]["*"] == {"n": 4.0, "accuracy": 0.5, "invalid_rate": 0.25}
    # joy: en 1.0, ko 1.0 -> gap 0; anger: en .5, ko 0 -> gap .5
    assert got["max_min_gap"] == {"anger": 0.5, "joy": 0.0}
    assert (got["mean_gap"], got["max_gap"]) == (0.25, 0.5)
    # Gini of [.75, .5]: sorted [.5, .75]; 2 * (.5 + 1.5) / (2 * 1.25) - 1.5 = 0.1
    assert got["gini"] == pytest.approx(0.1)
    assert got["reference_premium"] == pytest.approx(0.75 - 0.625)
    everyone = disparity(groups, cats, correct, invalid, max_invalid_rate=None, n_boot=50)
    assert everyone["groups"] == ["en", "ko", "zh"]
    with pytest.raises(JurybenchError, match="reference group 'fr'"):
        disparity(groups, cats, correct, invalid, reference="fr", n_boot=10)
