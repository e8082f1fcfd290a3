from __future__ import annotations

import json
from pathlib import Path

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


def test_resampling_groups_draws_whole_groups_a_hand_worked_case() -> None:
    # Two groups with accuracies 0.5 and 1.0. Drawing two groups with replacement gives
    # {0.5, 0.5} or {1, 1} (Gini 0) half the time and {0.5, 1} half the time, whose Gini is
    # 2 * (1 * 0.5 + 2 * 1) / (2 * 1.5) - 3 / 2 = 1/6. So the 2.5 % and 97.5 % points are 0 and 1/6.
    group = ["a"] * 4 + ["b"] * 4
    correct = np.array([1, 1, 0, 0, 1, 1, 1, 1], dtype=float)
    result = disparity(group, ["x"] * 8, correct, np.zeros(8), n_boot=4000, seed=1, resample="groups")
    assert result["gini"] == pytest.approx(1 / 6) and result["resample"] == "groups"
    assert result["gini_ci"] == pytest.approx([0.0, 1 / 6])
    # Resampling rows within the groups instead: group b is always 1.0, group a varies, so the
    # Gini can exceed 1/6 (a at 0.25 gives 2 * (0.25 + 2) / (2 * 1.25) - 1.5 = 0.3).
    rows = disparity(group, ["x"] * 8, correct, np.zeros(8), n_boot=4000, seed=1)
    assert rows["resample"] == "instances" and rows["gini_ci"][1] > 1 / 6


def test_an_unknown_resampling_unit_is_refused() -> None:
    from jurybench.errors import JurybenchError

    with pytest.raises(JurybenchError, match="--resample 'languages' is not valid"):
        disparity(["a", "b"], ["x", "x"], np.array([1.0, 0.0]), np.zeros(2), resample="languages")


def test_the_cli_passes_the_resampling_unit_and_records_it(tmp_path: Path) -> None:
    import json

    from tests.conftest import run_cli

    rows = [
        {"grp": g, "category": "x", "correct": k < n, "invalid": False}
        for g, n in (("a", 2), ("b", 4))
        for k in range(4)
    ]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = str(tmp_path / "d.duckdb")
    out = run_cli(
        "stats",
        "disparity",
        "--file",
        str(data),
        "--resample",
        "groups",
        "--boot",
        "2000",
        "--seed",
        "1",
        "--format",
        "json",
        "--db",
        db,
    )
    assert out.exit_code == 0, out.stderr
    shown = json.loads(out.stdout)
    assert shown["params"]["resample"] == "groups" and shown["result"]["resample"] == "groups"
    assert shown["result"]["gini_ci"] == pytest.approx([0.0, 1 / 6])  # as the hand-worked case above


def test_cluster_resampling_keeps_translated_items_together_by_hand() -> None:
    """Two languages, two source items (x, y) each translated into both: x is right and y wrong
    in both languages. Drawing items keeps both languages' accuracies equal in every replicate,
    so the Gini CI is exactly [0, 0]; drawing rows within each language does not."""
    from jurybench.stats.functions import disparity

    group, category = ["en", "en", "ko", "ko"], ["c", "c", "c", "c"]
    correct, invalid = np.array([1, 0, 1, 0], dtype=bool), np.zeros(4, dtype=bool)
    by_item = disparity(
        group, category, correct, invalid, n_boot=300, resample="clusters:item", clusters=["x", "y", "x", "y"]
    )
    assert by_item["gini_ci"] == [0.0, 0.0] and by_item["resample"] == "clusters:item"
    by_row = disparity(group, category, correct, invalid, n_boot=300)
    assert by_row["gini_ci"][1] > 0


def test_disparity_clusters_from_the_cli(tmp_path: Path) -> None:
    import json

    from tests.conftest import run_cli, write

    rows = "grp,category,correct,invalid,item\n" + "".join(
        f"{lang},c,{int(k % 3 != 0)},0,s{k}\n" for lang in ("en", "ko", "zh") for k in range(12)
    )
    path = write(tmp_path / "d.csv", rows)
    done = run_cli(
        "stats", "disparity", "--file", str(path), "--resample", "clusters:item", "--boot", "100", "--format", "json"
    )
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["resample"] == "clusters:item" and result["gini_ci"] == [0.0, 0.0]  # same items right everywhere
    bad = run_cli("stats", "disparity", "--file", str(path), "--resample", "clusters:prompt")
    assert bad.exit_code == 2 and "has no column 'prompt'" in bad.stderr


def test_a_model_without_a_valid_answer_is_said_so_without_warnings_and_plots(tmp_path: Path) -> None:
    """Issue 45, item 5: every answer invalid. numpy warned (mean of an empty slice, all-NaN
    max) on stderr, and plot disparity crashed on the recorded null gaps (int + None)."""
    import warnings

    from jurybench.plots import draw

    groups = ["en", "en", "de", "de"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = disparity(groups, ["joy"] * 4, np.zeros(4), np.ones(4), reference="en", n_boot=50)
        kept = disparity(groups, ["joy"] * 4, np.array([1.0, 0, 1, 1]), np.zeros(4), reference="en", n_boot=50)
    assert result["no_valid_answers"] is True and "no valid answers" in str(result["note"])
    assert np.isnan(result["mean_gap"]) and np.isnan(result["gini"])  # type: ignore[arg-type]
    assert "no_valid_answers" not in kept
    recorded = json.loads(json.dumps({"models": {"m-ok": kept, "m-none": result}}, default=str).replace("NaN", "null"))
    assert draw("disparity", recorded, tmp_path / "d.png").stat().st_size > 0
    svg = draw("disparity", recorded, tmp_path / "d.svg").read_text()
    assert "no valid answers" in svg and "m-ok" in svg
