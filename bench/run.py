"""jurybench benchmarks: ratios measured side by side in one run (make bench).

1. Engine throughput: N pointwise judgment requests through `jurybench.jury.score` at
   concurrency 64 against a loopback OpenAI-compatible stub (its own process), versus
   the same requests made with bare `litellm.acompletion` in a plain asyncio loop.
   Target: engine / bare >= 0.9. Also: the instructor driver versus bare on a smaller N.
2. Store: 1,000,000 judgment rows inserted with the engine's batched Arrow path,
   versus row-by-row inserts (measured on fewer rows, reported per row).
3. CLI start: `jurybench --help` versus `python -c pass`.
4. Statistics: G_T bootstrap (13 models x 19 categories x 150 pairs) and Cohen's d with
   bootstrap CIs (24 cells x 30 sub-scales x 400 runs per arm), vectorised versus
   per-resample loops; and Cohen's d over 1,920,000 ratings read straight from DuckDB
   (time and peak memory, in a separate process).
5. Calibration: 10-fold cross-validated fits for HANNA's 6 criteria x 5 jurors x 1,056
   items (target well under 2 s), beside the time to load the data from the store.

6. Service: 50 concurrent HTTP clients on loopback each submit a small job (3 inline items,
   a simulated juror) to `jurybench serve` and poll it until it ends; every job must finish
   and the store must hold each judgment exactly once (counted in SQL); submit and poll
   latency percentiles are reported.

8. Conversations (bench/conversation_bench.py): 1k and 10k conversations of 30 messages imported
   (time and peak RSS, ratio), and a 30-message trace rendered for a judge against one response
   of its length.

7. Rate limits: 400 calls from one juror at concurrency 256, no rpm/tpm set, against a
   loopback stub that allows 600 requests a minute (token bucket, 1 s of burst, 0.2 s an
   answer) and answers 429 with retry-after and x-ratelimit-* headers beyond it; the same
   against a tokens-a-minute limit; and two jurors on one key sharing 600 a minute.
   Targets: >= 0.95 of the limit, < 1 % 429s per success, 400/400 stored.

Results are printed and written to bench/out/results.json. Timings are wall-clock on
a shared machine: read the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
ANSWER = {"relevance": 4, "coherence": 3, "empathy": 2, "surprise": 5, "engagement": 3, "complexity": 1}


def start_stub(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "jurybench.testing.stub", "--port", str(port), "--content", json.dumps(ANSWER)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import socket

    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("stub did not start")


def make_store(n: int, path: Path) -> Any:
    from jurybench.store import connect, import_items

    items = path.with_suffix(".csv")
    with items.open("w", encoding="utf-8") as fh:
        fh.write("item_id,prompt,response\n")
        for i in range(n):
            fh.write(f"b{i:06d},Write a short story number {i}.,Once upon a time there was story {i}.\n")
    con = connect(path)
    import_items(con, items)
    return con


async def bare_litellm(messages: list[list[dict[str, str]]], api_base: str, concurrency: int) -> float:
    import litellm

    sem = asyncio.Semaphore(concurrency)
    kwargs = {
        "model": "openai/bench-judge",
        "api_base": api_base,
        "api_key": "x",
        "temperature": 0,
        "timeout": 60.0,
        "max_retries": 0,
        "response_format": {"type": "json_object"},
    }

    async def one(m: list[dict[str, str]]) -> None:
        async with sem:
            await litellm.acompletion(messages=m, **kwargs)

    start = time.perf_counter()
    await asyncio.gather(*(one(m) for m in messages))
    return time.perf_counter() - start


# The engine's juror as bare litellm calls the stub: through litellm's acompletion, not the lean
# transport that is the default for an OpenAI-compatible endpoint (a comparison of the engine's own
# cost must send the same requests through the same client as the bare side).
LITELLM = ",transport=litellm"


def engine_run(store: Path, api_base: str, concurrency: int, extra: str = "", where: str | None = None) -> float:
    """One engine run as the CLI makes it: the store by path, released between flushes."""
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric

    juror = parse_juror(f"openai/bench-judge,api_base={api_base},api_key=x,temperature=0,retries=0{extra}")
    start = time.perf_counter()
    result = score(
        store,
        load_rubric("story-quality"),
        [juror],
        where=where,
        options=EngineOptions(concurrency=concurrency, progress=False),
    )
    elapsed = time.perf_counter() - start
    assert result.status_counts.get("ok") == result.n_called, result.summary()
    return elapsed


def engine_own_cpu(n: int, concurrency: int, api_base: str) -> float:
    """The engine's own CPU per call (ms): a whole run (plan, render, parse, journal, store) with
    litellm.acompletion replaced by one canned answer, so nothing of litellm's or the
    provider's is counted. It varies far less than a comparison with the network in it."""
    import litellm

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "own.duckdb"
        make_store(n, store).close()
        canned = asyncio.run(
            litellm.acompletion(
                model="openai/bench-judge",
                messages=[{"role": "user", "content": "Rate this."}],
                api_base=api_base,
                api_key="x",
                response_format={"type": "json_object"},
            )
        )

        async def answer(**kwargs: Any) -> Any:
            await asyncio.sleep(0)
            return canned

        real = litellm.acompletion
        litellm.acompletion = answer
        try:
            cpu = time.process_time()
            # litellm's transport: the canned answer stands in for its acompletion (the lean
            # transport, the default for this endpoint, would post to the stub instead)
            engine_run(store, api_base, concurrency, LITELLM)
            return 1000 * (time.process_time() - cpu) / n
        finally:
            litellm.acompletion = real


def store_and_messages(n: int, store: Path) -> list[list[dict[str, str]]]:
    """A store of n items at ``store`` and each item's messages, as the engine renders them (what
    the bare clients send)."""
    from jurybench.rubric import load_rubric, render_pointwise

    con = make_store(n, store)
    rubric = load_rubric("story-quality")
    rows = con.execute("SELECT * FROM items ORDER BY item_id").fetchall()
    names = [d[0] for d in con.description]
    con.close()
    return [render_pointwise(rubric, dict(zip(names, r, strict=True))) for r in rows]


def bench_engine(n: int, n_instructor: int, concurrency: int, blocks: int = 4) -> dict[str, Any]:
    port = 18765
    stub = start_stub(port)
    api_base = f"http://127.0.0.1:{port}/v1"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = Path(tmp) / "engine.duckdb"
            messages = store_and_messages(n, store)
            asyncio.run(bare_litellm(messages[:300], api_base, concurrency))  # warm-up
            # Blocks in ABBA order, repeated (bare, engine, engine, bare, bare, engine, ...): a
            # drift of the shared machine that is linear in time affects both sides alike, and
            # the host's speed, which wanders by a fifth over minutes here, is sampled on both
            # sides many times. Each side makes all n requests, in ``blocks`` runs.
            size = n // blocks
            bounds = [(k * size, n if k == blocks - 1 else (k + 1) * size) for k in range(blocks)]
            bare_s = engine_s = bare_cpu = engine_cpu = 0.0
            ratios: list[float] = []
            for k, (lo, hi) in enumerate(bounds):
                where = f"item_id >= 'b{lo:06d}' AND item_id < 'b{hi:06d}'"
                block = {"bare": 0.0, "engine": 0.0}
                for side in ("bare", "engine") if k % 2 == 0 else ("engine", "bare"):
                    cpu = time.process_time()
                    if side == "bare":
                        bare_s += asyncio.run(bare_litellm(messages[lo:hi], api_base, concurrency))
                    else:
                        engine_s += engine_run(store, api_base, concurrency, LITELLM, where=where)
                    block[side] = time.process_time() - cpu
                bare_cpu, engine_cpu = bare_cpu + block["bare"], engine_cpu + block["engine"]
                ratios.append(block["engine"] / block["bare"])
            # the engine as a user runs it (the default transport, lean for this endpoint), its
            # requests judged again under another juror name so that none comes from the cache
            lo, hi = bounds[0]
            cpu = time.process_time()
            engine_run(
                store, api_base, concurrency, ",seed=1", where=f"item_id >= 'b{lo:06d}' AND item_id < 'b{hi:06d}'"
            )
            default_ms = 1000 * (time.process_time() - cpu) / (hi - lo)
            sub = messages[:n_instructor]
            bare_small_s = asyncio.run(bare_litellm(sub, api_base, concurrency))
            instructor_s = engine_run(
                store, api_base, concurrency, ",structured=instructor", where=f"item_id < 'b{n_instructor:06d}'"
            )
            from jurybench.store import connect

            con = connect(store)
            calls = con.execute(
                "SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM calls WHERE juror_key IN "
                "(SELECT juror_key FROM jurors WHERE params NOT LIKE '%instructor%')"
            ).fetchall()[0]
            con.close()
            own_ms = engine_own_cpu(min(n, 4000), concurrency, api_base)
    finally:
        stub.terminate()
        stub.wait()
    return {
        "requests": n,
        "concurrency": concurrency,
        "bare_litellm_calls_per_s": n / bare_s,
        "engine_calls_per_s": n / engine_s,
        "engine_over_bare": bare_s / engine_s,
        "target_engine_over_bare": 0.9,
        "bare_cpu_ms_per_call": 1000 * bare_cpu / n,
        "engine_cpu_ms_per_call": 1000 * engine_cpu / n,
        "engine_cpu_over_bare": engine_cpu / bare_cpu,
        "engine_cpu_over_bare_by_block": [round(r, 3) for r in ratios],
        "engine_default_transport_cpu_ms_per_call": default_ms,
        "engine_default_transport_cpu_over_bare": default_ms / (1000 * bare_cpu / n),
        "target_engine_cpu_over_bare": 1.1,
        "engine_own_cpu_ms_per_call": own_ms,
        "engine_own_cpu_over_bare": own_ms / (1000 * bare_cpu / n),
        "stored_calls": calls[0],
        "stored_ok": calls[1],
        "instructor_requests": n_instructor,
        "instructor_driver_over_bare": bare_small_s / instructor_s,
    }


