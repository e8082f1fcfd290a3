"""A calibrated A/B jury: logistic regression on the jurors' symmetrized scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurybench.calibration import apply_calibration, fit_calibration
from jurybench.datasets import import_llmbar
from jurybench.engine import EngineOptions, score
from jurybench.jury import load_jury_file
from jurybench.rubric import load_rubric
from tests.conftest import REPO


def test_preference_calibration_on_llmbar(con: Any, data_dir: Path, tmp_path: Path) -> None:
    import_llmbar(con, data_dir)
    score(
        con,
        load_rubric("preference"),
        load_jury_file(REPO / "juries" / "llmbar-mtbench-vanilla-norules.yaml"),
        where="dataset = 'llmbar-MT-Bench'",
        run_id="mt",
        options=EngineOptions(progress=False),
    )
    artifact, path = fit_calibration(con, "mt", group_by="item", out_dir=tmp_path)
    spec = artifact["criteria"]["preference"]
    report = spec["report"]
    assert report["n_pairs"] == 200 and report["n_test"] == 40
    accuracy = report["held_out_accuracy"]
    assert set(accuracy) == {"calibrated jury", "jury (majority)", "ChatGPT", "GPT-4", "LLaMA2", "PaLM2"}
    assert 0.5 < accuracy["calibrated jury"] <= 1.0
    # GPT-4 is the strongest judge: it gets the largest weight (weights are keyed by juror identity).
    labels = {j["key"]: j["label"] for j in artifact["jurors"]}
    assert labels[max(spec["weights"], key=spec["weights"].get)] == "GPT-4"
    # The jury baseline, recomputed by hand from the run's majority verdicts on the same held-out pairs.
    from sklearn.model_selection import GroupShuffleSplit

    gold = dict(con.execute("SELECT subject_id, value FROM human_labels WHERE criterion = 'preference'").fetchall())
    verdicts = dict(con.execute("SELECT pair_id, jury_score FROM jury_pairwise WHERE run_id = 'mt'").fetchall())
    pairs = sorted(p for p in verdicts if gold.get(p))
    _, test = next(GroupShuffleSplit(1, test_size=0.2, random_state=0).split(pairs, groups=pairs))
    right = [(verdicts[pairs[i]] or 0) * gold[pairs[i]] > 0 for i in test]
    assert accuracy["jury (majority)"] == pytest.approx(sum(right) / len(right))
    assert accuracy["jury (majority)"] > 0.5
    result = apply_calibration(con, path, "mt")
    assert result["rows"] == 200
    probs = con.execute("SELECT min(probability), max(probability) FROM calibrated_scores").fetchall()[0]
    assert 0 < probs[0] < 0.5 < probs[1] < 1
    assert json.loads(path.read_text())["kind"] == "preference"


def test_verdict_accuracy_counts_ties_and_missing_as_wrong() -> None:
    import numpy as np

    from jurybench.calibration._preference import verdict_accuracy

    # Scores +1 (A), -1 (B), 0 (tie), NaN (none), +0.5 (A) against truth A, A, A, B, A:
    # right, wrong, wrong, wrong, right -> 2 / 5.
    scores = np.array([1.0, -1.0, 0.0, np.nan, 0.5])
    assert verdict_accuracy(scores, np.array([1, 1, 1, 0, 1])) == 0.4
    # Truth B everywhere: only the -1 is right -> 1 / 5.
    assert verdict_accuracy(scores, np.zeros(5)) == 0.2
