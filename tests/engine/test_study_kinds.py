"""Classification and questionnaire rubrics through the engine, the store and the views."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurybench.engine import EngineOptions, score
from jurybench.errors import JurybenchError
from jurybench.jurors import FakeBackend, parse_juror
from jurybench.rubric import Presentation, load_rubric
from jurybench.store import import_items
from tests.conftest import run_cli, write

QUIET = EngineOptions(progress=False)
EMOTION: Any = load_rubric("emotion-label")
INSTRUMENT: Any = load_rubric("social-style")


def _texts(con: Any, tmp_path: Path) -> None:
    rows = [
        "item_id,response,language,reference",
        "e1,I won!,en,joy",
        "e2,Ich vermisse dich,de,Traurigkeit",
        "e3,¡Qué asco!,es,disgust",
        "e4,No gold here,en,",
    ]
    import_items(con, write(tmp_path / "t.csv", "\n".join(rows) + "\n"))


def test_classification_answers_are_matched_counted_and_never_guessed(con: Any, tmp_path: Path) -> None:
    _texts(con, tmp_path)
    # Items are judged in item_id order: e1, e2, e3, e4.
    FakeBackend.enqueue("clf", "Joy!", "Wut", "nostalgia", "sadness")
    result = score(con, EMOTION, [parse_juror("fake/clf")], run_id="c", options=QUIET)
    assert result.status_counts == {"ok": 3, "invalid": 1}
    rows = con.execute(
        "SELECT item_id, predicted, gold, correct, invalid, status FROM classification_outcomes ORDER BY item_id"
    ).fetchall()
    assert rows == [
        ("e1", "joy", "joy", True, False, "valid"),
        ("e2", "anger", "sadness", False, False, "valid"),
        ("e3", None, "disgust", False, True, "invalid"),
        ("e4", "sadness", None, None, False, "valid"),
    ]
    reason = con.execute("SELECT reason FROM classification_outcomes WHERE item_id = 'e3'").fetchall()[0][0]
    assert '"nostalgia" is not one of the 8 labels' in reason


def test_a_gold_label_outside_the_set_is_bad_input_and_nothing_is_judged(con: Any, tmp_path: Path) -> None:
    import_items(con, write(tmp_path / "bad.csv", "item_id,response,reference\nx1,Hm,nostalgia\n"))
    with pytest.raises(JurybenchError, match=r"item 'x1', field 'reference': 'nostalgia' is not a label"):
        score(con, EMOTION, [parse_juror("fake/clf")], run_id="bad", options=QUIET)
    assert con.execute("SELECT count(*) FROM calls").fetchall()[0][0] == 0


def test_classification_disparity_from_the_view_through_the_cli(con: Any, tmp_path: Path, db_path: Path) -> None:
    rows = ["item_id,response,language,reference"]
    for k in range(40):
        for lang, gold in (("en", "joy"), ("de", "fear")):
            rows.append(f"{lang}{k},text {k},{lang},{gold}")
    import_items(con, write(tmp_path / "m.csv", "\n".join(rows) + "\n"))
    score(con, EMOTION, [parse_juror("sim/m,accuracy=0.9,language_accuracy=de:-0.5,seed=1")], run_id="d", options=QUIET)
    acc = dict(con.execute("SELECT language, avg(correct::INT) FROM classification_outcomes GROUP BY 1").fetchall())
    assert acc["en"] > 0.75 and acc["de"] < 0.6  # the planted language gap
    con.close()
    out = run_cli(
        "stats",
        "disparity",
        "--db",
        str(db_path),
        "--format",
        "json",
        "--sql",
        "SELECT language AS grp, gold AS category, correct, invalid FROM classification_outcomes",
    )
    assert out.exit_code == 0, out.stderr
    assert "gini" in out.stdout.lower()


def _targets(con: Any, tmp_path: Path, n: int = 4) -> None:
    rows = ["item_id,response,language,gender"]
    for k in range(n):
        rows.append(f"t{k},a neighbour,{'en' if k % 2 else 'de'},{'female' if k < n // 2 else 'male'}")
    import_items(con, write(tmp_path / "targets.csv", "\n".join(rows) + "\n"), treatment_columns=["gender"])


def test_questionnaire_rotation_is_recorded_and_scores_are_canonical(con: Any, tmp_path: Path) -> None:
    _targets(con, tmp_path, 2)
    # The fake answers numeral 2 to every statement shown; what that means depends on each call's rotation.
    FakeBackend.enqueue("obs", *["\n".join(f"{n}. 2" for n in range(1, 13))] * 2)
    score(con, INSTRUMENT, [parse_juror("fake/obs")], run_id="q", options=QUIET)
    for call_key, shown_json in con.execute("SELECT call_key, presentation FROM calls").fetchall():
        shown = Presentation.from_json(shown_json)
        canonical = shown.rotation[1] + 1  # numeral 2 stands for this label
        rows = con.execute(
            "SELECT criterion, score, raw_value, shown_position, label FROM pointwise_judgments WHERE call_key = ?",
            [call_key],
        ).fetchall()
        assert len(rows) == 12
        reverse = {i.id for i in INSTRUMENT.items if i.reverse}
        for criterion, value, raw, position, _label in rows:
            assert raw == 2 and shown.order[position - 1] == criterion
            assert value == (6 - canonical if criterion in reverse else canonical)
    facets = con.execute("SELECT count(*) FROM inventory_scores WHERE run_id = 'q' AND level = 'facet'").fetchall()[0][
        0
    ]
    factors = con.execute("SELECT DISTINCT name FROM inventory_scores WHERE level = 'factor' ORDER BY 1").fetchall()
    assert facets == 2 * 5 and [f[0] for f in factors] == ["considerate", "outgoing"]


def test_partial_questionnaire_answers_keep_the_valid_items(con: Any, tmp_path: Path) -> None:
    _targets(con, tmp_path, 2)
    FakeBackend.enqueue("obs", "1. 3\n2. 3\n", "I'm sorry, but I won't rate a real person.")
    result = score(con, INSTRUMENT, [parse_juror("fake/obs")], run_id="p", options=QUIET)
    assert result.status_counts == {"ok": 1, "refusal": 1}
    by_status = dict(con.execute("SELECT status, count(*) FROM pointwise_judgments GROUP BY 1").fetchall())
    assert by_status == {"valid": 2, "invalid": 10, "refusal": 12}


def test_sim_observer_recovers_a_planted_facet_effect(con: Any, tmp_path: Path) -> None:
    rows = ["item_id,response,language,gender"]
    for k in range(60):
        rows.append(f"t{k:02d},a colleague,en,{'female' if k % 2 else 'male'}")
    import_items(con, write(tmp_path / "t.csv", "\n".join(rows) + "\n"), treatment_columns=["gender"])
    juror = parse_juror("sim/obs,effect=1,effect_arm=gender=female,effect_on=warmth,noise=0.3")
    score(con, INSTRUMENT, [juror], run_id="s", options=QUIET)
    means = dict(
        con.execute(
            """SELECT s.name || '/' || (i.treatment->>'gender'), avg(s.score) FROM inventory_scores s
               JOIN items i USING (item_id) WHERE s.level = 'facet' GROUP BY 1"""
        ).fetchall()
    )
    assert means["warmth/female"] - means["warmth/male"] > 0.6
    assert abs(means["trust/female"] - means["trust/male"]) < 0.4
    assert json.loads(con.execute("SELECT presentation FROM calls LIMIT 1").fetchall()[0][0])["rotation"]
