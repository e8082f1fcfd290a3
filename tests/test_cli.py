from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ITEMS_CSV, PAIRS_CSV, REPO, run_cli, write


def _prepare(tmp_path: Path) -> None:
    assert (
        run_cli(
            "items",
            "import",
            str(write(tmp_path / "items.csv", ITEMS_CSV)),
            "--treatment",
            "gender",
        ).exit_code
        == 0
    )
    assert run_cli("pairs", "import", str(write(tmp_path / "pairs.csv", PAIRS_CSV))).exit_code == 0


def test_help_is_fast_and_imports_nothing_heavy() -> None:
    code = (
        "import sys\nfrom jurybench.cli import main\nsys.argv=['jurybench','--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy=[m for m in ('litellm','pandas','scipy','duckdb','instructor','sklearn') if m in sys.modules]\n"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out
    assert "score" in out and "sql" in out


def test_every_command_has_help() -> None:
    for args in (
        ["score"],
        ["sql"],
        ["schema"],
        ["migrate"],
        ["items", "import"],
        ["pairs", "import"],
        ["rubrics", "list"],
        ["rubrics", "show"],
        ["rubrics", "check"],
        ["datasets", "import"],
        ["datasets", "example"],
        ["datasets", "llmbar-check"],
        ["report", "preference"],
        ["recordings", "from-run"],
        ["recordings", "list"],
        ["annotations", "import"],
        ["agreement"],
        ["calibrate"],
        ["calibrate", "apply"],
        ["plot"],
        *(
            ["stats", n]
            for n in (
                "directional",
                "gap",
                "consistency",
                "robustness",
                "friedman",
                "ttest",
                "welch",
                "mannwhitney",
                "kendall",
                "cohens-d",
                "item-spearman",
                "disparity",
                "results",
            )
        ),
    ):
        result = run_cli(*args, "--help")
        assert result.exit_code == 0, args
        assert "Usage" in result.stdout


def test_score_then_sql_in_every_format(tmp_path: Path) -> None:
    _prepare(tmp_path)
    result = run_cli(
        "score",
        "--rubric",
        "story-quality",
        "--juror",
        "fake/a",
        "--juror",
        "fake/b,samples=2",
        "--run",
        "r1",
        "--no-progress",
    )
    assert result.exit_code == 0, result.stderr
    assert "run r1: 9 judgments requested, 0 from cache, 9 called (ok 9)" in result.stdout
    query = "SELECT juror, n_calls FROM run_summary WHERE run_id = 'r1' ORDER BY juror"
    as_json = json.loads(run_cli("sql", query, "--format", "json").stdout)
    assert as_json == [{"juror": "fake/a", "n_calls": 3}, {"juror": "fake/b", "n_calls": 6}]
    assert run_cli("sql", query, "--format", "csv").stdout == "juror,n_calls\nfake/a,3\nfake/b,6\n"
    table = run_cli("sql", query).stdout
    assert "fake/a" in table and "n_calls" in table
    out = tmp_path / "o.parquet"
    assert run_cli("sql", query, "--format", "parquet", "-o", str(out)).exit_code == 0
    import pyarrow.parquet as pq

    assert pq.read_table(out).to_pylist() == as_json


def test_pairwise_score_and_preference_report_cli(tmp_path: Path) -> None:
    _prepare(tmp_path)
    result = run_cli(
        "score",
        "-r",
        "preference",
        "-j",
        "fake/x",
        "-j",
        "fake/y",
        "-j",
        "fake/z",
        "--run",
        "p",
        "--no-progress",
    )
    assert "run p: 12 judgments requested" in result.stdout
    # No human labels yet: every pair is left out.
    report = json.loads(run_cli("report", "preference", "--run", "p", "--format", "json").stdout)
    assert report["n_pairs"] == 0 and report["n_without_reference"] == 2
    assert report["jury_rule"]["aggregation"] == "majority" and report["jury_rule"]["n_jurors_expected"] == 3
    table = run_cli("report", "preference", "--run", "p")
    assert "jury rule majority (tie: tie), quorum 1, 3 jurors expected; 0 pair-orders below quorum" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["score", "--rubric", "nope", "--juror", "fake/a"],
            "error: no rubric named 'nope'. Available:",
        ),
        (
            ["score", "--rubric", "story-quality", "--juror", "fake/a,temperature"],
            "is not key=value",
        ),
        (
            ["score", "--rubric", "story-quality", "--juror", "madeup/model"],
            "unknown juror model 'madeup/model'",
        ),
        (["sql", "SELECT * FROM nowhere"], "error: SQL error: Catalog Error"),
        (["sql", "SELECT 1", "--format", "xml"], "--format 'xml' is not valid"),
        (["items", "import", "missing.csv"], "missing.csv: no such file."),
        (["report", "preference", "--run", "nope"], "error: no run 'nope'."),
        (["datasets", "import", "mnist"], "unknown dataset 'mnist'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    _prepare(tmp_path)
    result = run_cli(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_bad_import_writes_nothing(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.csv", b"item_id,response\na,ok\nb,\xff\xfe\n")
    result = run_cli("items", "import", str(bad))
    assert result.exit_code == 2 and "bad.csv line 3: bytes that are not valid UTF-8" in result.stderr
    # the store the refused import would have made is not left behind, empty or half-written
    left = run_cli("sql", "SELECT count(*) AS n FROM items", "--format", "csv")
    assert left.exit_code == 2 and "no judgment store" in left.stderr


def test_bad_rubric_file_via_check(tmp_path: Path) -> None:
    bad = write(
        tmp_path / "r.yaml",
        "name: r\nkind: pointwise\ncriteria: []\ntemplates: {en: {user: '{response}'}}\n",
    )
    result = run_cli("rubrics", "check", str(bad))
    assert result.exit_code == 2
    assert "r.yaml line 3, field 'criteria': List should have at least 1 item" in result.stderr
    ok = run_cli("rubrics", "check", str(REPO / "rubrics" / "persuasion.yaml"))
    assert ok.exit_code == 0 and "pairwise, 19 dims" in ok.stdout


def test_schema_command_matches_docs() -> None:
    result = run_cli("schema")
    assert result.stdout.strip() == (REPO / "docs" / "schema.md").read_text(encoding="utf-8").strip()


def test_readme_documents_every_top_level_command() -> None:
    readme = "\n".join(p.read_text(encoding="utf-8") for p in [REPO / "README.md", *(REPO / "docs").glob("*.md")])
    for command in (
        "score",
        "sql",
        "schema",
        "migrate",
        "items import",
        "pairs import",
        "rubrics",
        "datasets import llmbar",
        "report preference",
        "recordings",
        "annotations import",
        "agreement",
        "calibrate",
        "calibrate apply",
        "datasets import hanna",
        "stats directional",
        "stats gap",
        "stats consistency",
        "stats friedman",
        "stats ttest",
        "stats cohens-d",
        "stats disparity",
        "stats results",
        "plot",
    ):
        assert f"jurybench {command}" in readme, command
    assert "make demo" in readme and "make test" in readme


def test_annotations_agreement_and_calibration_cli(tmp_path: Path) -> None:
    rows = "\n".join(f"s{p}-{k},prompt {p},story {p}-{k},sys{k},en" for p in range(30) for k in range(4))
    assert (
        run_cli(
            "items", "import", str(write(tmp_path / "i.csv", "item_id,prompt,response,model,language\n" + rows + "\n"))
        ).exit_code
        == 0
    )
    assert (
        run_cli(
            "score",
            "-r",
            "story-quality",
            "-j",
            "fake/a",
            "-j",
            "fake/b",
            "-j",
            "fake/c",
            "--run",
            "r",
            "--no-progress",
        ).exit_code
        == 0
    )
    # Human labels: the mean of jurors a and b, plus a little per-annotator noise.
    import numpy as np

    from jurybench.store import connect

    con = connect(tmp_path / "test.duckdb")
    scores = con.execute(
        "SELECT item_id, criterion, juror, score FROM pointwise_scores WHERE criterion = 'relevance'"
    ).fetchall()
    con.close()
    by_item: dict[str, dict[str, float]] = {}
    for item, _, juror, value in scores:
        by_item.setdefault(item, {})[juror] = value
    rng = np.random.default_rng(0)
    lines = ["item_id,annotator,relevance"]
    for item, s in sorted(by_item.items()):
        for a in ("h1", "h2"):
            lines.append(f"{item},{a},{min(5, max(1, round((s['fake/a'] + s['fake/b']) / 2 + rng.normal(0, 0.4))))}")
    labels = write(tmp_path / "labels.csv", "\n".join(lines) + "\n")
    imported = run_cli("annotations", "import", str(labels), "--rubric", "story-quality")
    assert imported.exit_code == 0 and "240 labels inserted" in imported.stdout
    again = run_cli("annotations", "import", str(labels), "--rubric", "story-quality")
    assert "0 labels inserted, 240 already present" in again.stdout
    agree = json.loads(run_cli("agreement", "--run", "r", "--boot", "50", "--format", "json").stdout)
    assert agree[0]["criterion"] == "relevance" and agree[0]["n_items"] == 120
    assert agree[0]["jury"]["pearson"] > 0.5
    # Issue 44, item 3: quadratic-weighted kappa for each rater and among the humans; one annotator's labels
    assert 0.3 < agree[0]["jury"]["quadratic_kappa"] <= 1
    assert agree[0]["humans"]["mean_pairwise_quadratic_kappa"]["value"] > 0
    one = json.loads(
        run_cli("agreement", "--run", "r", "--boot", "20", "--annotators", "h1", "--format", "json").stdout
    )
    assert one[0]["n_annotators"] == 1 and one[0]["n_items"] == 120
    out = tmp_path / "cal"
    fitted = run_cli("calibrate", "--run", "r", "--name", "demo", "--boot", "20", "--folds", "5", "--out", str(out))
    assert fitted.exit_code == 0, fitted.stderr
    assert "winner" in fitted.stdout and (out / "demo.json").exists()
    # Issue 43, item 6: the weights to report (least squares, jackknife intervals) and the applied
    # winner's weights are printed apart, and only the first have intervals.
    assert "weights to report (least squares, 95 % intervals by the leave-one-group-out jackknife" in fitted.stdout
    assert "chosen to predict; no interval" in fitted.stdout
    artifact = json.loads((out / "demo.json").read_text())
    ls = artifact["criteria"]["relevance"]["report"]["least_squares"]
    assert set(ls["ci"]) == {"intercept", *ls["weights"]} and ls["n_groups"] >= 10
    weights = artifact["criteria"]["relevance"]["weights"]
    key = {j["label"]: j["key"] for j in artifact["jurors"]}  # weights are keyed by juror identity
    if artifact["criteria"]["relevance"]["method"] != "cross":
        assert weights[key["fake/c"]] < weights[key["fake/a"]] and weights[key["fake/c"]] < weights[key["fake/b"]]
    applied = run_cli("calibrate", "apply", str(out / "demo.json"), "--run", "r")
    assert applied.exit_code == 0 and "120 calibrated scores written" in applied.stdout
    bad = run_cli(
        "annotations",
        "import",
        str(write(tmp_path / "bad.csv", "item_id,annotator,relevance\ns0-0,h9,7\n")),
        "--rubric",
        "story-quality",
    )
    assert bad.exit_code == 2 and "bad.csv row 2, field 'relevance': 7 is outside the rubric's scale 1..5" in bad.stderr


def test_stopping_the_viewer_says_it_stopped_not_how_to_resume_a_run(tmp_path: Path) -> None:
    """Issue 40, item 8: Ctrl-C on `jurybench view` printed a scoring run's resume message."""
    import signal
    import subprocess
    import sys

    from jurybench.cli import interrupted_line
    from jurybench.testing.stub import free_port

    assert (
        run_cli(
            "items",
            "import",
            str(write(tmp_path / "i.csv", "item_id,response\ni1,x\n")),
            "--db",
            str(tmp_path / "v.duckdb"),
        ).exit_code
        == 0
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jurybench.cli",
            "view",
            "--no-browser",
            "--port",
            str(free_port()),
            "--db",
            str(tmp_path / "v.duckdb"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:  # the event: it says where it listens
        if "http://" in line:
            break
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert err.strip().splitlines()[-1] == "stopped." and "resume" not in err
    assert (
        "resume" in interrupted_line(["score", "-r", "x"]) and interrupted_line(["sql", "SELECT 1"]) == "interrupted."
    )
