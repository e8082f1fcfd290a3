"""The four audit studies with a real judge (issue 45, item 5), at CI scale: each study's shipped
file and data, cut to a few rows, run with ``study run --add-juror`` putting the tier's model
beside the simulated jurors. Every step must finish and print its tables; the real juror's calls
must have gone through the server (token counts), its unusable answers counted as invalid or
refusals, and nothing leak to stderr (no traceback, no numpy warning)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from jurybench.studies import shipped_dir
from tests.models.conftest import LocalModel

pytestmark = pytest.mark.model


def _cut(folder: Path, name: str, keep: int) -> None:
    """Keep a file's header and its first ``keep`` rows."""
    path = folder / name
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[: keep + 1]) + "\n", encoding="utf-8")


def _run(
    local_model: LocalModel, tmp_path: Path, study: str, cuts: dict[str, int], edit: dict[str, str], extra: str
) -> tuple[str, Path]:
    folder = tmp_path / study
    shutil.copytree(shipped_dir() / study, folder)
    for name, keep in cuts.items():
        _cut(folder, name, keep)
    spec = folder / "study.yaml"
    text = spec.read_text(encoding="utf-8")
    for old, new in edit.items():
        assert old in text, old
        text = text.replace(old, new)
    spec.write_text(text, encoding="utf-8")
    db = tmp_path / f"{study}.duckdb"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "jurybench"), "study", "run", str(spec), "--db", str(db), "--out", str(tmp_path / "out"),
         "--add-juror", local_model.juror(extra)],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr[-2000:]
    with duckdb.connect(str(db), read_only=True) as con:
        real = con.execute(
            """SELECT count(*), count(*) FILTER (WHERE prompt_tokens > 0), count(*) FILTER (WHERE c.status = 'ok'),
                      count(*) FILTER (WHERE c.status IN ('invalid', 'refusal'))
               FROM calls c JOIN jurors j USING (juror_key) WHERE j.model LIKE 'openai/smollm2%'"""
        ).fetchone()
    assert real is not None and real[0] > 0 and real[1] == real[0], f"the real juror's calls: {real}"
    assert real[2] + real[3] == real[0]  # every answer valid, or counted as invalid or a refusal
    return done.stdout, db


def test_emotion_classification_with_a_real_classifier(local_model: LocalModel, tmp_path: Path) -> None:
    out, _ = _run(local_model, tmp_path, "emotion", {"texts.csv": 12}, {}, ",max_tokens=8")
    assert "openai/smollm2" in out and "gini" in out


def test_persuasion_pairwise_in_both_orders_with_a_real_judge(local_model: LocalModel, tmp_path: Path) -> None:
    out, db = _run(
        local_model,
        tmp_path,
        "persuasion",
        {"prompts.csv": 2},
        {},
        ",structured=schema,response_format=json_object,max_tokens=220",
    )
    with duckdb.connect(str(db), read_only=True) as con:
        orders = con.execute(
            "SELECT DISTINCT presented_order FROM calls c JOIN jurors j USING (juror_key) WHERE j.model LIKE 'openai/smollm2%'"
        ).fetchall()
    assert {o[0] for o in orders} == {"AB", "BA"}
    assert "flip_rate" in out


def test_culture_jury_mixing_the_real_judge_calibrated_on_panel_means(local_model: LocalModel, tmp_path: Path) -> None:
    out, _ = _run(
        local_model,
        tmp_path,
        "culture",
        {"prompts.csv": 4},
        {"samples: 2": "samples: 1", "folds: 5": "folds: 2", "fraction: 0.5": "fraction: 1"},
        ",structured=schema,response_format=json_object,max_tokens=16",
    )
    assert "friedman" in out.lower()


def test_observer_report_questionnaire_with_a_real_observer(local_model: LocalModel, tmp_path: Path) -> None:
    out, _ = _run(
        local_model,
        tmp_path,
        "inventory",
        {"targets.csv": 8},
        {},
        ",max_tokens=200",
    )
    assert "d_human" in out or "cohens" in out.lower()
