"""A run spread over Ray workers (``score --executor ray``, issue 55 item 1), on a local Ray of
four logical CPUs started once for this module: every call asked once, a worker killed mid-run
costs only its calls in flight, the jurors' rpm caps and the budget hold for the cluster, and the
store holds what a local run stores except for ``runs.executor``."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray  # the ray extra is part of the dev install (constraints.txt)

from jurybench.engine import EngineHooks, EngineOptions, score
from jurybench.jurors import parse_juror
from jurybench.rubric import load_rubric
from jurybench.testing import RateLimits, StubServer
from tests.conftest import FULL, run_cli, start_local_ray, write


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    start_local_ray()
    yield
    ray.shutdown()


def _store(tmp_path: Path, name: str = "s.duckdb", n: int = 3) -> Path:
    from jurybench.store import connect, import_items

    db = tmp_path / name
    rows = "\n".join(f"i{i:02d},Prompt {i},Response {i}" for i in range(n))
    con = connect(db)
    import_items(con, write(tmp_path / f"{name}.csv", "item_id,prompt,response\n" + rows + "\n"))
    con.close()
    return db


def _ray(workers: int = 2, **options: Any) -> EngineOptions:
    return EngineOptions(executor="ray", workers=workers, retry_base_s=0.001, **options)


def _score_cli(db: Path, *options: str) -> Any:
    """score with a fake juror, in-process as the command line runs it."""
    return run_cli("score", "-r", "story-quality", "-j", "fake/f", "--no-progress", "--db", str(db), *options)


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    from jurybench.store import connect

    con = connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_every_planned_call_is_asked_once_and_stored_as_a_local_run_stores_it(tmp_path: Path) -> None:
    local, spread = _store(tmp_path, "local.duckdb"), _store(tmp_path, "ray.duckdb")
    rubric = load_rubric("story-quality")
    with StubServer(json.dumps(FULL)) as stub:
        jurors = [parse_juror(f"openai/stub,api_base={stub.api_base},api_key=k,samples=20"), parse_juror("fake/f")]
        result = score(spread, rubric, jurors, options=_ray())
        asked_on_ray = len(stub.requests)
        score(local, rubric, jurors, options=EngineOptions(retry_base_s=0.001))
    assert result.status == "finished" and result.n_called == 3 * 21
    assert asked_on_ray == 3 * 20  # the stub's count is the calls planned: none twice, none lost
    assert _rows(spread, "SELECT executor, workers, status FROM runs") == [("ray", 2, "finished")]
    assert _rows(local, "SELECT executor, workers FROM runs") == [("local", None)]
    same = (
        "SELECT c.call_key, c.status, c.response_text, j.criterion, j.score FROM calls c "
        "JOIN pointwise_judgments j USING (call_key) ORDER BY ALL"
    )
    assert _rows(spread, same) == _rows(local, same) and len(_rows(local, same)) == 63 * 6


def test_a_juror_that_reads_the_store_is_built_by_the_driver_and_shipped(tmp_path: Path) -> None:
    """sim/ reads its items' latent quality from the store, which a worker elsewhere cannot open:
    the driver builds it (JurorKind.reads_store) and the answers are those of a local run."""
    local, spread = _store(tmp_path, "local.duckdb", 4), _store(tmp_path, "ray.duckdb", 4)
    rubric = load_rubric("story-quality")
    jurors = [parse_juror("sim/s,seed=3,noise=0.5")]
    score(spread, rubric, jurors, options=_ray())
    score(local, rubric, jurors)
    scores = "SELECT item_id, criterion, score FROM pointwise_judgments ORDER BY ALL"
    assert _rows(spread, scores) == _rows(local, scores) and len(_rows(local, scores)) == 24


def _kill_one_worker() -> int:
    names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True) if a["namespace"] == "jurybench"]
    pid, _ = ray.get(ray.get_actor(sorted(names)[0], namespace="jurybench").ready.remote())
    os.kill(pid, signal.SIGKILL)
    return int(pid)


def test_a_worker_killed_mid_run_costs_only_the_calls_it_had_in_flight(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import gc

    db = _store(tmp_path, n=4)
    killed: list[int] = []

    def after(task: Any, status: str) -> None:
        if len(killed) == 0 and status == "ok":
            killed.append(_kill_one_worker())  # kill -9, the first answer back

    limits = RateLimits(delay_s=0.05, headers=False)
    with StubServer(json.dumps(FULL), limits=limits) as stub:
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=k,samples=20,concurrency=4")
        result = score(db, load_rubric("story-quality"), [juror], options=_ray(hooks=EngineHooks(on_result=after)))
        asked = len(stub.requests)
    assert killed and result.status == "finished", result.summary()
    assert _rows(db, "SELECT count(*), count(DISTINCT call_key) FROM calls WHERE status = 'ok'") == [(80, 80)]
    # Every call the killed worker held was given to another: in flight (at most its window, 4),
    # waiting there for a place (4 more at most), answered and not yet sent back (fewer than half
    # a window: 1). Only those it had started were asked twice.
    assert 1 <= result.cluster["given_again"] <= 8
    assert 80 <= asked <= 80 + 4 + 1
    assert any("Ray worker was lost" in note for note in result.notes), result.notes
    # The run ended while the lost worker's replacement was starting: that start is let go, not
    # another one begun on a closing loop ("Task was destroyed but it is pending" on stderr).
    gc.collect()
    assert not [r for r in caplog.records if "destroyed but it is pending" in r.getMessage()]


def test_a_jurors_rpm_holds_for_the_whole_cluster(tmp_path: Path) -> None:
    """rpm=600 with two workers: one schedule for both, kept by the cluster's pace keeper, from
    which every request of either worker takes its turn (each worker pacing itself would allow
    twice the rate). The turns are counted, not timed (a loaded machine only makes requests
    later than their turn); make bench measures how close to the limit the cluster runs."""
    db = _store(tmp_path, n=3)
    limits = RateLimits(headers=False)
    with StubServer(json.dumps(FULL), limits=limits) as stub:
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=k,samples=8,rpm=600")
        result = score(db, load_rubric("story-quality"), [juror], options=_ray())
    assert result.status == "finished" and limits.n_ok == 24
    assert result.cluster is not None
    turns, span = result.cluster["paced"]["openai/stub"]
    assert turns == 24 and span >= 24 * 0.1 - 1e-3  # every request took a turn of the one schedule


def test_an_endpoints_stated_limit_holds_for_the_whole_cluster(tmp_path: Path) -> None:
    """A provider that states its limit in headers (no rpm on the juror): four workers each
    reading the headers for themselves sent up to four times what was left and met 36-61 429s
    where one process met none. The rate is one schedule in the run's keeper, fed by every
    worker's answers and refusals, and each worker's window starts at its share of one process's."""
    db = _store(tmp_path, n=10)
    limits = RateLimits(rpm=600, burst_s=1.0, delay_s=0.05)  # 10 a second, 10 at once
    with StubServer(json.dumps(FULL), limits=limits) as stub:
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=k,samples=10")
        result = score(db, load_rubric("story-quality"), [juror], options=_ray(workers=4))
    assert result.status == "finished" and limits.n_ok == 100
    # Counted, not timed: 36-38 in two runs before the keeper held the rate, none in three after
    # (a request sent well after its turn, on a loaded machine, could still meet a refusal).
    assert limits.n_limited <= 15, limits.n_limited


