"""The HANNA fixture's stories are the ones HANNA's raters scored: their word counts follow the
released scores file's `Text length` of the same stories (the join the real-model alignment
rests on), and the ratings are whole points on 1..5."""

from __future__ import annotations

import numpy as np
import pytest

from tests.alignment.hanna import SCORES, human_row, stories


def test_the_fixture_stories_are_the_rated_ones() -> None:
    if not SCORES.exists():
        pytest.skip(f"HANNA's scores file not found at {SCORES} (set JURYBENCH_DATA)")
    row = human_row()
    found = stories()
    assert len(found) == 24
    positions = [int(s["position"]) for s in found]
    words = np.array([len(s["response"].split()) for s in found])
    lengths = np.array([row["Text length ¤§"][p] for p in positions])
    # words against the file's tokens: 0.91 over these 24 (0.995 over all 96 of the upstream
    # file), each story 0.6-1.0 words a token; one position off, 0.40 and ratios anywhere
    assert np.corrcoef(words, lengths)[0, 1] > 0.85
    assert all(0.6 <= r <= 1.0 for r in words / lengths)
    shifted = np.array([row["Text length ¤§"][(p + 1) % 96] for p in positions])
    assert np.corrcoef(words, shifted)[0, 1] < 0.6 and not all(0.6 <= r <= 1.0 for r in words / shifted)
    ratings = [row[f"Human {r} CH"][p] for r in (1, 2, 3) for p in positions]
    assert set(ratings) <= {1, 2, 3, 4, 5} and len(set(ratings)) >= 3
