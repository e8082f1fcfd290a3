"""A calibrated A/B jury: logistic regression on the jurors' symmetrized scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jurybench.calibration import apply_calibration, fit_calibration
from jurybench.datasets import import_llmbar
from jurybench.jury import EngineOptions, load_jury_file, score
from jurybench.rubric import load_rubric
from tests.conftest import REPO


def test_preference_calibration_on_llmbar(con: Any, data_dir: Path, tmp_path: Path) -> None:
    import_llmbar(con, data_dir)
    score(con, load_rubric("preference"), load_jury_file(REPO / "juries" / "llmbar-mtbench-vanilla-norules.yaml"),
          where="dataset = 'llmbar-MT-Bench'", run_id="mt", options=EngineOptions(progress=False))  # fmt: skip
    artifact, path = fit_calibration(con, "mt", group_by="item", out_dir=tmp_path)
    spec = artifact["criteria"]["preference"]
    report = spec["report"]
    assert report["n_pairs"] == 200 and report["n_test"] == 40
    accuracy = report["held_out_accuracy"]
    assert set(accuracy) == {"calibrated jury", "majority vote", "ChatGPT", "GPT-4", "LLaMA2", "PaLM2"}
    assert 0.5 < accuracy["calibrated jury"] <= 1.0
    # GPT-4 is the strongest judge: it gets the largest weight.
    assert max(spec["weights"], key=spec["weights"].get) == "GPT-4"
    result = apply_calibration(con, path, "mt")
    assert result["rows"] == 200
    probs = con.execute("SELECT min(probability), max(probability) FROM calibrated_scores").fetchall()[0]
    assert 0 < probs[0] < 0.5 < probs[1] < 1
    assert json.loads(path.read_text())["kind"] == "preference"
