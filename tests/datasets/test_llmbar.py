"""LLMBar's real recorded judge completions, replayed through the engine (reads ../shared)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jurybench.datasets import import_llmbar
from jurybench.datasets.llmbar import compare_with_upstream, upstream_counts
from jurybench.engine import EngineOptions, score
from jurybench.jury import load_jury_file
from jurybench.rubric import load_rubric
from jurybench.rubric._answers import parse_with_rules
from tests.conftest import REPO

JURIES = [
    ("natural-vanilla", "Natural", "Vanilla"),
    ("natural-vanilla-norules", "Natural", "Vanilla_NoRules"),
    ("natural-cot", "Natural", "CoT"),
    ("mtbench-vanilla-norules", "MT-Bench", "Vanilla_NoRules"),
]


@pytest.fixture
def llmbar_store(con: Any, data_dir: Path) -> Any:
    result = import_llmbar(con, data_dir)
    assert (result.pairs, result.labels) == (300, 300)
    return con


def test_import_is_idempotent_and_complete(llmbar_store: Any, data_dir: Path) -> None:
    import_llmbar(llmbar_store, data_dir)
    counts = llmbar_store.execute(
        "SELECT (SELECT count(*) FROM items), (SELECT count(*) FROM pairs), (SELECT count(*) FROM human_labels)"
    ).fetchall()[0]
    assert counts == (600, 300, 300)
    # 22 judge/strategy files; 2 orders per pair: Natural 18 x 100 x 2 + MT-Bench 4 x 200 x 2.
    assert llmbar_store.execute("SELECT count(*) FROM recordings").fetchall()[0][0] == 18 * 200 + 4 * 400


@pytest.mark.parametrize(("jury", "subset", "strategy"), JURIES)
def test_replayed_figures_equal_upstream_statistics(
    llmbar_store: Any, data_dir: Path, jury: str, subset: str, strategy: str
) -> None:
    jurors = load_jury_file(REPO / "juries" / f"llmbar-{jury}.yaml")
    result = score(
        llmbar_store,
        load_rubric("preference"),
        jurors,
        where=f"dataset = 'llmbar-{subset}'",
        run_id=jury,
        options=EngineOptions(progress=False),
    )
    n_pairs = 100 if subset == "Natural" else 200
    assert result.n_tasks == len(jurors.jurors) * n_pairs * 2
    lines, ok = compare_with_upstream(llmbar_store, jury, data_dir, subset, strategy)
    assert ok, "\n".join(lines)
    assert lines[-1] == f"{len(jurors.jurors)} judges checked against statistics.json: all match"
    # Spot-check one figure by reading statistics.json directly.
    gpt4 = upstream_counts(data_dir, subset, "GPT-4", strategy)
    stats = json.loads(
        (data_dir / "llmbar" / subset / "evaluators" / "GPT-4" / strategy / "statistics.json").read_text()
    )
    assert gpt4["correct_ab"] == int(re.match(r"(\d+) /", stats["correct_False"]).group(1))  # type: ignore[union-attr]


def test_our_rules_reproduce_every_upstream_winner(data_dir: Path) -> None:
    """Each raw completion parsed by our rules gives the winner upstream recorded."""
    rubric = load_rubric("preference")
    checked = 0
    for result_file in sorted((data_dir / "llmbar").glob("*/evaluators/*/*/result.json")):
        judge, strategy = result_file.parent.parent.name, result_file.parent.name
        rules = "stated_winner" if strategy == "CoT" and judge != "PaLM2" else "verdict_line"
        for entry in json.loads(result_file.read_text()):
            for key, swapped in (("swap = False", False), ("swap = True", True)):
                text = entry["results"][0][key]["completion"][0]
                outcome = parse_with_rules(rubric, rules, text, None)
                ours = None
                if outcome.status == "valid":
                    first_wins = outcome.scores == {"preference": 1}
                    ours = ("1" if first_wins else "2") if not swapped else ("2" if first_wins else "1")
                assert ours == entry["results"][0][key]["winner"], (result_file, text[:200])
                checked += 1
    assert checked == 18 * 200 + 4 * 400


def test_jury_figures_count_ties_and_abstentions(llmbar_store: Any) -> None:
    from jurybench.annotations import preference_accuracy

    score(
        llmbar_store,
        load_rubric("preference"),
        load_jury_file(REPO / "juries" / "llmbar-natural-cot.yaml"),
        where="dataset = 'llmbar-Natural'",
        run_id="cot",
        options=EngineOptions(progress=False),
    )
    report = preference_accuracy(llmbar_store, "cot", annotator="gold")
    jury = report.jury.counts
    # Six jurors can split 3-3: such pairs are ties, never counted correct.
    assert jury["tie_ab"] + jury["correct_ab"] <= 100
    assert jury.get("abstain_ab", 0) == 0
    # Recompute the AB majority vote by hand from the stored verdicts.
    rows = llmbar_store.execute(
        """SELECT j.pair_id, sum(CASE WHEN j.score > 0 THEN 1 ELSE 0 END) AS votes_a,
                  sum(CASE WHEN j.score < 0 THEN 1 ELSE 0 END) AS votes_b, h.value
           FROM pairwise_judgments j JOIN run_calls rc USING (call_key)
           JOIN human_labels h ON h.subject_id = j.pair_id
           WHERE rc.run_id = 'cot' AND j.presented_order = 'AB' AND j.status = 'valid'
           GROUP BY j.pair_id, h.value"""
    ).fetchall()
    correct = sum(1 for _, a, b, gold in rows if (a > b and gold > 0) or (b > a and gold < 0))
    ties = sum(1 for _, a, b, _ in rows if a == b)
    assert (correct, ties) == (jury["correct_ab"], jury["tie_ab"])
