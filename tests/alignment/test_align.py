"""jurybench align (issue 54): the held-out test by hand, the held-out rule (a variant that wins
only on what trained it is not kept), and end to end on simulated jurors: a teachable juror's
variant kept as a new rubric version that score, rubrics diff and the label-use rule know; a
juror the prompt does not change left alone; the plan, the budget and bad input."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest

from jurybench.alignment import (
    AlignmentData,
    Judged,
    Labelled,
    align,
    clustered_mean,
    group_folds,
    holm,
    most_disagreed,
    one_sided_p,
)
from tests.conftest import run_cli


def test_the_clustered_mean_and_the_one_sided_test_by_hand() -> None:
    """Gains 1, 0 (group a), 2, 1 (group b), -1, 0 (group c): mean 0.5. Group totals of the
    deviations: 0.5 - 0.5 = 0, 1.5 + 0.5 = 2, -1.5 - 0.5 = -2; CR1 variance 3 / 2 * (0 + 4 + 4) / 36
    = 1 / 3, se 0.5774; t(0.975, 2) = 4.3027."""
    values = np.array([1.0, 0.0, 2.0, 1.0, -1.0, 0.0])
    figure, se, df = clustered_mean(values, ["a", "a", "b", "b", "c", "c"])
    assert figure.value == 0.5 and df == 2
    assert se == pytest.approx(np.sqrt(1 / 3))
    assert figure.high - figure.value == pytest.approx(4.302653 * se, rel=1e-6)
    # one-sided p of t = 0.5 / 0.5774 = 0.866 on 2 df: 0.2388
    assert one_sided_p(0.5, se, 2) == pytest.approx(0.23884, abs=1e-4)
    assert one_sided_p(0.0, 0.0, 5) == 1.0 and one_sided_p(0.1, 0.0, 5) == 0.0


def test_holm_steps_down() -> None:
    # 0.01 <= 0.05 / 3; 0.02 <= 0.05 / 2; 0.04 > 0.05 / 1? no: 0.04 <= 0.05: all three rejected
    assert holm([0.04, 0.01, 0.02], 0.05) == [(True, 0.05), (True, 0.05 / 3), (True, 0.025)]
    # 0.03 > 0.025 stops the steps: the last is not rejected even though 0.04 <= 0.05
    assert holm([0.04, 0.01, 0.03], 0.05) == [(False, 0.05), (True, 0.05 / 3), (False, 0.025)]
    assert holm([None, 0.01], 0.05) == [(False, None), (True, 0.05)]


def _subjects(n_prompts: int = 12, per: int = 2) -> list[Labelled]:
    out = []
    for p in range(n_prompts):
        for r in range(per):
            human = float(1 + (p + r) % 5)
            out.append(Labelled(f"p{p}-r{r}", f"prompt {p}", f"response {p}-{r}", human, min(5.0, human + 1), f"g{p}"))
    return out


def test_folds_deal_whole_prompt_groups_and_demonstrations_come_one_per_group() -> None:
    subjects = _subjects()
    folds = group_folds(subjects, 5, seed=3)
    assert sorted(i for f in folds for i in f) == list(range(len(subjects)))
    for f in folds:  # a group's subjects are all in one fold
        groups = {subjects[i].group for i in f}
        assert all(subjects[j].group not in groups for g in folds if g is not f for j in g)
    assert group_folds(subjects, 5, seed=3) == folds and group_folds(subjects, 5, seed=4) != folds
    chosen = most_disagreed(subjects, 4, seed=0)
    assert len({s.group for s in chosen}) == 4
    # the juror is one point high everywhere except at 5 (clipped): the chosen ones disagree by 1
    assert all(abs((s.original or 0) - s.human) == 1 for s in chosen)


def _data(subjects: list[Labelled]) -> AlignmentData:
    from jurybench.jurors import JurorSpec
    from jurybench.rubric import load_rubric

    return AlignmentData("run", load_rubric("story-quality"), JurorSpec("sim/j"), "j", "coherence", subjects, (1, 5))


def test_a_variant_that_wins_only_on_what_trained_it_is_not_kept() -> None:
    """A juror that memorises: a subject shown to it as a demonstration gets the humans' answer,
    every other keeps the juror's own. Judged on its training subjects the variant would look
    perfect; held out (the rule), it gains nothing and nothing is kept. Without the held-out rule
    (judging the subjects the demonstrations came from) the same test would keep it."""
    subjects = _subjects(n_prompts=12)
    by_response = {s.response: s for s in subjects}

    def memorising(rubric: Any, ids: list[str], name: str, budget: float | None) -> Judged:
        shown = {d.response for d in rubric.demonstrations}
        out = {}
        for i in ids:
            s = next(x for x in subjects if x.subject_id == i)
            out[i] = s.human if s.response in shown else (s.original or 0.0)
        return Judged(out, len(ids), 0.0, "finished")

    result = align(
        _data(subjects),
        judge=memorising,
        plan=lambda r, i: (0, 0.0),
        rewrite=None,
        demos=[4, 8],
        folds=4,
        alpha=0.05,
        seed=0,
        max_cost=None,
        planning=False,
        alignment_id="t",
        version="2.a1",
    )
    assert result.aligned is None and result.verdict.startswith("no improvement shown")
    assert all(v.gain is not None and v.gain.value == 0.0 for v in result.variants)
    # on its own demonstrations the memoriser is perfect: an in-sample check would have kept it
    from jurybench.alignment import with_demonstrations

    taught = with_demonstrations(_data(subjects).rubric, "coherence", most_disagreed(subjects, 8, 0), (1, 5), "x")
    seen = [by_response[d.response].subject_id for d in taught.demonstrations]
    in_sample = memorising(taught, seen, "x", None).answers
    assert all(in_sample[i] == by_response[d.response].human for i, d in zip(seen, taught.demonstrations, strict=True))


def test_too_few_prompt_groups_are_refused_in_one_line() -> None:
    from jurybench.errors import JurybenchError

    with pytest.raises(JurybenchError, match="align needs at least 6 groups"):
        align(
            _data(_subjects(n_prompts=5)),
            judge=None,
            plan=None,
            rewrite=None,
            demos=[2],
            folds=5,  # type: ignore[arg-type]
            alpha=0.05,
            seed=0,
            max_cost=None,
            planning=False,
            alignment_id="t",
            version="2.a1",
        )


def test_demonstrations_are_shown_and_leave_other_rubrics_hashes_alone() -> None:
    from jurybench.rubric import load_rubric, rubric_from_data

    rubric = load_rubric("story-quality")
    body = rubric.model_dump(mode="json")
    body.pop("demonstrations")
    before = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    assert rubric.content_hash == before  # a rubric without demonstrations hashes as it did before they existed
    taught = rubric_from_data(
        {
            **rubric.model_dump(mode="json"),
            "demonstrations": [{"prompt": "P", "response": "R" * 2100, "answer": {"coherence": 2}}],
        }
    )
    assert taught.content_hash != rubric.content_hash
    messages, _ = taught.render({"item_id": "x", "prompt": "Q", "response": "S", "language": "en"})
    user = messages[-1]["content"]
    assert "### Example 1 of 1 (judged by people)" in user and 'Their answer: {"coherence": 2}' in user
    assert "R" * 2000 + " [...]" in user and user.index("### Now the one to judge") < user.index("S")


# -- end to end on simulated jurors ---------------------------------------------------------------
def _store(folder: Path, juror: str) -> tuple[Path, str]:
    """60 answers (20 prompts x 3 models) judged by ``juror``; three simulated annotators label
    every item (the truth the simulated jurors share)."""
    import csv

    db = folder / "a.duckdb"
    with (folder / "items.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "prompt", "response", "model"])
        for p in range(20):
            for m in range(3):
                w.writerow([f"p{p}-m{m}", f"Write about topic {p}.", f"Answer {m} on topic {p}.", f"model{m}"])
    assert run_cli("items", "import", str(folder / "items.csv"), "--db", str(db)).exit_code == 0
    done = run_cli("score", "--db", str(db), "-r", "story-quality", "--where", "true", "-j", juror, "--no-progress")
    assert done.exit_code == 0, done.stdout + done.stderr
    run = re.search(r"run (run-\S+):", (done.stdout + done.stderr)).group(1)  # type: ignore[union-attr]
    made = run_cli("annotations", "simulate", "--db", str(db), "--rubric", "story-quality", "--annotators", "3")
    assert made.exit_code == 0, made.stdout + made.stderr
    return db, run


@pytest.fixture(scope="module")
def teachable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return _store(tmp_path_factory.mktemp("teach"), "sim/lenient,leniency=1.5,teachable=1,noise=0.4,cost=0.001")


def test_a_teachable_juror_is_aligned_and_the_new_version_is_known_everywhere(teachable: tuple[Path, str]) -> None:
    db, run = teachable
    plan = run_cli(
        "align",
        "--db",
        str(db),
        "--run",
        run,
        "--juror",
        "sim/lenient",
        "--criterion",
        "coherence",
        "--demos",
        "2,4",
        "--plan",
    )
    assert plan.exit_code == 0, plan.stdout + plan.stderr
    assert re.search(r"demos-2\s+60\s+\$0\.06", (plan.stdout + plan.stderr)) and "nothing was called" in (
        plan.stdout + plan.stderr
    )
    with __import__("duckdb").connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM alignments").fetchall() == [(0,)]
        assert con.execute("SELECT count(*) FROM runs").fetchall() == [(1,)]

    done = run_cli(
        "align",
        "--db",
        str(db),
        "--run",
        run,
        "--juror",
        "sim/lenient",
        "--criterion",
        "coherence",
        "--demos",
        "2,4",
        "--format",
        "json",
        "--no-progress",
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    result = json.loads(done.stdout + done.stderr)
    assert result["chosen"] in ("demos-2", "demos-4") and result["aligned_rubric"]["version"] == "2.a1"
    original, variants = result["original"], {v["name"]: v for v in result["variants"]}
    kept = variants[result["chosen"]]
    assert (
        kept["mae"]["value"] < original["mae"]["value"] and kept["gain"]["low"] > 0 and kept["p"] < kept["holm_level"]
    )
    assert variants["demos-4"]["gain"]["value"] > variants["demos-2"]["gain"]["value"]  # more taught, more gained
    assert result["cost_usd"] == pytest.approx(0.12)  # 2 variants x 60 calls at $0.001
    # repeated: the same alignment, its runs' answers reused, the same version
    again = json.loads(
        run_cli(
            "align",
            "--db",
            str(db),
            "--run",
            run,
            "--juror",
            "sim/lenient",
            "--criterion",
            "coherence",
            "--demos",
            "2,4",
            "--format",
            "json",
            "--no-progress",
        ).stdout
    )
    assert again["alignment_id"] == result["alignment_id"] and again["cost_usd"] == 0.0
    assert again["aligned_rubric"] == result["aligned_rubric"]

    name = f"story-quality@{result['aligned_rubric']['version']}"
    assert run_cli("rubric", "diff", "story-quality", name, "--db", str(db), "--exit-code").exit_code == 1
    assert run_cli("rubrics", "diff", "story-quality", "story-quality", "--exit-code").exit_code == 0
    diff = run_cli("rubric", "diff", "story-quality", name, "--db", str(db))
    assert (
        diff.exit_code == 0
        and "+demonstrations:" in (diff.stdout + diff.stderr)
        and "-version: '2'" in (diff.stdout + diff.stderr)
    )
    scored = run_cli(
        "score",
        "--db",
        str(db),
        "-r",
        name,
        "--where",
        "true",
        "-j",
        "sim/lenient,leniency=1.5,teachable=1,noise=0.4,cost=0.001",
        "--no-progress",
    )
    assert scored.exit_code == 0, scored.stdout + scored.stderr
    new_run = re.search(r"run (run-\S+):", (scored.stdout + scored.stderr)).group(1)  # type: ignore[union-attr]

    # no label counted twice: every coherence label made the new version
    refused = run_cli("agreement", "--db", str(db), "--run", new_run, "--criterion", "coherence")
    assert refused.exit_code == 2 and "aligned the rubric it was judged with" in (refused.stdout + refused.stderr)
    assert (
        "Traceback" not in (refused.stdout + refused.stderr)
        and len((refused.stdout + refused.stderr).strip().splitlines()) == 1
    )
    other = run_cli("agreement", "--db", str(db), "--run", new_run)
    assert other.exit_code == 0 and "left out coherence" in (other.stdout + other.stderr)
    assert (
        run_cli("agreement", "--db", str(db), "--run", run, "--criterion", "coherence").exit_code == 0
    )  # the original's run
    fitted = run_cli("calibrate", "--db", str(db), "--run", new_run, "--folds", "2", "--out", str(db.parent / "cal"))
    assert fitted.exit_code == 0, fitted.stderr
    assert "note: 60 subjects' labels of a criterion left out: they aligned the rubric" in fitted.stdout
    sample = run_cli("annotations", "sample", "--db", str(db), "--run", new_run, "--n", "20", "--name", "fresh")
    assert sample.exit_code == 0, sample.stdout + sample.stderr
    ppi = run_cli("stats", "ppi", "--db", str(db), "--run", new_run, "--sample", "fresh", "--criterion", "coherence")
    assert ppi.exit_code == 2 and "count them twice" in (ppi.stdout + ppi.stderr)
    unknown = run_cli("score", "--db", str(db), "-r", "story-quality@9", "--where", "true", "-j", "sim/x")
    assert unknown.exit_code == 2 and "Stored versions: story-quality@2, story-quality@2.a1" in (
        unknown.stdout + unknown.stderr
    )


def test_a_juror_the_prompt_does_not_change_is_left_alone(tmp_path: Path) -> None:
    db, run = _store(tmp_path, "sim/deaf,leniency=1.5,noise=0.4")
    done = run_cli(
        "align",
        "--db",
        str(db),
        "--run",
        run,
        "--juror",
        "sim/deaf",
        "--criterion",
        "coherence",
        "--demos",
        "2,4",
        "--no-progress",
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "no improvement shown: nothing was kept" in (done.stdout + done.stderr)
    with __import__("duckdb").connect(str(db), read_only=True) as con:
        assert con.execute("SELECT aligned_hash, chosen FROM alignments").fetchall() == [(None, None)]
        assert con.execute("SELECT count(*) FROM label_uses").fetchall() == [(0,)]
        assert con.execute(
            "SELECT count(*) FROM rubrics WHERE version LIKE '%.a%' AND version NOT LIKE '%align-%'"
        ).fetchall() == [(0,)]


def test_the_budget_stops_it_and_nothing_is_kept(tmp_path: Path) -> None:
    db, run = _store(tmp_path, "sim/lenient,leniency=1.5,teachable=1,noise=0.4,cost=0.01")
    done = run_cli(
        "align",
        "--db",
        str(db),
        "--run",
        run,
        "--juror",
        "sim/lenient",
        "--criterion",
        "coherence",
        "--demos",
        "2,4",
        "--max-cost",
        "0.5",
        "--format",
        "json",
        "--no-progress",
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    result = json.loads(done.stdout + done.stderr)
    assert result["status"] == "stopped_budget" and result["aligned_rubric"] is None
    assert result["cost_usd"] <= 0.5 and "budget ran out" in result["notes"][0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--juror", "sim/nobody"], "--juror 'sim/nobody' is not a juror of run"),
        (["--juror", "sim/lenient", "--criterion", "wit"], "--criterion 'wit' is not in rubric"),
        (["--juror", "sim/lenient", "--demos", "2,x"], "--demos '2,x': expected whole numbers"),
        (["--juror", "sim/lenient", "--labels", "nosuch"], "--labels: no label sample 'nosuch'"),
        (["--juror", "sim/lenient", "--folds", "1"], "--folds"),
        (["--juror", "sim/lenient"], "has labels on 6 criteria"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(teachable: tuple[Path, str], args: list[str], message: str) -> None:
    db, run = teachable
    done = run_cli("align", "--db", str(db), "--run", run, *args)
    assert done.exit_code == 2, done.stdout + done.stderr
    assert message in (done.stdout + done.stderr) and "Traceback" not in (done.stdout + done.stderr)


def test_the_optimizer_is_shown_the_disagreements_and_its_answer_is_cleaned() -> None:
    from jurybench.alignment import guidance_request, guidance_text, nearest_point, with_description
    from jurybench.rubric import load_rubric

    rubric = load_rubric("story-quality")
    messages = guidance_request(rubric, "coherence", _subjects(), seed=0)
    user = messages[-1]["content"]
    assert "Criterion: coherence" in user and "Case 12\n" in user and "Case 13" not in user  # twelve shown
    assert "People's score: 1.00\nJudge's score: 2" in user
    assert guidance_text('```\nDescription: "Reward a clear line of argument; penalise jumps."\n```') == (
        "Reward a clear line of argument; penalise jumps."
    )
    assert guidance_text("ok") is None and len(guidance_text("x" * 5000) or "") == 1500
    assert [nearest_point(v, (1, 5)) for v in (0.2, 2.5, 2.49, 7)] == [1, 3, 2, 5]
    changed = with_description(rubric, "coherence", "New words.", "2.z")
    assert changed.version == "2.z" and changed.content_hash != rubric.content_hash
    assert [c.description for c in changed.criteria if c.name == "coherence"] == ["New words."]


def test_align_is_a_study_step(tmp_path: Path) -> None:
    import csv

    with (tmp_path / "items.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "prompt", "response"])
        w.writerows([f"p{p}-{m}", f"topic {p}", f"answer {m} on {p}"] for p in range(12) for m in range(2))
    (tmp_path / "study.yaml").write_text(
        """name: aligned