async def raw_openai(messages: list[list[dict[str, str]]], api_base: str, concurrency: int) -> float:
    """The raw openai client, as a program that needs nothing else would call the stub."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=api_base, api_key="x", max_retries=0, timeout=60.0)
    sem = asyncio.Semaphore(concurrency)

    async def one(m: list[dict[str, str]]) -> None:
        async with sem:
            await client.chat.completions.create(
                model="bench-judge",
                messages=m,  # type: ignore[arg-type]
                temperature=0,
                response_format={"type": "json_object"},
            )

    start = time.perf_counter()
    await asyncio.gather(*(one(m) for m in messages))
    await client.close()
    return time.perf_counter() - start


def bench_lean(n: int, concurrency: int, blocks: int = 4) -> dict[str, Any]:
    """The lean transport (transport=openai) against the raw openai client on the loopback stub,
    in ABBA blocks: CPU per call and calls/s (issue 55)."""
    port = 18766
    stub = start_stub(port)
    api_base = f"http://127.0.0.1:{port}/v1"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = Path(tmp) / "lean.duckdb"
            messages = store_and_messages(n, store)
            asyncio.run(raw_openai(messages[:300], api_base, concurrency))  # warm-up
            size = n // blocks
            cpu = {"raw": 0.0, "lean": 0.0}
            wall = {"raw": 0.0, "lean": 0.0}
            for k in range(blocks):
                lo, hi = k * size, n if k == blocks - 1 else (k + 1) * size
                for side in ("raw", "lean") if k % 2 == 0 else ("lean", "raw"):
                    start = time.process_time()
                    if side == "raw":
                        wall[side] += asyncio.run(raw_openai(messages[lo:hi], api_base, concurrency))
                    else:
                        where = f"item_id >= 'b{lo:06d}' AND item_id < 'b{hi:06d}'"
                        wall[side] += engine_run(store, api_base, concurrency, ",transport=openai", where=where)
                    cpu[side] += time.process_time() - start
    finally:
        stub.terminate()
        stub.wait()
    return {
        "requests": n,
        "raw_openai_cpu_ms_per_call": 1000 * cpu["raw"] / n,
        "lean_cpu_ms_per_call": 1000 * cpu["lean"] / n,
        "lean_cpu_over_raw": cpu["lean"] / cpu["raw"],
        "target_lean_cpu_over_raw": 1.25,
        "raw_openai_calls_per_s": n / wall["raw"],
        "lean_calls_per_s": n / wall["lean"],
        "lean_calls_over_raw": wall["raw"] / wall["lean"],
        "target_lean_calls_over_raw": 0.8,
    }


def bench_store(n_rows: int, n_slow: int) -> dict[str, Any]:
    from jurybench.engine._records import write_batch
    from jurybench.store import connect

    def judgment(i: int) -> dict[str, Any]:
        return {
            "call_key": f"k{i // 6:08d}",
            "rubric_hash": "h",
            "juror_key": "j",
            "subject_id": f"i{i // 6}",
            "presented_order": None,
            "sample_index": 0,
            "dimension": f"c{i % 6}",
            "score": i % 5 + 1,
            "status": "valid",
            "reason": None,
            "rationale": None,
        }

    with tempfile.TemporaryDirectory() as tmp:
        con = connect(Path(tmp) / "store.duckdb")
        batch = 100_000
        start = time.perf_counter()
        for lo in range(0, n_rows, batch):
            write_batch(con, "r", [], [judgment(i) for i in range(lo, min(n_rows, lo + batch))], [], False)
        batched_s = time.perf_counter() - start
        stored = con.execute("SELECT count(*) FROM pointwise_judgments").fetchall()[0][0]
        slow = connect(Path(tmp) / "slow.duckdb")
        start = time.perf_counter()
        for i in range(n_slow):
            j = judgment(i)
            slow.execute(
                "INSERT INTO pointwise_judgments (call_key, rubric_hash, juror_key, item_id, sample_index, criterion, score, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    j["call_key"],
                    j["rubric_hash"],
                    j["juror_key"],
                    j["subject_id"],
                    0,
                    j["dimension"],
                    j["score"],
                    j["status"],
                ],
            )
        row_s = time.perf_counter() - start
    return {
        "rows": n_rows,
        "stored": stored,
        "batched_seconds": batched_s,
        "batched_rows_per_s": n_rows / batched_s,
        "row_by_row_rows_measured": n_slow,
        "row_by_row_rows_per_s": n_slow / row_s,
        "batched_over_row_by_row": (n_rows / batched_s) / (n_slow / row_s),
    }


def bench_calibration() -> dict[str, Any]:
    """HANNA: 6 criteria x 5 jurors x 1,056 items, 10-fold grouped CV (load time reported beside)."""
    from jurybench.calibration._data import calibration_data
    from jurybench.calibration._fit import fit_criterion
    from jurybench.config import data_path
    from jurybench.datasets import import_hanna
    from jurybench.store import connect

    data = data_path(None)
    if not (data / "hanna" / "hanna_metric_scores_llm.csv").exists():
        return {"skipped": f"no HANNA data under {data}"}
    with tempfile.TemporaryDirectory() as tmp:
        con = connect(Path(tmp) / "hanna.duckdb")
        start = time.perf_counter()
        import_hanna(con, data)
        import_s = time.perf_counter() - start
        start = time.perf_counter()
        blocks, _ = calibration_data(con, "hanna", criteria=None, group_by="meta.prompt_id", covariates=[])
        load_s = time.perf_counter() - start
        timings = {}
        # Warm-up: the first fit pays for importing scikit-learn and scipy.stats.
        fit_criterion(
            blocks[0], cross_features=None, cross_names=None, methods=["ols"], test_size=0.2, folds=10, seed=0, n_boot=0
        )
        for methods in (["ols"], ["ols", "ridge", "nnls"]):
            start = time.perf_counter()
            for block in blocks:
                fit_criterion(
                    block,
                    cross_features=None,
                    cross_names=None,
                    methods=methods,
                    test_size=0.2,
                    folds=10,
                    seed=0,
                    n_boot=0,
                )
            timings["+".join(methods)] = time.perf_counter() - start
    return {
        "items": len(blocks[0].items),
        "jurors": len(blocks[0].jurors),
        "criteria": len(blocks),
        "import_seconds": import_s,
        "load_seconds": load_s,
        "fit_10fold_ols_seconds": timings["ols"],
        "fit_10fold_three_variants_seconds": timings["ols+ridge+nnls"],
        "target_seconds": 2.0,
    }


def bench_statistics(quick: bool) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "bench"))
    import stats_bench

    out: dict[str, Any] = {"gap_bootstrap": stats_bench.bench_gap(), "cohens_d_bootstrap": stats_bench.bench_cohens_d()}
    # The store benchmark runs in its own process so its peak memory is its own.
    code = "import sys, json; sys.path.insert(0, 'bench'); import stats_bench; "
    code += f"print(json.dumps(stats_bench.bench_store_ratings({40 if quick else 400})))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    out["ratings_from_duckdb"] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def _service_burst(
    url: str, n_clients: int, items_per_job: int, poll_every: float, tag: str, juror: str = "sim/bench,noise=0.5"
) -> dict[str, Any]:
    """``n_clients`` clients submit a small job each at once, then poll it until it ends. The
    client is aiohttp (lean): on these 2 cores an httpx client spent 4 CPU-s of a 6 s burst, so
    its own queueing, not the server, set the poll latencies it measured."""
    import aiohttp

    resets: list[str] = []  # connection errors a client saw (target: none)

    async def client(http: Any, k: int, submit: list[float], poll: list[float]) -> str:
        items = [{"item_id": f"{tag}{k}-i{j}", "response": f"Story {k}.{j}"} for j in range(items_per_job)]
        body = {"rubric": "story-quality", "items": items, "jury": {"jurors": [juror]}}
        start = time.perf_counter()
        async with http.post(f"{url}/v1/jobs", json=body) as response:
            job = await response.json()
        submit.append(time.perf_counter() - start)
        while job["status"] in ("queued", "running"):
            await asyncio.sleep(poll_every)
            start = time.perf_counter()
            try:
                async with http.get(f"{url}/v1/jobs/{job['job_id']}") as response:
                    job = await response.json()
            except aiohttp.ClientConnectionError as exc:  # counted, and the poll is made again
                resets.append(type(exc).__name__)
                continue
            poll.append(time.perf_counter() - start)
        return str(job["status"])

    async def run() -> tuple[list[str], list[float], list[float], float]:
        submit: list[float] = []
        poll: list[float] = []
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=n_clients)) as http:
            start = time.perf_counter()
            statuses = await asyncio.gather(*(client(http, k, submit, poll) for k in range(n_clients)))
            return list(statuses), submit, poll, time.perf_counter() - start

    def pct(values: list[float], q: int) -> float:
        return float(statistics.quantiles(values, n=100)[q - 1]) * 1000 if len(values) > 1 else float("nan")

    statuses, submit, poll, wall = asyncio.run(run())
    return {
        "clients": n_clients,
        "jobs_finished": statuses.count("finished"),
        "wall_seconds": wall,
        "jobs_per_s": n_clients / wall,
        "connection_errors": len(resets),
        "polls": len(poll),
        "submit_ms": {"p50": pct(submit, 50), "p95": pct(submit, 95), "p99": pct(submit, 99)},
        "poll_ms": {"p50": pct(poll, 50), "p95": pct(poll, 95), "p99": pct(poll, 99)},
    }


def _serving(workers: int, folder: str, *extra: str, juror: str = "sim/bench,noise=0.5") -> tuple[Any, str]:
    """A ``jurybench serve`` process on a fresh store, up and warmed by one job (a server runs
    warm: its first job pays the imports a long-lived process pays once); ``extra``: more of
    serve's options."""
    import httpx

    from jurybench.testing.stub import free_port

    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jurybench.cli",
            "serve",
            "--db",
            str(Path(folder) / f"svc{workers}{''.join(extra)}.duckdb"),
            "--port",
            str(port),
            "--workers",
            str(workers),
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "JURYBENCH_TOKEN": ""},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/v1/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise RuntimeError("the server did not start")
        time.sleep(0.1)
    _service_burst(url, 2, 1, 0.05, "warm", juror=juror)
    return server, url