def test_the_budget_holds_for_the_whole_cluster(tmp_path: Path) -> None:
    """Calls are admitted under --max-cost by the driver, whichever worker makes them."""
    db = _store(tmp_path, n=10)
    rubric = load_rubric("story-quality")
    with StubServer(json.dumps(FULL)) as stub:
        juror = parse_juror(f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=k,local=false,samples=10")
        first = score(db, rubric, [juror], where="item_id = 'i00'").cost.usd  # 10 calls: their size is learned
        assert first is not None and first > 0
        budget = 3 * first  # about 30 of the 90 calls left
        stub.requests.clear()
        result = score(db, rubric, [juror], options=_ray(max_cost=budget))
        asked = len(stub.requests)
    assert result.status == "stopped_budget"
    assert result.cost.usd is not None and 0 < result.cost.usd <= budget
    assert asked == result.n_called and 10 <= result.n_called <= 30


def test_the_command_line_runs_on_ray_and_says_so_in_the_store(tmp_path: Path) -> None:
    db = _store(tmp_path)
    with StubServer(json.dumps(FULL)) as stub:
        juror = f"openai/stub,api_base={stub.api_base},api_key=k,samples=4"
        args = ("score", "-r", "story-quality", "-j", juror, "--no-progress", "--db", str(db))
        done = run_cli(*args, "--executor", "ray", "--workers", "3")
        assert done.exit_code == 0, done.stderr
        again = run_cli(*args, "--executor", "ray")  # the same run: everything from the store
        asked = len(stub.requests)
    assert "12 judgments requested, 0 from cache, 12 called" in done.stdout
    assert "from cache" in again.stdout and asked == 12
    assert _rows(db, "SELECT executor, workers FROM runs ORDER BY created_at") == [("ray", 3), ("ray", 4)]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--executor", "ray", "--workers", "0"), "--workers"),
        (("--workers", "2"), "give --executor ray with it"),
        (("--executor", "ray", "--workers", "9"), "the Ray cluster has 4 CPUs"),
        (("--executor", "dask"), "dask"),
        (("--executor", "ray", "--batch"), "--batch and --executor ray do not go together"),
    ],
)
def test_bad_executor_options_are_one_line_and_write_nothing(tmp_path: Path, args: tuple[str, ...], said: str) -> None:
    db = _store(tmp_path)
    done = _score_cli(db, *args)
    assert done.exit_code == 2, (done.stdout, done.stderr)
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) <= 2  # the line and its hint
    assert _rows(db, "SELECT count(*) FROM runs") == [(0,)]


