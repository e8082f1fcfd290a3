"""Figures say what they show: the run, rubric and jury in a caption; left-out groups marked."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from tests.conftest import run_cli


def _svg_text(path: Path) -> str:
    """The figure's words, lines joined (a caption wraps)."""
    import html
    import re

    texts = re.findall(r"<text[^>]*>(.*?)</text>", path.read_text(encoding="utf-8"), re.S)
    return " ".join(" ".join(html.unescape(re.sub(r"<[^>]+>", "", t)).split()) for t in texts)


def test_plots_name_their_run_rubric_jury_and_result(tmp_path: Path) -> None:
    assert run_cli("demo", "persuasion", "--out", str(tmp_path)).exit_code == 0
    db = tmp_path / "persuasion.duckdb"
    out = tmp_path / "gap.svg"
    drawn = run_cli("plot", "gap", "--output", str(out), "--db", str(db))
    assert drawn.exit_code == 0, drawn.stderr
    svg = _svg_text(out)
    con = duckdb.connect(str(db), read_only=True)
    result_id = con.execute("SELECT result_id FROM stats_results WHERE name = 'gap'").fetchall()[0][0]
    con.close()
    for shown in (
        "run persuasion",
        "rubric persuasion v2",
        "jury mean of sim/careful, sim/lenient",
        "quorum 1",
        f"stats_results {result_id[:12]}",
        "by=model_a",
    ):
        assert shown in svg, shown


def test_disparity_marks_the_groups_it_left_out(tmp_path: Path) -> None:
    rows = []
    for model, invalid in (("steady", 0.0), ("sloppy", 0.5)):
        for group in ("en", "de", "fr"):
            for k in range(20):
                bad = group != "en" and model == "sloppy" and k < invalid * 20
                rows.append(
                    {
                        "model": model,
                        "grp": group,
                        "category": "joy" if k % 2 else "anger",
                        "correct": k % 3 != 0 and not bad,
                        "invalid": bad,
                    }
                )
    data = tmp_path / "outcomes.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "d.duckdb"
    assert run_cli("stats", "disparity", "--file", str(data), "--boot", "50", "--db", str(db)).exit_code == 0
    out = tmp_path / "disparity.svg"
    assert run_cli("plot", "disparity", "--output", str(out), "--db", str(db)).exit_code == 0
    svg = _svg_text(out)
    assert "2 of 3 groups left out: invalid rate" in svg  # sloppy lost de and fr
    assert "steady" in svg and "groups left out" in svg