def bench_service_ray(n_clients: int = 50, items_per_job: int = 20, turns: int = 3) -> dict[str, Any]:
    """serve --executor ray beside serve with jobs in its own process (issue 55): two job slots
    each, bursts of ``n_clients`` jobs of ``items_per_job`` items judged by a loopback provider
    that answers at once (so that a call costs the transport's CPU), taken in turns; submit and
    poll latency and jobs/s, medians of the turns."""
    from jurybench.testing.stub import StubServer

    sides: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as folder, StubServer(json.dumps(ANSWER)) as stub:
        juror = f"openai/stub,api_base={stub.api_base},api_key=sk-bench"
        servers = {
            "local": _serving(2, folder, juror=juror),
            "ray": _serving(2, folder, "--executor", "ray", "--ray-workers", "1", juror=juror),
        }
        unfinished = 0
        try:
            for turn in range(turns):
                for name, (_, url) in servers.items():
                    burst = _service_burst(url, n_clients, items_per_job, 0.25, f"r{turn}{name}-", juror=juror)
                    unfinished += burst["clients"] - burst["jobs_finished"]
                    side = sides.setdefault(name, {"submit_p95_ms": [], "poll_p95_ms": [], "jobs_per_s": []})
                    side["submit_p95_ms"].append(burst["submit_ms"]["p95"])
                    side["poll_p95_ms"].append(burst["poll_ms"]["p95"])
                    side["jobs_per_s"].append(burst["jobs_per_s"])
            many: dict[str, Any] = {}  # 200 clients at once, a burst a server
            for name, (_, url) in servers.items():
                burst = _service_burst(url, 200, items_per_job, 0.25, f"m{name}-", juror=juror)
                unfinished += burst["clients"] - burst["jobs_finished"]
                many[name] = {"submit_p95_ms": burst["submit_ms"]["p95"], "poll_p95_ms": burst["poll_ms"]["p95"]}
            import httpx

            where = {  # the runs each server made, by where their calls were made
                name: httpx.post(
                    f"{url}/v1/sql", timeout=60, json={"query": "SELECT executor, count(*) FROM runs GROUP BY ALL"}
                ).json()["rows"]
                for name, (_, url) in servers.items()
            }
        finally:
            for server, _ in servers.values():
                server.terminate()
                server.wait(60)
    medians = {name: {k: statistics.median(v) for k, v in side.items()} for name, side in sides.items()}
    return {
        "clients": n_clients,
        "items_per_job": items_per_job,
        "turns": sides,
        "medians": medians,
        "many": many,
        "unfinished": unfinished,
        "runs_by_executor": where,
        "machine_cpus": os.cpu_count(),
    }


THROUGHPUT_TURNS = 3


def bench_service(n_clients: int = 50, items_per_job: int = 3, workers: int = 4) -> dict[str, Any]:
    """Latency under a burst (50 and 200 clients, 4 workers), every job finished and every
    judgment stored once; job throughput with 1 and 4 workers (bursts of 100 jobs, polls every 0.25 s, taken in turns)."""
    import httpx

    criteria = 6
    out: dict[str, Any] = {"workers": workers}
    with tempfile.TemporaryDirectory() as folder:
        server, url = _serving(workers, folder)
        try:
            out.update(_service_burst(url, n_clients, items_per_job, 0.05, "a"))
            out["many"] = _service_burst(url, 200, items_per_job, 0.05, "b")
            rows = httpx.post(
                f"{url}/v1/sql",
                timeout=60,
                json={
                    "query": """SELECT
                (SELECT count(*) FROM run_calls), (SELECT count(DISTINCT call_key) FROM run_calls),
                (SELECT count(*) FROM calls), (SELECT count(*) FROM pointwise_judgments),
                (SELECT count(DISTINCT (call_key, criterion)) FROM pointwise_judgments)"""
                },
            ).json()["rows"][0]
        finally:
            server.terminate()
            server.wait(60)
        expected = (n_clients + 200) * items_per_job + 2  # and the warm-up: two jobs of one item
        out.update(
            {
                "calls_expected": expected,
                "run_calls": rows[0],
                "distinct_calls": rows[1],
                "calls": rows[2],
                "judgment_rows": rows[3],
                "distinct_judgments": rows[4],
                "judgments_expected": expected * criteria,
            }
        )
        # Throughput by workers: simulated jurors (all CPU, in this process) and a loopback provider
        # that answers in 0.2 s (jobs wait, as they do on real providers). Both servers run side by
        # side and take bursts in turn; each figure is the median of its bursts, so the machine's
        # other load falls on both alike (one burst a server swung from 17.8 to 26.8 jobs/s).
        from jurybench.testing.stub import RateLimits, StubServer

        unfinished = 0
        with StubServer(json.dumps(ANSWER), limits=RateLimits(delay_s=0.2, headers=False)) as stub:
            provider = f"openai/stub,api_base={stub.api_base},api_key=sk-bench"
            kinds = {"simulated": (100, "sim/bench,noise=0.5"), "provider_0.2s": (40, provider)}
            bursts: dict[str, dict[int, list[float]]] = {k: {1: [], workers: []} for k in kinds}
            # The share of each burst's time the server's one store writer was busy (GET /v1/status):
            # near 1, jobs queue for the store, and more job workers cannot make them faster.
            writer: dict[str, dict[int, list[float]]] = {k: {1: [], workers: []} for k in kinds}
            servers = {n: _serving(n, folder) for n in (1, workers)}
            try:
                for turn in range(THROUGHPUT_TURNS):
                    for kind, (n_jobs, juror) in kinds.items():
                        for n_workers, (_, url) in servers.items():
                            before = httpx.get(f"{url}/v1/status", timeout=30).json()["store_writer"]
                            start = time.perf_counter()
                            burst = _service_burst(url, n_jobs, items_per_job, 0.25, f"{kind[0]}{turn}-", juror=juror)
                            took = time.perf_counter() - start
                            after = httpx.get(f"{url}/v1/status", timeout=30).json()["store_writer"]
                            bursts[kind][n_workers].append(burst["jobs_per_s"])
                            writer[kind][n_workers].append((after["busy_s"] - before["busy_s"]) / took)
                            unfinished += burst["clients"] - burst["jobs_finished"]  # a failed job is quick
            finally:
                for server, _ in servers.values():
                    server.terminate()
                    server.wait(60)
        throughput = {k: {n: statistics.median(v) for n, v in by.items()} for k, by in bursts.items()}
    out["jobs_per_s_bursts"] = bursts
    out["store_writer_busy_by_workers"] = {
        k: {n: statistics.median(v) for n, v in by.items()} for k, by in writer.items()
    }
    out["throughput_jobs_unfinished"] = unfinished
    out["jobs_per_s_by_workers"] = throughput
    out["throughput_ratio"] = {k: v[workers] / v[1] for k, v in throughput.items()}
    return out