def test_without_ray_installed_the_run_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    db = _store(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    done = _score_cli(db, "--executor", "ray")
    assert done.exit_code == 2 and "needs Ray, which is not installed" in done.stderr
    assert "pip install 'jurybench[ray]'" in done.stderr
    assert _rows(db, "SELECT count(*) FROM runs") == [(0,)]


def test_generation_runs_on_ray_as_it_runs_here(tmp_path: Path) -> None:
    """generate --executor ray: the generators' calls made by the workers, the same items stored."""
    import jurybench

    prompts = write(tmp_path / "prompts.csv", "prompt_id,prompt\np0,Ask for help\np1,Ask again\n")
    spec = write(
        tmp_path / "g.yaml",
        "name: g\nprompts: prompts.csv\nuser: '{prompt} ({tone})'\ntreatments: {tone: {arms: [warm, cold]}}\n"
        "models: ['fake/a', 'fake/b']\nsamples: 2\n",
    )
    texts = {}
    for executor in ("local", "ray"):
        with jurybench.open(tmp_path / f"{executor}.duckdb") as store:
            run = jurybench.generate(
                store, spec=spec, prompts=prompts, executor=executor, workers=2 if executor == "ray" else None
            )
            assert run.status == "finished" and run.result.n_called == 2 * 2 * 2 * 2
            texts[executor] = store.sql("SELECT item_id, response FROM items ORDER BY item_id").values.tolist()
    assert texts["ray"] == texts["local"] and len(texts["local"]) == 16


def test_a_study_step_runs_on_ray(tmp_path: Path) -> None:
    items = write(tmp_path / "i.csv", "item_id,response\na,Once upon a time.\nb,The end.\n")
    study = write(
        tmp_path / "s.yaml",
        f"name: x\nsteps:\n  - items import: {{_: '{items}'}}\n"
        "  - score: {rubric: story-quality, juror: ['fake/a'], run: r, executor: ray, workers: 2}\n",
    )
    db = tmp_path / "x.duckdb"
    out = run_cli("study", "run", str(study), "--db", str(db))
    assert out.exit_code == 0, out.stderr
    assert _rows(db, "SELECT run_id, executor, workers, status FROM runs") == [("r", "ray", 2, "finished")]


def test_a_sequential_run_starts_its_workers_once_for_all_its_looks(tmp_path: Path) -> None:
    """score --until on Ray: every batch is a run of its own, judged by the same workers (kept by
    keep_workers), with sim/'s transport rebuilt for each batch's subjects and handed to them."""
    import jurybench
    from jurybench.engine import keep_workers

    rows = "\n".join(f"i{i:03d},p{i // 2},Response {i}" for i in range(60))
    with jurybench.open(tmp_path / "u.duckdb") as store:
        store.import_items(write(tmp_path / "u.csv", "item_id,prompt,response\n" + rows + "\n"))
        run = jurybench.score(
            store,
            rubric="story-quality",
            jury=["sim/a,seed=1", "sim/b,seed=2"],
            until="ci_width(coherence)<0.01",  # never met: every subject is judged, batch by batch
            batch_items=10,
            executor="ray",
            workers=2,
        )
        looks = len((run.stopping or {}).get("looks", []))
        judged = store.sql("SELECT count(DISTINCT item_id) FROM pointwise_judgments").iloc[0, 0]
    assert looks >= 3 and judged == 60
    assert run.result.cluster is not None and run.result.cluster["runs_on_these_workers"] == looks
    assert [a for a in ray.util.list_named_actors(all_namespaces=True) if a["namespace"] == "jurybench"] == []
    with keep_workers():  # outside a sequential run too: two runs, one start
        db = _store(tmp_path, "k.duckdb")
        first = score(
            db, load_rubric("story-quality"), [parse_juror("fake/a")], where="item_id = 'i00'", options=_ray()
        )
        second = score(db, load_rubric("story-quality"), [parse_juror("fake/a")], options=_ray())
    assert first.cluster and second.cluster and second.cluster["runs_on_these_workers"] == 2
    assert second.n_cached == 1 and second.n_called == 2


def test_an_address_other_than_the_cluster_this_process_is_on_is_refused(tmp_path: Path) -> None:
    """A process already connected to Ray (a notebook, this module) cannot be sent to another
    cluster in the same run: it would judge on the first without saying so."""
    db = _store(tmp_path)
    done = _score_cli(db, "--executor", "ray", "--address", "10.0.0.5:6379")
    assert done.exit_code == 2 and "already connected to the Ray cluster at" in done.stderr, done.stderr
    assert _rows(db, "SELECT count(*) FROM runs") == [(0,)]
    here = ray.get_runtime_context().gcs_address
    again = _score_cli(db, "--executor", "ray", "--address", here)
    assert again.exit_code == 0, again.stderr


def test_each_workers_window_is_its_share_of_the_jurors() -> None:
    """A juror's concurrency (here 256, the default) and the window a process opens before it
    knows the provider's limits (8) are the cluster's: with four workers, each opens at most 64
    and starts at 2. One worker is a process."""
    from jurybench.engine._ray import ClusterEndpoint
    from jurybench.jurors import EndpointLimiter

    four, one = ClusterEndpoint("k", 256, None, 4), ClusterEndpoint("k", 256, None, 1)
    assert (four.max_concurrency, four.window) == (64, 2.0)
    assert (one.max_concurrency, one.window) == (256, EndpointLimiter.START)
    assert ClusterEndpoint("k", 3, None, 4).max_concurrency == 1  # never none


def _judgments(db: Path, run: str) -> list[tuple[Any, ...]]:
    return _rows(
        db,
        "SELECT c.subject_id, j.criterion, j.score, j.status FROM calls c JOIN pointwise_judgments j USING (call_key) "
        f"JOIN run_calls USING (call_key) WHERE run_calls.run_id = '{run}' ORDER BY ALL",
    )


def test_a_kept_pools_workers_judge_the_next_run_with_its_own_rubric(tmp_path: Path) -> None:
    """Two runs of one jury with different rubrics (an alignment's variants) and budgets share the
    workers: the second's rubric is handed over and the workers' transports built again for it, so
    its answers are parsed by its own criteria, as a local run parses them. Before, the pool was
    kept only for the same rubric and budget: every variant started workers of its own."""
    from jurybench.engine import keep_workers

    db, here = _store(tmp_path, "k.duckdb"), _store(tmp_path, "here.duckdb")
    juror = [parse_juror("fake/a")]
    with keep_workers():
        first = score(db, load_rubric("story-quality"), juror, run_id="a", options=_ray())
        second = score(db, load_rubric("relevancy"), juror, run_id="b", options=_ray(max_cost=5.0))
    score(here, load_rubric("relevancy"), juror, run_id="b", options=EngineOptions(retry_base_s=0.001))
    assert first.cluster and second.cluster and second.cluster["runs_on_these_workers"] == 2
    assert second.status_counts == {"ok": 3}
    on_ray = _judgments(db, "b")
    assert on_ray == _judgments(here, "b") and {row[1] for row in on_ray} == {"relevancy"}


def test_an_alignment_on_ray_starts_its_workers_once_and_finds_what_it_finds_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """jurybench align --executor ray: every variant and fold judged by the same two workers (each
    run's rubric handed to them), the same figures as an alignment made in this process, and
    every run of it recorded as made on Ray."""
    import shutil

    from jurybench.engine._ray import RayPool
    from tests.alignment.test_align import _store as labelled

    (tmp_path / "ray").mkdir()
    db, run = labelled(tmp_path / "ray", "sim/lenient,leniency=1.5,teachable=1,noise=0.4")
    here = tmp_path / "here.duckdb"
    shutil.copy(db, here)
    started = []
    original = RayPool._start
    monkeypatch.setattr(RayPool, "_start", lambda pool: started.append(1) or original(pool))
    align = ("align", "--run", run, "--juror", "sim/lenient", "--criterion", "coherence", "--demos", "2,4")
    found = {}
    for store, extra in ((db, ("--executor", "ray", "--workers", "2")), (here, ())):
        done = run_cli(*align, "--db", str(store), "--format", "json", "--no-progress", *extra)
        assert done.exit_code == 0, done.stdout + done.stderr
        found[store] = json.loads(done.stdout)
    assert len(started) == 2  # two workers, started once for 2 variants x 5 folds
    on_ray, local = found[db], found[here]
    assert on_ray["variants"] == local["variants"] and on_ray["chosen"] == local["chosen"] == "demos-4"
    executors = _rows(db, "SELECT executor, workers, count(*) FROM runs WHERE run_id LIKE 'align-%' GROUP BY ALL")
    assert executors == [("ray", 2, 10)]
    refused = run_cli(*align, "--db", str(here), "--workers", "2")
    assert refused.exit_code == 2 and "give --executor ray with it" in refused.stderr, refused.stderr


def test_a_run_asked_to_stop_has_its_workers_hand_back_the_calls_they_had_not_started(tmp_path: Path) -> None:
    """Each worker holds its window's calls in flight and as many waiting there; asked to stop,
    the run sends no more and the workers hand back those waiting, unmade: after the stop only
    the calls in flight (2 workers x concurrency 2) are asked, and the run resumes to the rest."""
    db = _store(tmp_path, n=4)
    seen: list[str] = []
    asked_at_stop: list[int] = []
    limits = RateLimits(delay_s=0.2, headers=False)
    with StubServer(json.dumps(FULL), limits=limits) as stub:
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=k,samples=10,concurrency=2")

        def stop() -> bool:
            if len(seen) >= 2 and not asked_at_stop:
                asked_at_stop.append(len(stub.requests))
            return bool(asked_at_stop)

        hooks = EngineHooks(on_result=lambda task, status: seen.append(status), stop=stop)
        first = score(db, load_rubric("story-quality"), [juror], options=_ray(hooks=hooks), run_id="r")
        asked_first = len(stub.requests)
        again = score(db, load_rubric("story-quality"), [juror], options=_ray(), run_id="r")
        asked = len(stub.requests)
    assert first.status == "interrupted", first.summary()
    # In flight when it stopped: at most 2 a worker; without the hand-back the calls waiting in
    # the workers (2 more each) were made too.
    assert asked_first <= asked_at_stop[0] + 4, (asked_first, asked_at_stop)
    assert first.n_called == asked_first  # every call asked was stored
    assert again.status == "finished" and asked == 40  # each call asked once over both
    assert _rows(db, "SELECT count(*), count(DISTINCT call_key) FROM calls WHERE status = 'ok'") == [(40, 40)]


def test_a_call_a_ray_run_is_making_is_shared_with_another_run_of_the_process(tmp_path: Path) -> None:
    """Two runs over the same calls in one process (two service jobs), one on Ray: the other
    takes the Ray run's answers as they come back, as rows, and asks nothing itself."""
    import threading

    on_ray, here = _store(tmp_path, "ray.duckdb", 3), _store(tmp_path, "here.duckdb", 3)
    rubric = load_rubric("story-quality")
    limits = RateLimits(delay_s=0.3, headers=False)
    with StubServer(json.dumps(FULL), limits=limits) as stub:
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=k,samples=4")
        results: dict[str, Any] = {}
        first = threading.Thread(target=lambda: results.update(ray=score(on_ray, rubric, [juror], options=_ray())))
        first.start()
        while not stub.requests:  # the Ray run's calls are out
            first.join(0.01)
        results["here"] = score(here, rubric, [juror])
        first.join()
        asked = len(stub.requests)
    assert asked == 12, asked  # each call asked once, by the Ray run
    assert results["ray"].n_called == 12 and results["here"].status == "finished"
    same = (
        "SELECT c.call_key, c.status, c.response_text, j.criterion, j.score FROM calls c "
        "JOIN pointwise_judgments j USING (call_key) ORDER BY ALL"
    )
    assert _rows(here, same) == _rows(on_ray, same) and len(_rows(here, same)) == 12 * 6


def test_a_run_of_several_chunks_on_ray_has_each_chunk_judged_by_the_same_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk of subjects is a session of its own in the workers (opened with its first
    calls, ended with the chunk): 7 items in chunks of 2, every call asked once and stored."""
    import jurybench.engine._run as engine

    monkeypatch.setattr(engine, "CHUNK", 2)
    db = _store(tmp_path, n=7)
    with StubServer(json.dumps(FULL)) as stub:
        juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=k,samples=3,concurrency=2")
        result = score(db, load_rubric("story-quality"), [juror], options=_ray())
        asked = len(stub.requests)
    assert result.status == "finished" and result.n_called == 21 and asked == 21
    assert result.cluster is not None and result.cluster["runs_on_these_workers"] == 1
    assert _rows(db, "SELECT count(*), count(DISTINCT call_key) FROM calls WHERE status = 'ok'") == [(21, 21)]
