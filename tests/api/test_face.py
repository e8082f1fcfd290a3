"""The Python API (``import jurybench as jb``): stores from data, runs, statistics and the CI gate."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from scipy import stats as st

import jurybench as jb
from tests.conftest import run_cli

ITEMS = pd.DataFrame(
    [
        {"item_id": f"{m}-{p}", "prompt": f"prompt {p}", "response": f"A story number {p} told by {m}.", "model": m}
        for p in range(8)
        for m in ("ma", "mb", "mc")
    ]
)
JURY = ["sim/a", "sim/b"]


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with jb.open(tmp_path / "face.duckdb") as opened:
        opened.import_items(ITEMS, dataset="face")
        yield opened


def test_import_jurybench_is_light_and_shows_the_api() -> None:
    code = (
        "import sys, jurybench\n"
        "print(sorted(m for m in ('pandas', 'duckdb', 'litellm', 'scipy') if m in sys.modules))\n"
        "print(dir(jurybench))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "[]"
    shown = eval(out[1])
    assert {
        "open",
        "score",
        "ascore",
        "generate",
        "calibrate",
        "agreement",
        "check",
        "stats",
        "Store",
        "Run",
        "JurybenchError",
    } <= set(shown)
    assert not [name for name in shown if name.startswith("_") and name != "__version__"]


def test_api_names_stay_functions_after_every_package_is_imported() -> None:
    import importlib

    for package in ("generation", "calibration", "annotations", "jury", "stats", "store", "api", "commands"):
        importlib.import_module(f"jurybench.{package}")
    for name in ("open", "score", "ascore", "generate", "calibrate", "agreement", "check"):
        assert callable(getattr(jb, name)) and getattr(jb, name).__module__.startswith("jurybench.api"), name


def test_import_from_data_checks_rows_and_writes_nothing_on_error(tmp_path: Path) -> None:
    with jb.open(tmp_path / "s.duckdb") as store:
        bad = pd.DataFrame({"item_id": ["a", "b", "c"], "response": ["ok", float("nan"), "ok"]})
        with pytest.raises(jb.JurybenchError, match=r"^DataFrame row 2, field 'response'"):
            store.import_items(bad)
        assert store.sql("SELECT count(*) AS n FROM items")["n"][0] == 0
        with pytest.raises(jb.JurybenchError, match="rows row 1: expected a mapping"):
            store.import_items(["not a row"])
        result = store.import_items([{"item_id": "a", "response": "fine", "colour": "red"}])
        assert (result.inserted, result.unchanged) == (1, 0)
        meta = store.sql("SELECT metadata FROM items")["metadata"][0]
        assert json.loads(meta) == {"colour": "red"}


def test_a_read_only_store_refuses_writes(tmp_path: Path) -> None:
    jb.open(tmp_path / "s.duckdb").close()
    with jb.open(tmp_path / "s.duckdb", read_only=True) as store:
        with pytest.raises(jb.JurybenchError, match="open read-only"):
            store.import_items(ITEMS)
        with pytest.raises(jb.JurybenchError, match="only a single SELECT"):
            store.sql("DELETE FROM items")


def test_score_returns_a_run_and_resumes_from_the_cache(store: Any) -> None:
    run = jb.score(store, rubric="story-quality", jury=JURY, run="r1")
    assert (run.run_id, run.status, run.counts) == ("r1", "finished", {"ok": 48, "cached": 0})
    results = run.results()
    assert len(results) == 24 * 6 and set(results["criterion"]) == {
        "relevance",
        "coherence",
        "empathy",
        "surprise",
        "engagement",
        "complexity",
    }
    # the jury's rule (mean of juror means) recomputed from each juror's own scores
    judgments = run.judgments()
    by_hand = judgments.groupby(["item_id", "criterion"])["juror_score"].mean()
    merged = results.set_index(["item_id", "criterion"])["jury_score"]
    assert max(abs(merged[k] - by_hand[k]) for k in by_hand.index) < 1e-9
    again = jb.score(store, rubric="story-quality", jury=JURY, run="r1")
    assert again.counts == {"cached": 48} and again.result.n_called == 0


def test_plan_calls_nothing(store: Any) -> None:
    plan = jb.score(store, rubric="story-quality", jury=JURY, plan=True)
    assert plan.status == "planned" and list(plan.plan["calls"]) == [24, 24]
    with pytest.raises(jb.JurybenchError, match="a plan has no results"):
        plan.results()
    assert store.sql("SELECT count(*) AS n FROM runs")["n"][0] == 0


def test_score_inside_a_running_event_loop_and_ascore(store: Any) -> None:
    async def notebook_cell() -> tuple[str, str]:
        first = jb.score(store, rubric="story-quality", jury=JURY, run="in-loop")  # sync call, loop running
        second = await jb.ascore(store, rubric="story-quality", jury=["sim/c"], run="awaited")
        return first.status, second.status

    assert asyncio.run(notebook_cell()) == ("finished", "finished")


def test_statistics_return_frames_and_record_results(store: Any) -> None:
    jb.score(store, rubric="story-quality", jury=JURY, run="r1")
    frame = jb.stats.ttest(store, "r1", by="model", baseline=3.0)
    rid = frame.attrs["result_id"]
    recorded = store.sql(f"SELECT name, run_id FROM stats_results WHERE result_id = '{rid}'")
    assert list(recorded.iloc[0]) == ["ttest", "r1"]
    # each group's one-sample t against 3.0, from the jury scores themselves
    scores = store.sql(
        "SELECT i.model, v.criterion, v.jury_score FROM jury_pointwise v JOIN items i USING (item_id) "
        "WHERE v.run_id = 'r1'"
    )
    row = frame[(frame["criterion"] == "coherence") & (frame["group"] == "mb")].iloc[0]
    values = scores[(scores["model"] == "mb") & (scores["criterion"] == "coherence")]["jury_score"].to_numpy()
    n, mean = len(values), values.mean()
    sd = math.sqrt(((values - mean) ** 2).sum() / (n - 1))
    t = (mean - 3.0) / (sd / math.sqrt(n))
    assert row["t"] == pytest.approx(t) and row["p"] == pytest.approx(2 * st.t.sf(abs(t), n - 1))
    assert jb.stats.results(store)["result_id"].tolist() == [rid]


def test_check_thresholds_and_a_significant_drop(store: Any) -> None:
    jb.score(store, rubric="story-quality", jury=JURY, run="base")
    jb.score(store, rubric="story-quality", jury=["sim/a", "sim/b,leniency=-1"], run="worse")
    means = store.sql("SELECT criterion, avg(jury_score) AS m FROM jury_pointwise WHERE run_id = 'base' GROUP BY ALL")
    coherence = float(means.set_index("criterion")["m"]["coherence"])
    assert jb.check(store, "base", min=[f"coherence>={coherence - 0.01}"]).passed
    missed = jb.check(store, "base", min=[f"coherence>={coherence + 0.01}"])
    assert not missed.passed and missed.failures[0].startswith("coherence: mean")

    gate = jb.check(store, "worse", baseline_run="base", max_drop=0.1)
    paired = store.sql(
        "SELECT b.item_id, b.jury_score - w.jury_score AS d FROM jury_pointwise b JOIN jury_pointwise w "
        "USING (item_id, criterion) WHERE b.run_id = 'base' AND w.run_id = 'worse' "
        "AND b.criterion = 'coherence'"
    )
    d = paired["d"].to_numpy()
    n, mean = len(d), d.mean()
    t = (mean - 0.1) / (math.sqrt(((d - mean) ** 2).sum() / (n - 1)) / math.sqrt(n))
    row = gate.table.set_index("criterion").loc["coherence"]
    assert (row["n_paired"], row["drop"]) == (24, pytest.approx(mean))
    assert row["p_drop"] == pytest.approx(st.t.sf(t, n - 1))
    assert bool(row["ok"]) == (not (mean > 0.1 and st.t.sf(t, n - 1) < 0.05))
    assert not gate.passed  # leniency -1 on one of two jurors lowers every criterion by about half a point


def test_check_from_the_command_line_exit_codes(tmp_path: Path) -> None:
    db = tmp_path / "c.duckdb"
    with jb.open(db) as store:
        store.import_items(ITEMS)
        jb.score(store, rubric="story-quality", jury=JURY, run="r")
    ok = run_cli("check", "--run", "r", "--min", "coherence>=1", "--db", str(db))
    assert ok.exit_code == 0 and "PASSED" in ok.stdout
    failed = run_cli("check", "--run", "r", "--min", "coherence>=4.9", "--db", str(db))
    assert failed.exit_code == 1 and "FAIL" in failed.stdout and "coherence: mean" in failed.stdout
    usage = run_cli("check", "--run", "r", "--min", "coherence=3", "--db", str(db))
    assert usage.exit_code == 2 and "is not a rule" in usage.stderr
    nothing = run_cli("check", "--run", "r", "--db", str(db))
    assert nothing.exit_code == 2 and "nothing to check" in nothing.stderr


def test_generate_from_a_spec_and_a_dataframe_of_prompts(tmp_path: Path) -> None:
    from jurybench.generation import GenerationSpec

    spec = GenerationSpec.model_validate(
        {
            "name": "letters",
            "user": "Write to {recipient_gender}: {prompt}",
            "models": ["sim/writer,seed=1"],
            "treatments": {
                "recipient_gender": {"arms": ["female", "male"], "text": {"female": "a woman", "male": "a man"}}
            },
        }
    )
    prompts = pd.DataFrame({"prompt_id": ["p1", "p2", "p3"], "prompt": ["Ask for help.", "Say thanks.", "Decline."]})
    with jb.open(tmp_path / "g.duckdb") as store:
        run = jb.generate(store, spec, prompts=prompts, run="g1")
        assert run.status == "finished" and run.counts == {"ok": 6, "cached": 0}  # 3 prompts x 2 arms x 1 model
        items = store.sql("SELECT count(*) AS n FROM items")["n"][0]
        pairs = store.sql("SELECT count(*) AS n FROM pairs")["n"][0]
        assert (items, pairs) == (6, 3) and len(run.results()) == 6
        with pytest.raises(jb.JurybenchError, match="DataFrame row 2, field 'prompt'"):
            jb.generate(store, spec, prompts=pd.DataFrame({"prompt_id": ["a", "b"], "prompt": ["x", None]}))


def test_store_sql_follows_the_cli_rules_on_a_writable_store(store: Any, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    with pytest.raises(jb.JurybenchError, match=r"read_text\(\), which is not allowed"):
        store.sql(f"SELECT * FROM read_text('{secret}')")
    with pytest.raises(jb.JurybenchError, match="give one statement, not 2"):
        store.sql("SELECT 1; DROP TABLE items")
    assert store.sql("SELECT count(*) AS n FROM items")["n"][0] == len(ITEMS)
    # what the store does itself is unaffected: imports from files, judging, statistics, calibration files
    extra = tmp_path / "more.csv"
    extra.write_text("item_id,response\nz1,one more\n")
    assert store.import_items(extra).inserted == 1


def test_python_arguments_of_the_wrong_type_are_one_line_before_anything_is_written(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    with jb.open(tmp_path / "t.duckdb") as store:
        store.import_items([{"item_id": "a", "response": "x"}])
        for kwargs, says in (
            ({"run": 123}, "run: expected str"),
            ({"where": 42}, "where: expected str"),
            ({"max_cost": float("nan")}, "max_cost"),
            ({"ids": ["a", 1]}, "ids"),
        ):
            with pytest.raises(jb.JurybenchError, match=says):
                jb.score(store, rubric="story-quality", jury=["fake/a"], **kwargs)
        with pytest.raises(jb.JurybenchError, match="dataset: expected str"):
            store.import_items([{"item_id": "b", "response": "y"}], dataset=5)  # type: ignore[arg-type]
        assert len(store.sql("SELECT * FROM runs")) == 0 and len(store.sql("SELECT * FROM items")) == 1
    with pytest.raises(jb.JurybenchError, match="store: None"):
        jb.score(None, rubric="story-quality", jury=["fake/a"])
    assert not (tmp_path / "jurybench.duckdb").exists()


def test_two_runs_on_one_open_store_the_second_is_refused_at_once(tmp_path: Path) -> None:
    import asyncio

    with jb.open(tmp_path / "two.duckdb") as store:
        store.import_items([{"item_id": f"i{k}", "response": f"S {k}"} for k in range(6)])

        async def both() -> list[Any]:
            slow = jb.ascore(store, rubric="story-quality", jury=["fake/slow,latency_ms=300,concurrency=1"], run="a")
            first = asyncio.ensure_future(slow)
            await asyncio.sleep(0.5)
            second = jb.ascore(store, rubric="story-quality", jury=["fake/b"], run="b")
            return list(await asyncio.gather(first, second, return_exceptions=True))

        first, second = asyncio.run(both())
        assert first.status == "finished"
        assert isinstance(second, jb.JurybenchError) and "another run" in str(second)


def test_a_python_run_lets_other_processes_read_the_store_between_flushes(tmp_path: Path) -> None:
    """jb.open held the file for its whole with block: 'jurybench sql' from another process was
    refused during a long jb.score (issue 27); the run now lends it as the CLI's score does."""
    import subprocess
    import sys
    import threading
    import time

    db = tmp_path / "lend.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k:02d}", "response": f"S {k}"} for k in range(30)])
        done: list[Any] = []
        runner = threading.Thread(
            target=lambda: done.append(
                jb.score(store, rubric="story-quality", jury=["fake/slow,latency_ms=150,concurrency=1"], run="slow")
            )
        )
        runner.start()
        seen = 0
        deadline = time.monotonic() + 120
        while seen == 0 and time.monotonic() < deadline and runner.is_alive():
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "jurybench.cli",
                    "sql",
                    "SELECT count(*) FROM calls",
                    "--format",
                    "csv",
                    "--db",
                    str(db),
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert out.returncode == 0, out.stderr
            seen = int(out.stdout.split()[-1])
        assert runner.is_alive() and seen > 0  # read from another process while the run went on
        runner.join(120)
        assert done and done[0].status == "finished"
        assert len(store.sql("SELECT * FROM calls")) == 30  # the store is back in the with block


def test_the_types_the_docs_tell_users_to_pass_are_exported_and_the_version_is_the_packages() -> None:
    from importlib.metadata import version

    from jurybench.jurors import JurorSpec
    from jurybench.jury import Jury

    assert jb.__version__ == version("jurybench")
    assert jb.Jury is Jury and jb.JurorSpec is JurorSpec
    rubric = jb.load_rubric("story-quality")
    assert isinstance(rubric, jb.Rubric)  # the base of every kind, a plug-in's too
    spec = jb.parse_juror("fake/a,samples=2")
    run_jury = jb.api.jury_of([spec])
    assert isinstance(run_jury, jb.Jury) and run_jury.jurors[0].samples == 2