def _rate_case(n: int, rpm: float | None, tpm: float | None, jurors: int) -> dict[str, Any]:
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.jurors._endpoint_limits import reset_limiters
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items
    from jurybench.testing.stub import RateLimits, StubServer

    reset_limiters()
    with tempfile.TemporaryDirectory() as folder:
        con = connect(Path(folder) / "rl.duckdb")
        items = Path(folder) / "items.csv"
        per_juror = n // jurors
        items.write_text(
            "item_id,response\n" + "".join(f"i{i},Story number {i} about a cat.\n" for i in range(per_juror))
        )
        import_items(con, items)
        limits = RateLimits(rpm=rpm, tpm=tpm, burst_s=1.0, delay_s=0.2)
        with StubServer(json.dumps(ANSWER), limits=limits) as stub:
            base = f"openai/stub,api_base={stub.api_base},api_key=sk-bench,concurrency=256"
            panel = [parse_juror(f"{base},temperature={k}") for k in range(jurors)]
            started = time.perf_counter()
            result = score(con, load_rubric("story-quality"), panel, options=EngineOptions(progress=False))
            seconds = time.perf_counter() - started
        stored = con.execute("SELECT count(*) FILTER (WHERE status = 'ok'), count(*) FROM calls").fetchone()
        con.close()
    times = limits.ok_times
    per_minute = (len(times) - 1) / (times[-1] - times[0]) * 60 if len(times) > 1 else 0.0
    limit = rpm if rpm else (tpm or 0) / (limits.tokens_served / max(limits.n_ok, 1))
    return {
        "calls": per_juror * jurors,
        "jurors": jurors,
        "rpm": rpm,
        "tpm": tpm,
        "seconds": seconds,
        "stored_ok": stored[0],
        "stored_calls": stored[1],
        "status": result.status,
        "served_per_minute": per_minute,
        "limit_per_minute": limit,
        "of_limit": per_minute / limit,
        "n_429": limits.n_limited,
        "n_ok": limits.n_ok,
        "429_per_success": limits.n_limited / max(limits.n_ok, 1),
    }


def bench_rate_limits(n: int = 400) -> dict[str, Any]:
    """Nothing configured: how close to a provider's limit, how many 429s, nothing lost."""
    # The tokens case: 390,000 tokens a minute is about 600 of these requests (the stub counts
    # a rendered story-quality prompt's characters / 4, about 640, plus 7 answer tokens).
    return {
        "rpm": _rate_case(n, 600, None, 1),
        "tpm": _rate_case(n, None, 390_000, 1),
        "shared_key": _rate_case(n, 600, None, 2),
    }


def bench_batch(n: int = 200) -> dict[str, Any]:
    """A batch round trip on the loopback stub: n calls through OpenAI-style batches of 50 (and
    one Anthropic-style batch), every call stored once at the batch price, nothing sent twice."""
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items
    from jurybench.testing import Batches, StubServer

    full = json.dumps({"relevance": 5, "coherence": 4, "empathy": 3, "surprise": 2, "engagement": 1, "complexity": 3})
    out: dict[str, Any] = {}
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench")
    for protocol, model in (("openai", "openai/gpt-4o-mini"), ("anthropic", "anthropic/claude-haiku-4-5")):
        with tempfile.TemporaryDirectory() as tmp, StubServer(full, batches=Batches(delay_s=0.5)) as stub:
            db = Path(tmp) / "b.duckdb"
            items = Path(tmp) / "items.csv"
            items.write_text("item_id,prompt,response\n" + "".join(f"i{i},Prompt {i},Story {i}\n" for i in range(n)))
            con = connect(db)
            import_items(con, items)
            con.close()
            juror = parse_juror(f"{model},api_base={stub.api_base},batch_size=50")
            options = EngineOptions(progress=False, batch=True, batch_poll_s=0.1)
            start = time.perf_counter()
            result = score(db, load_rubric("story-quality"), [juror], options=options)
            seconds = time.perf_counter() - start
            again = score(db, load_rubric("story-quality"), [juror], options=options)
            con = connect(db, read_only=True)
            stored = con.execute("SELECT count(*) FILTER (WHERE status = 'ok'), count(cost_usd) FROM calls").fetchone()
            con.close()
            out[protocol] = {
                "calls": n,
                "stored_ok": stored[0],
                "costed": stored[1],
                "batches": stub.batches.n_created,
                "requests_sent": stub.batches.requests_seen,
                "seconds": seconds,
                "cost_usd": result.cost_usd,
                "rerun_called": again.n_called,
            }
    return out


