"""The juror's answer on a classification subject: its most frequent label over its samples, a
tie going to the first label in the rubric's order (one rule for the data an alignment measures
and for the answers of a variant's run)."""

from __future__ import annotations

from jurybench.alignment import modal_label


def test_the_most_frequent_label_and_a_tie_to_the_rubrics_first() -> None:
    labels = ["joy", "anger", "fear"]
    assert modal_label({"fear": 3, "joy": 1}, labels) == 2.0
    assert modal_label({"anger": 2, "joy": 2, "fear": 1}, labels) == 0.0  # joy comes first in the rubric
    assert modal_label({"fear": 2, "anger": 2}, labels) == 1.0
    assert modal_label({}, labels) is None
