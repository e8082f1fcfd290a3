"""LLMBar laid out as published: any subset folder with a dataset.json, and evaluator outputs of
other shapes skipped with a line naming them (they crashed the import with a TypeError)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def _write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


def _dataset(n: int, tag: str) -> list[dict[str, object]]:
    # our own tiny texts in LLMBar's fields
    return [
        {
            "input": f"{tag} question {k}",
            "output_1": f"first answer {k}",
            "output_2": f"second answer {k}",
            "label": 1 + k % 2,
        }
        for k in range(n)
    ]


def _completions(instances: list[dict[str, object]]) -> list[dict[str, object]]:
    return [
        {
            **inst,
            "results": [
                {
                    "swap = False": {"completion": ["Output (a)", "stop"], "winner": "1"},
                    "swap = True": {"completion": ["Output (b)", "stop"], "winner": "1"},
                }
            ],
        }
        for inst in instances
    ]


def test_every_subset_is_read_and_other_evaluator_shapes_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "data" / "llmbar"
    natural, neighbor = _dataset(3, "natural"), _dataset(2, "neighbor")
    _write(root / "Natural" / "dataset.json", natural)
    _write(root / "Adversarial" / "Neighbor" / "dataset.json", neighbor)
    _write(root / "Natural" / "evaluators" / "GPT-4" / "Vanilla" / "result.json", _completions(natural))
    _write(
        root / "Natural" / "evaluators" / "GPT-4" / "Metrics" / "result.json",
        [{**inst, "results": {"accuracy": 0.5}} for inst in natural],
    )
    _write(root / "Adversarial" / "Neighbor" / "evaluators" / "GPT-4" / "Rating" / "result.json", {"score": 3})
    db = str(tmp_path / "l.duckdb")
    done = run_cli("datasets", "import", "llmbar", "--data", str(tmp_path / "data"), "--db", db)
    assert done.exit_code == 0, done.stderr
    assert "5 pairs, 5 gold labels, 6 recorded completions from 1 judge/strategy sources" in done.stdout
    assert "skipped Natural GPT-4/Metrics: entry 1 has no 'results' list" in done.stdout
    assert "skipped Adversarial/Neighbor GPT-4/Rating: no entries, dataset.json has 2" in done.stdout
    one = run_cli(
        "datasets",
        "import",
        "llmbar",
        "--data",
        str(tmp_path / "data"),
        "--subset",
        "Adversarial/Neighbor",
        "--db",
        str(tmp_path / "one.duckdb"),
    )
    assert one.exit_code == 0 and "2 pairs" in one.stdout, one.stderr
    bad = run_cli(
        "datasets", "import", "llmbar", "--data", str(tmp_path / "data"), "--subset", "Adversarial/GPTOut", "--db", db
    )
    assert bad.exit_code == 2 and "Subsets there: Adversarial/Neighbor, Natural" in bad.stderr