def bench_cli(repeats: int) -> dict[str, Any]:
    exe = Path(sys.executable).parent / "jurybench"
    cli, bare = [], []
    for _ in range(repeats):
        for cmd, sink in (([str(exe), "--help"], cli), ([sys.executable, "-c", "pass"], bare)):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            sink.append(time.perf_counter() - start)
    return {
        "help_median_s": statistics.median(cli),
        "python_pass_median_s": statistics.median(bare),
        "help_over_python": statistics.median(cli) / statistics.median(bare),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="jurybench benchmarks")
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--instructor-requests", type=int, default=2_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.instructor_requests, args.rows = 600, 200, 50_000
    results = {
        "cli_start": bench_cli(5),
        "store_insert": bench_store(args.rows, 2_000),
        "engine_throughput": bench_engine(args.requests, args.instructor_requests, 64),
        "lean_transport": bench_lean(args.requests, 64),
        # the engine against bare litellm and against the last round's engine (f91faa2), each side a
        # fresh process a block, warmed up before its clock starts (issue 57, item 5)
        "engine_ab": _fresh("engine_ab.py", "--requests", args.requests, "--blocks", 3),
        "calibration": bench_calibration(),
        **bench_statistics(args.quick),
        "service": bench_service(),
        "rate_limits": bench_rate_limits(),
        "batch": bench_batch(),
        "kill9": _fresh(
            "kill_bench.py", 2000, 3
        ),  # the share is per call: answers in transit do not shrink with the run
        "memory": _memory(args.quick),
        "conversations": _fresh("conversation_bench.py", *((200, 2_000) if args.quick else (1_000, 10_000))),
        "friedman": _friedman(args.quick),
        "viewer": _fresh("viewer_bench.py", 50_000 if args.quick else 1_000_000),
        # Bradley-Terry at a published leaderboard's scale, beside Arena-Hard-Auto's method
        "leaderboard": _fresh("leaderboard_bench.py", 20_000 if args.quick else 100_000, 1000, 3 if args.quick else 5),
        # a real llama.cpp server: about 3 s a request on 2 cores, so few requests
        "local_model": _fresh("local_model_bench.py", 8 if args.quick else 16, 2),
        # jury select on a simulated pilot, then a new study judged by the chosen and the full jury
        "selection": _fresh("selection_bench.py", 60 if args.quick else 120, 150 if args.quick else 400),
        # score --until's stopping rule on simulated studies, against the fixed design
        "sequential": _fresh("sequential_bench.py", 100 if args.quick else 300),
        # the stub's prompt cache: the rubric's shared part first vs the item first
        "prompt_cache": _fresh("cache_bench.py", 60 if args.quick else 300),
        # issue 40: the budget's spend share, the SQL memory cap under expressions, a limit of 0
        "trust": _fresh("trust_bench.py"),
        # serve --executor ray beside jobs in the server's process: submit and poll latency, jobs/s (issue 55)
        "service_ray": bench_service_ray(turns=2 if args.quick else 3),
        # score --executor ray: 1, 2, 4 workers beside a local run, the driver's CPU, rpm shared (issue 55)
        "ray": _fresh("ray_bench.py", 600 if args.quick else 4000),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    e, s, c = results["engine_throughput"], results["store_insert"], results["cli_start"]
    print(
        f"engine: {e['engine_calls_per_s']:.0f} calls/s vs bare litellm {e['bare_litellm_calls_per_s']:.0f} "
        f"-> ratio {e['engine_over_bare']:.2f} (target >= 0.9); {e['stored_ok']}/{e['stored_calls']} stored ok"
    )
    print(
        f"engine CPU per call: {e['engine_cpu_ms_per_call']:.2f} ms vs bare litellm {e['bare_cpu_ms_per_call']:.2f} ms "
        f"-> x{e['engine_cpu_over_bare']:.2f} (target <= {e['target_engine_cpu_over_bare']}; "
        f"blocks {', '.join(f'x{r:.2f}' for r in e['engine_cpu_over_bare_by_block'])}; both through litellm); "
        f"the default (lean) transport {e['engine_default_transport_cpu_ms_per_call']:.2f} ms "
        f"(x{e['engine_default_transport_cpu_over_bare']:.2f})"
    )
    ab = results["engine_ab"]
    print(
        f"engine CPU per call in fresh processes, {ab['requests']} requests: "
        + ", ".join(f"{k} {v:.2f} ms" for k, v in ab["cpu_ms_per_call"].items())
        + f" -> x{ab['current_over_bare']:.2f} bare litellm's (target <= 1.1), x{ab['current_over_baseline']:.2f} "
        f"{ab['baseline_commit']}'s engine (x{ab['baseline_over_bare']:.2f} bare)"
    )
    x = results["lean_transport"]
    print(
        f"lean transport (transport=openai) vs the raw openai client, {x['requests']} requests: CPU per call "
        f"{x['lean_cpu_ms_per_call']:.2f} vs {x['raw_openai_cpu_ms_per_call']:.2f} ms -> x{x['lean_cpu_over_raw']:.2f} "
        f"(target <= 1.25); calls/s {x['lean_calls_per_s']:.0f} vs {x['raw_openai_calls_per_s']:.0f} -> "
        f"x{x['lean_calls_over_raw']:.2f} (target >= 0.8)"
    )
    print(
        f"engine's own CPU per call (canned answers, litellm.acompletion replaced): "
        f"{e['engine_own_cpu_ms_per_call']:.3f} ms, {100 * e['engine_own_cpu_over_bare']:.1f} % of bare litellm's"
    )
    print(
        f"instructor driver / bare litellm: {e['instructor_driver_over_bare']:.2f} ({e['instructor_requests']} requests)"
    )
    print(
        f"store: {s['rows']:,} rows in {s['batched_seconds']:.1f}s = {s['batched_rows_per_s']:,.0f} rows/s "
        f"(row-by-row {s['row_by_row_rows_per_s']:,.0f} rows/s; x{s['batched_over_row_by_row']:.0f})"
    )
    k = results["calibration"]
    if "skipped" in k:
        print(f"calibration: {k['skipped']}")
    else:
        print(
            f"calibration: {k['criteria']} criteria x {k['jurors']} jurors x {k['items']} items, 10-fold CV: "
            f"OLS {k['fit_10fold_ols_seconds']:.2f}s, OLS+ridge+NNLS {k['fit_10fold_three_variants_seconds']:.2f}s "
            f"(target < 2s); loading from DuckDB {k['load_seconds']:.2f}s, import {k['import_seconds']:.2f}s"
        )
    g, d, r = results["gap_bootstrap"], results["cohens_d_bootstrap"], results["ratings_from_duckdb"]
    print(
        f"G_T bootstrap (13 x 19 x 150, B=2000): {g['vectorised_seconds']:.2f}s vectorised vs {g['loop_seconds']:.2f}s loop "
        f"(x{g['speedup']:.1f}; target < 1s)"
    )
    print(
        f"Cohen's d bootstrap (24 cells x 30 sub-scales x 400 runs/arm, B=2000): {d['vectorised_seconds']:.2f}s vs "
        f"~{d['loop_seconds_extrapolated']:.0f}s loop (x{d['speedup']:.0f}; target < 3s)"
    )
    print(
        f"{r['ratings']:,} ratings in DuckDB: Cohen's d for {r['cells']} cells x {r['effects_per_cell']} effects "
        f"in {r['cohens_d_seconds']:.1f}s (insert {r['insert_seconds']:.1f}s), peak RSS {r['peak_rss_mb']:.0f} MB"
    )
    print(
        f"cli: jurybench --help {c['help_median_s'] * 1000:.0f} ms vs python -c pass "
        f"{c['python_pass_median_s'] * 1000:.0f} ms (x{c['help_over_python']:.1f})"
    )
    v = results["service"]
    print(
        f"service: {v['jobs_finished']}/{v['clients']} jobs finished in {v['wall_seconds']:.1f}s; "
        f"{v['distinct_calls']} distinct calls of {v['calls_expected']} expected ({v['calls']} stored), "
        f"{v['distinct_judgments']}/{v['judgments_expected']} judgments, {v['judgment_rows']} rows; "
        f"submit p50/p95/p99 {v['submit_ms']['p50']:.0f}/{v['submit_ms']['p95']:.0f}/{v['submit_ms']['p99']:.0f} ms, "
        f"poll {v['poll_ms']['p50']:.0f}/{v['poll_ms']['p95']:.0f}/{v['poll_ms']['p99']:.0f} ms"
    )
    m200 = v["many"]
    print(
        f"service, 200 clients: {m200['jobs_finished']}/200 finished in {m200['wall_seconds']:.1f}s; submit p95 "
        f"{m200['submit_ms']['p95']:.0f} ms, poll p95 {m200['poll_ms']['p95']:.0f} ms; connection errors "
        f"{v['connection_errors'] + m200['connection_errors']}"
    )
    for kind, by in v["jobs_per_s_by_workers"].items():
        spread = v["jobs_per_s_bursts"][kind]
        print(
            f"service throughput ({kind} jurors, median of {len(spread[1])} bursts each): "
            f"{', '.join(f'{n} worker(s) {s:.1f} jobs/s ({min(spread[n]):.1f}-{max(spread[n]):.1f})' for n, s in by.items())} "
            f"(x{v['throughput_ratio'][kind]:.2f}); the store's writer busy "
            f"{', '.join(f'{share:.0%}' for share in v['store_writer_busy_by_workers'][kind].values())} of the time"
        )
    for name, case in results["rate_limits"].items():
        print(
            f"rate limits ({name}): {case['stored_ok']}/{case['calls']} stored ok in {case['seconds']:.0f}s; "
            f"{case['served_per_minute']:.0f}/min of {case['limit_per_minute']:.0f} = {case['of_limit']:.3f} "
            f"(target >= 0.95); 429s per success {case['429_per_success']:.4f} (target < 0.01)"
        )
    for protocol, b in results["batch"].items():
        print(
            f"batch ({protocol}): {b['stored_ok']}/{b['calls']} stored ok via {b['batches']} batches, "
            f"{b['requests_sent']} requests sent, ${b['cost_usd']:.5f} at the batch price in {b['seconds']:.1f}s; "
            f"a re-run called {b['rerun_called']}"
        )
    k9 = results["kill9"]
    print(
        f"kill -9 mid-run, then again ({k9['calls']} calls, concurrency 64, 200 ms): answers asked twice "
        + ", ".join(str(t["answered_twice"]) for t in k9["trials"])
        + f" (worst {k9['worst_share']:.2%}; target <= 0.5%), in flight at the kill "
        + ", ".join(str(t["in_flight_at_kill"]) for t in k9["trials"])
        + "; with request starts in bursts (JURYBENCH_BACKPRESSURE=off) "
        + ", ".join(str(t["answered_twice"]) for t in k9["without_backpressure_trials"])
        + f" (worst {k9['without_backpressure_worst_share']:.2%}); whole runs {k9['calls_per_s']:.0f} calls/s vs "
        + f"{k9['without_backpressure_calls_per_s']:.0f} without (x{k9['throughput_ratio']:.2f}; target >= 0.9)"
    )
    if "inspect_trials" in k9:
        print(
            "kill -9 side by side, Inspect AI on the same stub killed at the same points and resumed with "
            "eval-retry: answers asked twice "
            + ", ".join(str(t["answered_twice"]) for t in k9["inspect_trials"])
            + f" (total {k9['inspect_total_answered_twice']}; jurybench's {k9['total_answered_twice']}), its first run "
            + ", ".join(f"{t['calls_per_s_first']:.0f}" for t in k9["inspect_trials"])
            + " calls/s against jurybench's "
            + ", ".join(f"{t['calls_per_s_first']:.0f}" for t in k9["trials"])
        )
    print(
        f"kill -9 during score --until ({k9['until_calls']} calls in batches of 100): answers asked twice "
        + ", ".join(str(t["answered_twice"]) for t in k9["until_trials"])
        + f" (worst {k9['until_worst_answered_twice']}; the plain run's target {k9['calls'] // 100} of {k9['calls']}), "
        + f"looks before the kill kept: {'yes' if k9['until_looks_kept'] else 'NO'}"
    )
    ry = results["ray"]
    so, rp = ry["scale_out"], ry["rpm_600_with_4_workers"]
    print(
        f"--executor ray on {ry['machine_cpus']} cores, loopback stub, lean transport: calls/s local "
        f"{so['local']['calls_per_s']:.0f}, 1/2/4 workers {so['ray_1']['calls_per_s']:.0f}/"
        f"{so['ray_2']['calls_per_s']:.0f}/{so['ray_4']['calls_per_s']:.0f} (x{so['ray_2_over_1']:.2f}, "
        f"x{so['ray_4_over_1']:.2f} of 1); driver CPU {so['driver_cpu_ms_per_extra_call']:.3f} ms an extra answer "
        f"(whole runs {so['ray_2']['driver_cpu_ms_per_call']:.2f}) -> at most {so['driver_calls_per_s_at_most']:.0f} "
        f"answers/s: the bottleneck at {so['driver_bottleneck_at_workers']:.1f} workers of this speed, at "
        f"{so['driver_bottleneck_at_workers_of_128_calls_per_s']:.0f} workers of 128 calls/s (target: not before ~50)"
    )
    print(
        f"rpm=600 for the cluster: 4 workers reached {rp['ray_4']['over_limit']:.2f} of the limit with "
        f"{rp['ray_4']['responses_429']} 429s; one process {rp['local']['over_limit']:.2f} with "
        f"{rp['local']['responses_429']} (target 0.95-1.02, no more 429s than one process)"
    )
    if (st := ry.get("stated_600_with_4_workers")) is not None:
        print(
            f"600 a minute stated in the stub's headers (no rpm on the juror): 4 workers reached "
            f"{st['ray_4']['over_limit']:.2f} of the limit with {st['ray_4']['responses_429']} 429s; one process "
            f"{st['local']['over_limit']:.2f} with {st['local']['responses_429']}"
        )
    sr = results["service_ray"]["medians"]
    print(
        f"serve --executor ray vs jobs in the server's process, {results['service_ray']['clients']} clients at once, "
        f"{results['service_ray']['items_per_job']} provider calls a job: submit p95 {sr['ray']['submit_p95_ms']:.0f} vs "
        f"{sr['local']['submit_p95_ms']:.0f} ms (target < 250), poll p95 {sr['ray']['poll_p95_ms']:.0f} vs "
        f"{sr['local']['poll_p95_ms']:.0f} ms (target < 100), jobs/s {sr['ray']['jobs_per_s']:.1f} vs "
        f"{sr['local']['jobs_per_s']:.1f}; 200 clients: submit p95 "
        f"{results['service_ray']['many']['ray']['submit_p95_ms']:.0f} vs "
        f"{results['service_ray']['many']['local']['submit_p95_ms']:.0f} ms (target < 1000)"
    )
    tr = results["trust"]
    print(
        "budget: --max-cost $0.02 on the priced stub spent "
        + ", ".join(
            f"{b['share']:.1%} ({'max_tokens=' + b['max_tokens'] if b['max_tokens'] else 'no max_tokens'})"
            for b in tr["budget"]
        )
        + " (target >= 90 %, never over)"
    )
    sm = tr["sql_memory"]
    print(
        f"SQL memory cap {sm['cap_mb']} MB: expression queries answered "
        + ", ".join(f"{a['status']} in {a['seconds']:.2f}s" for a in sm["answers"])
        + f"; server peak +{sm['peak_growth_mb']:.0f} MB, +{sm['after_growth_mb']:.0f} MB after; a slot free after each: "
        + ("yes" if all(a["next_query"] == 200 for a in sm["answers"]) else "NO")
    )
    if "parallel" in sm:
        par = sm["parallel"]
        print(
            f"SQL memory cap {par['cap_mb']} MB, {par['clients']} heavy queries at once: answered "
            + ", ".join(str(code) for code in par["statuses"])
            + f"; server peak +{par['peak_growth_mb']:.0f} MB (target <= {par['target_mb']:.0f} MB)"
        )
    z = tr["zero_rate_limit"]
    print(f"a stated limit of 0 a minute: {z['items']} items judged in {z['seconds']:.1f}s (was 732 s)")
    m = results["memory"]
    print(
        f"memory: score peak RSS {m['score_small']['peak_rss_mb']:.0f} MB at {m['score_small']['items']:,} items, "
        f"{m['score_large']['peak_rss_mb']:.0f} MB at {m['score_large']['items']:,} "
        f"(x{m['large_over_small']:.2f}; target < {m['target_large_over_small']})"
    )
    if m.get("score_1m_judgments"):
        big = m["score_1m_judgments"]
        print(f"memory: {big['judgment_rows']:,} judgment rows, peak RSS {big['peak_rss_mb']:.0f} MB (target < 500)")
    if m.get("import"):
        print(
            f"memory: {m['import']['rows']:,}-row items import, peak RSS {m['import']['peak_rss_mb']:.0f} MB "
            "(target < 500)"
        )
    cv = results.get("conversations")
    if cv:
        a, b, r = cv["import_small"], cv["import_large"], cv["render"]
        print(
            f"conversations: import of {a['conversations']:,} x 30 messages {a['seconds']:.1f}s, peak RSS "
            f"{a['peak_rss_mb']:.0f} MB; of {b['conversations']:,} {b['seconds']:.1f}s, {b['peak_rss_mb']:.0f} MB "
            f"(RSS x{cv['rss_large_over_small']:.2f}, target <= {cv['target_rss_large_over_small']}; time a "
            f"conversation x{cv['time_per_conversation_large_over_small']:.2f}, target <= "
            f"{cv['target_time_per_conversation_large_over_small']})"
        )
        print(
            f"conversations: a 30-message trace rendered for a judge {r['conversation_us']:.0f} us, one response of "
            f"its length {r['single_us']:.0f} us (x{r['conversation_over_single']:.2f}; target <= "
            f"{r['target_conversation_over_single']})"
        )
    f = results["friedman"]
    print(
        f"stats friedman: {f['small']['rows']:,} rows {f['small']['seconds']:.1f}s (+{f['small']['growth_mb']:.0f} MB), "
        f"{f['large']['rows']:,} rows {f['large']['seconds']:.1f}s (+{f['large']['growth_mb']:.0f} MB): "
        f"time x{f['time_ratio']:.1f} for x{f['rows_ratio']:.0f} rows, peak RSS x{f['peak_rss_ratio']:.2f} "
        "(target < 1.3)"
    )
    if "larger" in f:
        g3 = f["larger"]
        print(
            f"stats friedman: {g3['rows']:,} rows {g3['seconds']:.1f}s (+{g3['growth_mb']:.0f} MB): time "
            f"x{f['larger_time_ratio']:.1f} for x{f['larger_rows_ratio']:.0f} rows, growth x{f['larger_growth_ratio']:.2f} "
            "(target < 1.3)"
        )
    w = results["viewer"]
    print(
        f"viewer pages at {w['rows']:,} judgment rows (ms, first visit / again): "
        + ", ".join(f"{k} {v['first_ms']:.0f}/{v['again_ms']:.0f}" for k, v in w["warmed"].items() if k != "warm_up_s")
        + f" after a {w['warmed']['warm_up_s']:.1f} s warm-up at start; without it, first visits: "
        + ", ".join(f"{k} {v['first_ms']:.0f}" for k, v in w["cold"].items() if k != "warm_up_s")
    )
    lb = results["leaderboard"]
    print(
        f"leaderboard: {lb['models']} models, {lb['battles']:,} battles, {lb['rounds']} bootstrap rounds in "
        f"{lb['seconds']:.1f}s (target < {lb['target_seconds']:.0f}s); Arena-Hard-Auto's method "
        f"{lb['arena_hard_seconds_per_round']:.3f}s a round ({lb['arena_hard_rounds_timed']} timed) -> "
        f"~{lb['arena_hard_seconds_for_rounds']:.0f}s for {lb['rounds']}: x{lb['speedup_vs_arena_hard']:.0f}"
    )
    lm = results["local_model"]
    if "skipped" in lm:
        print(f"local model server: not run ({lm['skipped']})")
    else:
        print(
            f"local model server (llama.cpp, SmolLM2-135M-Instruct, {lm['requests_per_run']} requests x 2 runs each, concurrency "
            f"{lm['concurrency']}): jurybench {lm['jurybench_calls_per_s']:.2f} calls/s vs direct openai client "
            f"{lm['direct_calls_per_s']:.2f} -> ratio {lm['calls_ratio']:.3f}, tokens/s ratio {lm['tokens_ratio']:.3f} "
            f"(target >= {lm['target_ratio']})"
        )
        ls = lm.get("llama_server")
        if ls:
            sec = ls["seconds_per_judgment"]
            print(
                f"llama.cpp's own llama-server ({ls['slots']} slots, {ls['requests_per_run']} requests a run): jurybench "
                f"{ls['jurybench_calls_per_s']:.2f} calls/s vs direct openai client {ls['direct_calls_per_s']:.2f} -> "
                f"ratio {ls['calls_ratio']:.3f} (target >= {ls['target_ratio']}); seconds per judgment: JSON mode "
                f"{sec['json']:.3f}, schema {sec['schema']:.3f}, scores=expected {sec['expected']:.3f} "
                f"(x{ls['logprob_ratio']:.2f}; target <= {ls['target_logprob_ratio']:.0f})"
            )
        if "seconds_per_judgment" in lm:
            sec = lm["seconds_per_judgment"]
            print(
                f"local model server, seconds per judgment (one at a time): JSON mode {sec['json']:.2f}, "
                f"schema grammar {sec['schema']:.2f} (x{lm['grammar_ratio']:.2f}), schema + log probabilities "
                f"(scores=expected) {sec['expected']:.2f} (x{lm['logprob_ratio']:.2f} the schema's; target <= "
                f"{lm['target_logprob_ratio']:.0f})"
            )
    sel = results["selection"]
    print(
        f"jury select ({sel['pilot_stories']}-story pilot, {sel['candidates']} sub-juries, "
        f"{sel['select_seconds']:.1f}s): chose {', '.join(sel['chosen'])}; on a {sel['study_stories']}-story study it "
        f"cost ${sel['study_cost_chosen']:.2f} vs ${sel['study_cost_full']:.2f} for the full jury "
        f"(x{sel['cost_ratio']:.3f}) at RMSE {sel['study_rmse_chosen']:.3f} vs {sel['study_rmse_full']:.3f} "
        "against the human labels (target: cheaper, RMSE within 5 %)"
    )
    sq = results["sequential"]
    print(
        f"sequential judging ({sq['studies']} simulated studies, at most {sq['cap']} subjects, a look every "
        f"{sq['batch']}): with no effect it decided falsely in {sq['false_decisions_sequential']:.1%} (target <= 5 %; "
        f"a t-test looked at as often: {sq['false_decisions_naive_looks']:.1%})"
    )
    for name, r in sq["rules"].items():
        print(
            f"  {name}: decided {r['decided']:.1%}, judged {r['mean_judged']:.0f} on average = "
            f"{r['share_of_power_matched']:.2f} x the fixed design of the same power ({r['fixed_design']:.0f}) and "
            f"{r['share_of_all']:.2f} x judging all ({r['all']:.0f})"
        )


def _fresh(script: str, *args: int | str) -> dict[str, Any]:
    """A bench script run from a small new process: on Linux a child's peak RSS starts at its
    parent's when it was forked, so the measured processes must not descend from this one."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout[done.stdout.index("{") :]))


def _memory(quick: bool) -> dict[str, Any]:
    return _fresh("memory.py", *((300, 3_000, 0, 60_000) if quick else (3_000, 30_000, 166_667, 600_000)))


def _friedman(quick: bool) -> dict[str, Any]:
    return _fresh(
        "friedman_bench.py", "both", *((10_000, 200_000, 600_000) if quick else (100_000, 1_000_000, 3_000_000))
    )


def missed_targets(results: dict[str, Any]) -> list[str]:
    """Every ratio or time with a stated target that this run did not reach."""
    e, k = results["engine_throughput"], results["calibration"]
    g, d, c = results["gap_bootstrap"], results["cohens_d_bootstrap"], results["cli_start"]
    checks = [
        ("engine / bare litellm", e["engine_over_bare"], ">=", e["target_engine_over_bare"]),
        ("all engine calls stored ok", e["stored_ok"] / max(e["stored_calls"], 1), ">=", 1.0),
        *(
            [
                (
                    "engine CPU per call / bare litellm's",
                    e["engine_cpu_over_bare"],
                    "<=",
                    e["target_engine_cpu_over_bare"],
                )
            ]
            if "engine_cpu_over_bare" in e
            else []
        ),
        *(
            [("engine CPU per call / bare litellm's, fresh processes", ab["current_over_bare"], "<=", 1.1)]
            if (ab := results.get("engine_ab"))
            else []
        ),
        *(
            [
                ("lean transport CPU per call / raw openai client's", x["lean_cpu_over_raw"], "<=", 1.25),
                ("lean transport calls/s / raw openai client's", x["lean_calls_over_raw"], ">=", 0.8),
            ]
            if (x := results.get("lean_transport"))
            else []
        ),
        ("G_T bootstrap seconds", g["vectorised_seconds"], "<", g["target_seconds"]),
        ("Cohen's d bootstrap seconds", d["vectorised_seconds"], "<", d["target_seconds"]),
        ("jurybench --help seconds", c["help_median_s"], "<", 1.0),
    ]
    if (sv := results.get("service_ray")) is not None:
        checks += [
            ("serve --executor ray: submit p95 ms", sv["medians"]["ray"]["submit_p95_ms"], "<", 250),
            ("serve --executor ray: poll p95 ms", sv["medians"]["ray"]["poll_p95_ms"], "<", 100),
            *(
                [("serve --executor ray, 200 clients: submit p95 ms", m["ray"]["submit_p95_ms"], "<", 1000)]
                if (m := sv.get("many"))
                else []
            ),
            ("serve --executor ray: jobs left unfinished", sv["unfinished"], "<", 1),
        ]
    if (ry := results.get("ray")) is not None:
        rp = ry["rpm_600_with_4_workers"]
        if (served := ry.get("scale_out", {}).get("driver_bottleneck_at_workers_of_128_calls_per_s")) is not None:
            checks.append(
                ("--executor ray: workers of 128 calls/s before the driver is the bottleneck", served, ">=", 50)
            )
        checks += [
            ("rpm=600 with 4 Ray workers: rate over the limit", rp["ray_4"]["over_limit"], ">=", 0.95),
            ("rpm=600 with 4 Ray workers: rate over the limit", rp["ray_4"]["over_limit"], "<=", 1.02),
            (
                "rpm=600 with 4 Ray workers: 429s beyond one process's",
                rp["ray_4"]["responses_429"] - rp["local"]["responses_429"],
                "<=",
                0,
            ),
        ]
        if (st := ry.get("stated_600_with_4_workers")) is not None:
            checks += [
                (
                    "600/min stated in headers, 4 Ray workers: rate over the limit",
                    st["ray_4"]["over_limit"],
                    "<=",
                    1.06,
                ),
                (
                    "600/min stated in headers, 4 Ray workers: 429s beyond one process's",
                    st["ray_4"]["responses_429"] - st["local"]["responses_429"],
                    "<=",
                    0,
                ),
            ]
    for protocol, b in (results.get("batch") or {}).items():  # every call once, at a price, never sent twice
        checks += [
            (f"batch {protocol}: calls stored ok", b["stored_ok"], ">=", b["calls"]),
            (f"batch {protocol}: requests sent per call", b["requests_sent"] / b["calls"], "<", 1.0001),
            (f"batch {protocol}: calls called again on a re-run", b["rerun_called"], "<", 1),
        ]
    lb = results.get("leaderboard")
    if lb is not None:
        checks += [
            (
                f"leaderboard: {lb['battles']:,} battles x {lb['rounds']} rounds, seconds",
                lb["seconds"],
                "<",
                lb["target_seconds"],
            ),
            ("leaderboard: speed over Arena-Hard-Auto's method", lb["speedup_vs_arena_hard"], ">=", 1.0),
        ]
    lm = results.get("local_model")
    if lm is not None and "skipped" not in lm:  # the server is the bottleneck; jurybench must not be
        checks += [
            (
                "local model server: jurybench / direct openai client, calls/s",
                lm["calls_ratio"],
                ">=",
                lm["target_ratio"],
            ),
            *(
                [
                    (
                        "local model server: scores=expected / a plain schema answer, seconds per judgment",
                        lm["logprob_ratio"],
                        "<=",
                        lm["target_logprob_ratio"],
                    )
                ]
                if "logprob_ratio" in lm
                else []
            ),
            *(
                [
                    (
                        "llama-server, 2 slots: jurybench / direct, calls/s",
                        ls_["calls_ratio"],
                        ">=",
                        ls_["target_ratio"],
                    ),
                    (
                        "llama-server: scores=expected / a plain schema answer, seconds per judgment",
                        ls_["logprob_ratio"],
                        "<=",
                        ls_["target_logprob_ratio"],
                    ),
                ]
                if (ls_ := lm.get("llama_server"))
                else []
            ),
            (
                "local model server: jurybench / direct, generated tokens/s",
                lm["tokens_ratio"],
                ">=",
                lm["target_ratio"],
            ),
        ]
    elif lm is not None:
        checks.append((f"local model server section ran ({lm['skipped']})", 0, ">=", 1))
    sel = results.get("selection")
    if sel is not None:  # the chosen sub-jury is cheaper and keeps the full jury's error on new subjects
        checks += [
            ("jury select: study cost chosen / full", sel["cost_ratio"], "<", 1.0),
            ("jury select: study RMSE chosen / full", sel["study_rmse_chosen"] / sel["study_rmse_full"], "<=", 1.05),
        ]
    pc = results.get("prompt_cache")
    if pc is not None:  # the shared-first layout is what the provider's cache can serve
        checks.append(("prompt cache: input cost shared-first / item-first", pc["input_cost_ratio"], "<", 1.0))
    sq = results.get("sequential")
    if sq is not None:  # optional stopping keeps its error rate and saves against the power-matched design
        checks.append(
            ("sequential: false decisions with no effect", sq["false_decisions_sequential"], "<=", sq["alpha"])
        )
        for name, limit in (("mean_d044", 1.0), ("mean_d058", 1.0), ("separated", 1.5), ("gap", 1.5)):
            share = sq["rules"][name]["share_of_power_matched"]
            checks.append((f"sequential: {name}, judged / power-matched fixed design", share, "<=", limit))
    tr = results.get("trust")
    if tr is not None:
        for b in tr["budget"]:
            checks.append((f"budget spent, max_tokens={b['max_tokens']}", b["share"], ">=", 0.9))
            checks.append((f"budget spent, max_tokens={b['max_tokens']} (never over)", b["share"], "<=", 1.0))
        sm = tr["sql_memory"]
        checks.append(
            (
                "SQL expression queries: server peak growth / (cap + a quarter)",
                sm["peak_growth_mb"] / (1.25 * sm["cap_mb"]),
                "<",
                1.0,
            )
        )
        checks.append(
            (
                "SQL expression queries: slots free after each",
                float(all(a["next_query"] == 200 for a in sm["answers"])),
                ">=",
                1.0,
            )
        )
        par = sm.get("parallel")
        if par is not None:  # the cap is the process's: queries running together share it
            checks.append(
                (
                    f"SQL, {par['clients']} heavy queries at once: server peak growth / (cap + a quarter)",
                    par["peak_growth_mb"] / par["target_mb"],
                    "<",
                    1.0,
                )
            )
        checks.append(("a stated limit of 0: seconds for 20 items", tr["zero_rate_limit"]["seconds"], "<", 60.0))
    k9 = results.get("kill9")
    if k9 is not None:
        checks.append(("kill -9: share of received answers asked again", k9["worst_share"], "<=", k9["target_share"]))
        if "inspect_total_answered_twice" in k9:
            checks.append(
                (
                    "kill -9: answers asked again, jurybench's total / Inspect AI's at the same kill points",
                    k9["total_answered_twice"],
                    "<=",
                    k9["inspect_total_answered_twice"],
                )
            )
        checks.append(("kill -9: throughput with starts taking turns / in bursts", k9["throughput_ratio"], ">=", 0.9))
        # Answers in the air at a kill do not grow with the run's length: the plain run's bound in
        # answers (1 % of its 2,000 calls, the bound before issue 58) bounds a resumed sequential run.
        checks.append(
            (
                "kill -9 during --until: answers asked again (1 % of the plain run's calls)",
                k9["until_worst_answered_twice"],
                "<",
                0.01 * k9["calls"],
            )
        )
        checks.append(("kill -9 during --until: looks before the kill kept", float(k9["until_looks_kept"]), ">=", 1.0))
    f = results.get("friedman")
    if f is not None:
        # Time grows no faster than the rows; the process's peak RSS at 10x the rows is at most
        # 1.3x (the yardstick for memory that does not grow, as for score); and once a
        # run is read in slices, the growth above the loaded libraries stays flat (3x the rows).
        checks += [
            ("friedman: time ratio large / small (below the rows ratio)", f["time_ratio"], "<", f["rows_ratio"]),
            ("friedman: peak RSS large / small", f["peak_rss_ratio"], "<", 1.3),
        ]
        if "larger" in f:
            checks.append(("friedman: memory growth 3x rows / large (both sliced)", f["larger_growth_ratio"], "<", 1.3))
    w = results.get("viewer")
    if w is not None:  # every page under 300 ms once the start-up warm-up is done, and on a second visit
        for page, t in w["warmed"].items():
            if page != "warm_up_s":
                checks.append(
                    (f"viewer {page} page ms (first visit after warm-up)", t["first_ms"], "<", w["target_ms"])
                )
                checks.append((f"viewer {page} page ms (again)", t["again_ms"], "<", w["target_ms"]))
    m = results.get("memory")
    if m is not None:
        checks.append(
            ("memory: peak RSS 30k items / 3k items", m["large_over_small"], "<", m["target_large_over_small"])
        )
        if m.get("score_1m_judgments"):
            checks.append(
                ("memory: 1M judgment rows, peak MB", m["score_1m_judgments"]["peak_rss_mb"], "<", m["target_mb"])
            )
        if m.get("import"):
            checks.append(("memory: items import peak MB", m["import"]["peak_rss_mb"], "<", m["target_mb"]))
    cv = results.get("conversations")
    if cv is not None:
        checks += [
            (
                "conversations: import peak RSS 10x / 1x",
                cv["rss_large_over_small"],
                "<=",
                cv["target_rss_large_over_small"],
            ),
            (
                "conversations: import seconds a conversation 10x / 1x",
                cv["time_per_conversation_large_over_small"],
                "<=",
                cv["target_time_per_conversation_large_over_small"],
            ),
            (
                "conversations: trace render / single render",
                cv["render"]["conversation_over_single"],
                "<=",
                cv["render"]["target_conversation_over_single"],
            ),
        ]
    v = results.get("service")
    if v is not None:  # every job finishes; every judgment stored once, none lost
        checks += [
            ("service submit p95 ms (50 clients)", v["submit_ms"]["p95"], "<", 250),
            ("service poll p95 ms (50 clients)", v["poll_ms"]["p95"], "<", 100),
            ("service submit p95 ms (200 clients)", v["many"]["submit_ms"]["p95"], "<", 1000),
            ("service jobs finished", v["jobs_finished"] + v["many"]["jobs_finished"], ">=", v["clients"] + 200),
            ("service throughput bursts: jobs not finished", v["throughput_jobs_unfinished"], "<", 1),
            (
                "service connection errors seen by clients",
                v["connection_errors"] + v["many"]["connection_errors"],
                "<",
                1,
            ),
            (
                f"service jobs/s with {v['workers']} workers over 1 (simulated jurors)",
                v["throughput_ratio"]["simulated"],
                ">",
                1.2,
            ),
            (
                f"service jobs/s with {v['workers']} workers over 1 (provider, 0.2 s)",
                v["throughput_ratio"]["provider_0.2s"],
                ">",
                1.2,
            ),
            ("service calls stored exactly once", v["calls"] - v["calls_expected"] + 1, ">=", 1),
            ("service calls not lost", v["distinct_calls"], ">=", v["calls_expected"]),
            ("service judgment rows without duplicates", v["judgment_rows"] - v["distinct_judgments"], "<", 1),
            ("service judgments stored", v["distinct_judgments"], ">=", v["judgments_expected"]),
        ]
    for name, case in (results.get("rate_limits") or {}).items():
        checks += [
            (f"rate limits {name}: share of the limit", case["of_limit"], ">=", 0.95),
            (f"rate limits {name}: 429s per success", case["429_per_success"], "<", 0.01),
            (f"rate limits {name}: calls stored ok", case["stored_ok"], ">=", case["calls"]),
        ]
    if "skipped" not in k:
        checks.append(
            (
                "calibration 10-fold, three variants, seconds",
                k["fit_10fold_three_variants_seconds"],
                "<",
                k["target_seconds"],
            )
        )
    meets = {">=": lambda v, t: v >= t, ">": lambda v, t: v > t, "<": lambda v, t: v < t, "<=": lambda v, t: v <= t}
    return [
        f"{name}: {value:.3f} (target {op} {target})"
        for name, value, op, target in checks
        if not meets[op](value, target)
    ]


if __name__ == "__main__":
    main()