steps:
  - items import: {_: "{study}/items.csv"}
  - score: {rubric: story-quality, run: base, where: "true", juror: ["sim/lenient,leniency=1.5,teachable=1"], progress: false}
  - annotations simulate: {rubric: story-quality, annotators: 3}
  - align: {run: base, juror: sim/lenient, criterion: coherence, demos: "4", progress: false}
""",
        encoding="utf-8",
    )
    done = run_cli("study", "run", str(tmp_path / "study.yaml"), "--db", str(tmp_path / "s.duckdb"))
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "jurybench align --run base --juror sim/lenient" in done.stdout and "kept demos-4" in done.stdout


def test_align_over_http_is_a_job_whose_figures_are_served(tmp_path: Path) -> None:
    from tests.service.conftest import make_client, wait_for

    db, run = _store(tmp_path, "sim/lenient,leniency=1.5,teachable=1,noise=0.4")
    body = {"run": run, "juror": "sim/lenient", "criterion": "coherence", "demos": "4"}
    with make_client(db) as client:
        plan = client.post("/v1/align/plan", json=body)
        assert plan.status_code == 200, plan.text
        assert plan.json()["status"] == "planned" and plan.json()["variants"][0]["calls"] == 60
        secret = client.post("/v1/align", json={**body, "juror": "openai/gpt-4o-mini,api_key=sk-secret-1"})
        assert 400 <= secret.status_code < 500 and "credential" in secret.text and "sk-secret-1" not in secret.text
        submitted = client.post("/v1/align", json=body)
        assert submitted.status_code == 202, submitted.text
        job = wait_for(client, submitted.json()["job_id"])
        assert job["status"] == "finished", job
        note = job["notes"][0]
        assert "kept demos-4: story-quality@2.a1" in note
        alignment = re.search(r"alignment (\w+):", note).group(1)  # type: ignore[union-attr]
        figures = client.get(f"/v1/alignments/{alignment}").json()
        assert figures["chosen"] == "demos-4" and figures["labels_used"] == 60
        assert figures["variants"][0]["gain"]["low"] > 0
        assert client.get("/v1/alignments/nosuch").status_code == 404


def test_a_classifier_is_aligned_on_its_error_rate(tmp_path: Path) -> None:
    """A classification: the humans' plurality label is the target, the error a label other than
    theirs (1 - accuracy). A simulated classifier right half the time that learns from
    demonstrations is aligned; the labels that made the new version are left out of agreement
    (refused when they are all there is); --optimizer has no description to rewrite."""
    import csv
    import random

    rng = random.Random(3)
    labels = ["joy", "sadness", "anger", "fear", "surprise", "disgust", "trust", "anticipation"]
    with (tmp_path / "items.csv").open("w", newline="") as f, (tmp_path / "labels.csv").open("w", newline="") as g:
        items, rated = csv.writer(f), csv.writer(g)
        items.writerow(["item_id", "prompt", "response", "reference", "language"])
        rated.writerow(["item_id", "annotator", "criterion", "value"])
        for p in range(30):
            for r in range(2):
                gold = rng.choice(labels)
                items.writerow([f"t{p}-{r}", f"text set {p}", f"A short text {p}-{r}.", gold, "en"])
                for a in range(3):
                    rated.writerow(
                        [f"t{p}-{r}", f"rater{a}", "label", gold if rng.random() < 0.85 else rng.choice(labels)]
                    )
    db = str(tmp_path / "c.duckdb")
    juror = "sim/clf,accuracy=0.5,teachable=1"
    assert run_cli("items", "import", str(tmp_path / "items.csv"), "--db", db).exit_code == 0
    done = run_cli(
        "score", "-r", "emotion-label", "--where", "true", "--run", "clf", "-j", juror, "--no-progress", "--db", db
    )
    assert done.exit_code == 0, done.stderr
    assert (
        run_cli(
            "annotations", "import", str(tmp_path / "labels.csv"), "--rubric", "emotion-label", "--db", db
        ).exit_code
        == 0
    )
    refused = run_cli(
        "align", "--run", "clf", "--juror", "sim/clf", "--demos", "2", "--optimizer", "sim/opt", "--db", db
    )
    assert refused.exit_code == 2 and "a classification has none to rewrite" in refused.stderr
    aligned = run_cli(
        "align", "--run", "clf", "--juror", "sim/clf", "--demos", "2,4", "--format", "json", "--no-progress", "--db", db
    )
    assert aligned.exit_code == 0, aligned.stderr
    result = json.loads(aligned.stdout)
    assert result["measure"] == "error_rate" and result["criterion"] == "label" and result["chosen"] == "demos-4"
    kept = next(v for v in result["variants"] if v["kept"])
    assert kept["mae"]["value"] < result["original"]["mae"]["value"] and kept["mae"]["low"] >= 0
    with duckdb.connect(db, read_only=True) as con:
        body = con.execute("SELECT body FROM rubrics WHERE version = '2.a1'").fetchall()[0][0]
    assert all(d["answer"]["label"] in labels for d in json.loads(body)["demonstrations"])
    again = run_cli(
        "score",
        "-r",
        "emotion-label@2.a1",
        "--where",
        "true",
        "--run",
        "clf2",
        "-j",
        juror,
        "--no-progress",
        "--db",
        db,
    )
    assert again.exit_code == 0, again.stderr
    said = run_cli("agreement", "--run", "clf2", "--db", db)
    assert said.exit_code == 2 and "every label of 'label' on run 'clf2' aligned the rubric" in said.stderr


@pytest.mark.parametrize("max_cost", [0.02, 0.05, 0.3])
def test_the_budget_binds_the_optimizer_however_long_it_answers(tmp_path: Path, max_cost: float) -> None:
    """Issue 82: an optimizer (gpt-4o's price behind the loopback stub: $2.50 / $10 per million
    tokens in / out) that answers 20,000 tokens would cost ~$0.20 a call. Every call it is asked
    is sent with max_tokens lowered to what the budget has left (the stub stops there, as a
    provider does), so the alignment's total stays within --max-cost: at 0.02 and 0.05 it stops
    on the budget; at 0.3 it makes its five fold calls and the rebuild's or stops, never over. It
    spent $0.2000 against 0.02 before."""
    from jurybench.testing.stub import StubServer

    db, run = _store(tmp_path, "sim/lenient,leniency=1.5,teachable=1,noise=0.4")
    answer = "Description: Reward stories whose events follow from each other; penalise jumps in time or place."
    with StubServer() as stub:
        for _ in range(12):
            stub.script.append((200, answer, {"x-stub-completion-tokens": "20000"}))
        optimizer = f"openai/gpt-4o,api_base={stub.api_base},api_key=sk-test"
        done = run_cli(
            "align",
            "--db",
            str(db),
            "--run",
            run,
            "--juror",
            "sim/lenient",
            "--criterion",
            "coherence",
            "--demos",
            "2",
            "--optimizer",
            optimizer,
            "--max-cost",
            str(max_cost),
            "--format",
            "json",
            "--no-progress",
        )
        sent = [r for r in stub.requests if "max_tokens" in r]
    assert done.exit_code == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert stub.requests, "the optimizer was asked at least once"
    assert len(sent) == len(stub.requests)  # every optimizer call was bounded
    assert result["cost_usd"] <= max_cost
    guidance = next(v for v in result["variants"] if v["name"] == "guidance")
    assert guidance["cost_usd"] <= max_cost
    if max_cost < 0.2:
        assert result["status"] == "stopped_budget" and result["aligned_rubric"] is None


def test_an_optimizer_without_a_price_is_refused_under_a_budget(teachable: tuple[Path, str]) -> None:
    db, run = teachable
    done = run_cli(
        "align",
        "--db",
        str(db),
        "--run",
        run,
        "--juror",
        "sim/lenient",
        "--criterion",
        "coherence",
        "--demos",
        "2",
        "--optimizer",
        "openai/no-such-model-xyz,api_base=https://example.invalid/v1,api_key=sk-test",
        "--max-cost",
        "0.1",
    )
    assert done.exit_code == 2, done.stdout + done.stderr
    assert "no price is known for the optimizer" in done.stdout + done.stderr
