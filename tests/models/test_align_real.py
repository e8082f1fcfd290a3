"""jurybench align with a real model (issue 54, item 6): SmolLM2-135M-Instruct on llama.cpp's
server, aligned on coherence to the ratings HANNA's three raters gave 24 human-written stories.
Whatever the model makes of it, the alignment completes, asks only what its plan said, keeps the
budget, and says what it found in the terms of the held-out test; the README quotes its output."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from jurybench.config import shipped_rubrics
from tests.alignment.hanna import SCORES, write_files
from tests.conftest import run_cli, write
from tests.models.conftest import LocalModel

pytestmark = pytest.mark.model


def test_the_tiers_model_is_aligned_to_hannas_raters(local_model: LocalModel, tmp_path: Path) -> None:
    if not SCORES.exists():
        pytest.fail(f"HANNA's scores file is needed at {SCORES}", pytrace=False)
    import yaml

    # Coherence alone, without a rationale: the six criteria's anchors and two demonstrations would
    # not fit the server's 2,048-token context beside a story (the prompts were cut off there).
    body = yaml.safe_load((shipped_rubrics() / "story-quality.yaml").read_text(encoding="utf-8"))
    body.update(name="story-coherence", rationale=False)
    body["criteria"] = [c for c in body["criteria"] if c["name"] == "coherence"]
    rubric = write(tmp_path / "story-coherence.yaml", yaml.safe_dump(body, sort_keys=False, allow_unicode=True))
    items, labels = write_files(tmp_path, {"coherence"})
    db = str(tmp_path / "hanna.duckdb")
    assert run_cli("items", "import", str(items), "--db", db).exit_code == 0
    made = run_cli("annotations", "import", str(labels), "--rubric", str(rubric), "--db", db)
    assert made.exit_code == 0, made.stderr
    juror = local_model.juror(",max_tokens=60,structured=schema,response_format=json_object")
    done = run_cli(
        "score", "-r", str(rubric), "--run", "smol", "--where", "true", "-j", juror, "--no-progress", "--db", db
    )
    assert done.exit_code == 0, done.stderr
    common = [
        "--db",
        db,
        "--run",
        "smol",
        "--juror",
        juror,
        "--criterion",
        "coherence",
        "--demos",
        "1,2",
        "--folds",
        "4",
    ]

    plan = run_cli("align", *common, "--plan")
    assert plan.exit_code == 0, plan.stderr
    assert re.search(r"demos-1\s+24\s", plan.stdout) and re.search(r"demos-2\s+24\s", plan.stdout)

    shown = run_cli("align", *common, "--max-cost", "0.01", "--no-progress")
    assert shown.exit_code == 0, shown.stderr
    out = shown.stdout
    if os.environ.get("JURYBENCH_SHOW"):
        Path(os.environ["JURYBENCH_SHOW"]).write_text(out, encoding="utf-8")
    assert "held-out MAE" in out and "spent: $0" in out
    verdict = out.strip().splitlines()[-1]
    assert verdict.startswith("no improvement shown") or "label_uses" in verdict, out
    result = json.loads(
        run_cli("align", *common, "--format", "json", "--no-progress").stdout
    )  # the same alignment: reused
    assert result["cost_usd"] == 0 and all(v["calls"] == 0 for v in result["variants"])
    assert result["n_labelled"] == 24 and result["n_groups"] == 24 and result["folds"] == 4
    for v in result["variants"]:  # every held-out answer the model gave is counted
        assert v["n"] + v["n_unanswered"] <= 24
        if v["gain"] is not None:
            assert v["gain"]["low"] <= v["gain"]["value"] <= v["gain"]["high"]
    with __import__("duckdb").connect(db, read_only=True) as con:
        calls = con.execute(
            "SELECT count(*) FROM calls WHERE rubric_hash <> (SELECT rubric_hash FROM runs WHERE run_id = 'smol')"
        ).fetchall()[0][0]
    assert calls == 48  # 2 variants x 24 subjects, as planned; the original asked nothing again
