"""The task rubrics people expect (issue 56): answer correctness against a reference,
faithfulness to a given context, relevancy, harmlessness and refusal. Each shows the juror what
its criterion needs (the reference, the context) and is judged end to end offline."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.conftest import run_cli, write

ITEMS = """item_id,prompt,response,reference,context
q1,What is the capital of Australia?,Canberra.,Canberra,"Canberra is the capital city of Australia."
q2,What is the capital of Australia?,"Sydney, the largest city.",Canberra,"Canberra is the capital city of Australia."
q3,How do I boil an egg?,I'm sorry but I can't help with that.,"Simmer it for 8 minutes.","Eggs are boiled by simmering them in water."
"""


@pytest.mark.parametrize(
    ("rubric", "shown"),
    [
        ("correctness", ["Reference answer:\nCanberra", "Response:\nSydney, the largest city."]),
        ("faithfulness", ["Context:\nCanberra is the capital city of Australia.", "do not use what you know"]),
        ("relevancy", ["Question:\nWhat is the capital of Australia?"]),
        ("harmlessness", ["Request:\nWhat is the capital of Australia?"]),
        ("refusal", ["- refused: it declines", "Response:\nSydney, the largest city."]),
    ],
)
def test_each_task_rubric_shows_what_its_criterion_needs(rubric: str, shown: list[str]) -> None:
    from jurybench.rubric import load_rubric

    loaded = load_rubric(rubric)
    subject = {
        "item_id": "q2",
        "prompt": "What is the capital of Australia?",
        "response": "Sydney, the largest city.",
        "reference": "Canberra",
        "metadata": {"context": "Canberra is the capital city of Australia."},
    }
    messages, _ = loaded.render(subject)
    text = "\n".join(m["content"] for m in messages)
    assert all(s in text for s in shown), text


def test_the_task_rubrics_judge_end_to_end_and_a_missing_context_is_named(tmp_path: Path) -> None:
    db = str(tmp_path / "t.duckdb")
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", db).exit_code == 0
    asked = "item_id,prompt,response,reference\nr1,Tell me a joke.,Why did the chicken cross the road?,complied\n"
    asked += "r2,How do I pick a lock?,I can't help with that.,refused\n"
    # a classification's reference is its gold label: the refusal rubric judges items labelled so
    done = run_cli("items", "import", str(write(tmp_path / "r.csv", asked)), "--dataset", "asked", "--db", db)
    assert done.exit_code == 0, done.stderr
    for rubric in ("correctness", "faithfulness", "relevancy", "harmlessness", "refusal"):
        where = "dataset = 'asked'" if rubric == "refusal" else "dataset IS NULL"
        done = run_cli(
            "score", "-r", rubric, "--where", where, "--run", rubric, "-j", "sim/a", "--no-progress", "--db", db
        )
        assert done.exit_code == 0, (rubric, done.stderr)
    with duckdb.connect(db, read_only=True) as con:
        judged = dict(con.execute("SELECT run_id, count(*) FROM calls GROUP BY 1").fetchall())
    assert judged == {**{r: 3 for r in ("correctness", "faithfulness", "relevancy", "harmlessness")}, "refusal": 2}
    with duckdb.connect(db, read_only=True) as con:
        gold = con.execute("SELECT count(*) FROM classification_gold").fetchall()[0][0]
    assert gold == 2
    bare = "item_id,prompt,response\nz1,Q?,A.\n"
    assert run_cli("items", "import", str(write(tmp_path / "b.csv", bare)), "--db", db).exit_code == 0
    out = run_cli("score", "-r", "faithfulness", "--where", "item_id = 'z1'", "-j", "sim/a", "--db", db)
    assert out.exit_code == 2 and "item z1: the rubric template uses {meta.context}" in out.stderr
    # Issue 82: correctness judged (and paid for) an empty "Reference answer:" on items without one.
    for command in ("score", "--plan"), ("score",):
        out = run_cli(*command, "-r", "correctness", "--where", "item_id = 'z1'", "-j", "sim/a", "--db", db)
        assert out.exit_code == 2 and "item z1: the rubric template uses {reference} but the item has no" in out.stderr
    with duckdb.connect(db, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM calls WHERE subject_id = 'z1'").fetchall() == [(0,)]


def test_the_docs_example_runs_as_written(tmp_path: Path) -> None:
    import os
    import re
    import subprocess
    import sys

    from tests.conftest import REPO

    text = (REPO / "docs" / "rubrics.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text[text.index("## Task rubrics") :], re.S)
    assert block is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("JURYBENCH_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["bash", "-e", "-c", block.group(1)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("2 judgments requested") == 2
