"""score --executor ray, measured (issue 55, items 1 and 4), side by side in one run.

1. Scale-out: calls/s on the loopback stub (a process of its own) with 1, 2 and 4 Ray workers
   and a local run, each worker with the lean transport at concurrency 64 and a latency short
   enough that one worker is CPU-bound; and the driver's CPU per call (what it spends to admit,
   hand out, receive, journal and store one answer), from which the number of workers at which
   the driver itself would be the bottleneck follows.
2. A juror's rpm for the whole cluster: rpm=600 with 4 workers against a stub that allows 600 a
   minute, beside one process: the rate reached over the limit and the 429s.

Usage: python bench/ray_bench.py N  (prints one JSON object)."""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from run import ANSWER, start_stub  # bench/run.py: this script runs from bench/ (sys.path[0])


def _store(path: Path, n: int) -> Path:
    from jurybench.store import connect, import_items

    items = path.with_suffix(".csv")
    items.write_text("item_id,response\n" + "".join(f"i{i:06d},Story number {i} about a cat.\n" for i in range(n)))
    con = connect(path)
    import_items(con, items)
    con.close()
    return path


def _run(db: Path, juror: str, workers: int | None) -> dict[str, float]:
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric

    options = EngineOptions(concurrency=64, progress=False)
    if workers is not None:
        options = EngineOptions(concurrency=64, progress=False, executor="ray", workers=workers)
    cpu, own, wall = time.process_time(), time.thread_time(), time.perf_counter()
    result = score(db, load_rubric("story-quality"), [parse_juror(juror)], options=options)
    cpu, own, wall = time.process_time() - cpu, time.thread_time() - own, time.perf_counter() - wall
    assert result.status_counts.get("ok") == result.n_called, result.summary()
    # result.elapsed_s: from the first call to the last answer (workers already started)
    return {
        "calls": result.n_called,
        "calls_per_s": result.n_called / result.elapsed_s,
        "driver_cpu_ms_per_call": 1000 * cpu / result.n_called,  # every thread of the process
        "driver_loop_cpu_ms_per_call": 1000 * own / result.n_called,  # the event loop's thread alone
        "wall_s": wall,
    }


def scale_out(n: int) -> dict[str, Any]:
    port = 18790
    stub = start_stub(port)
    juror = f"openai/bench,api_base=http://127.0.0.1:{port}/v1,api_key=x,transport=openai,retries=0"
    out: dict[str, Any] = {}
    cases = (("local", None, n), ("ray_1", 1, n), ("ray_2", 2, n), ("ray_4", 4, n), ("ray_2_x4", 2, 4 * n))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            _run(_store(Path(tmp) / "warm.duckdb", 200), juror, None)  # warm-up
            for label, workers, calls in cases:
                out[label] = _run(_store(Path(tmp) / f"{label}.duckdb", calls), juror, workers)
    finally:
        stub.terminate()
        stub.wait()
    one = out["ray_1"]["calls_per_s"]
    out["ray_2_over_1"] = out["ray_2"]["calls_per_s"] / one
    out["ray_4_over_1"] = out["ray_4"]["calls_per_s"] / one
    out["ray_1_over_local"] = one / out["local"]["calls_per_s"]
    # What one more answer costs the driver: the runs of 2 workers with n and 4n calls, the
    # difference of their CPU over the difference of their calls (the fixed costs, starting the
    # workers and opening the store, cancel).
    small, large = out["ray_2"], out["ray_2_x4"]
    extra = large["driver_cpu_ms_per_call"] * large["calls"] - small["driver_cpu_ms_per_call"] * small["calls"]
    driver_ms = extra / (large["calls"] - small["calls"])
    out["driver_cpu_ms_per_extra_call"] = driver_ms
    out["driver_calls_per_s_at_most"] = 1000 / driver_ms
    # The driver is the bottleneck once the workers together ask for more than it can store:
    # workers as fast as this stub allows one, or making 128 calls a second each (concurrency
    # 64 against a provider answering in 0.5 s).
    out["driver_bottleneck_at_workers"] = out["driver_calls_per_s_at_most"] / one
    out["driver_bottleneck_at_workers_of_128_calls_per_s"] = out["driver_calls_per_s_at_most"] / 128
    return out


def rpm_shared(n: int, stated: bool = False) -> dict[str, Any]:
    """600 a minute for the cluster: the juror's rpm (``stated`` False), or the limit the stub
    states in its headers with no rpm on the juror (``stated``: the endpoint's rate, kept by the
    run's keeper from every worker's answers)."""
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.testing.stub import RateLimits, StubServer

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, workers in (("local", None), ("ray_4", 4)):
            db = _store(Path(tmp) / f"{label}.duckdb", n)
            limits = RateLimits(rpm=600, burst_s=1.0, delay_s=0.05)
            with StubServer(json.dumps(ANSWER), limits=limits) as stub:
                cap = "" if stated else ",rpm=600"
                juror = parse_juror(f"openai/stub,api_base={stub.api_base},api_key=x{cap}")
                options = EngineOptions(progress=False)
                if workers is not None:
                    options = EngineOptions(progress=False, executor="ray", workers=workers)
                result = score(db, load_rubric("story-quality"), [juror], options=options)
            assert result.status_counts.get("ok") == n, result.summary()
            times = sorted(limits.ok_times)
            rate = 60 * (len(times) - 1) / (times[-1] - times[0])
            out[label] = {"rpm_reached": rate, "over_limit": rate / 600, "responses_429": limits.n_limited}
    return out


def main() -> None:
    import ray

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    try:
        results = {
            "machine_cpus": os.cpu_count(),
            "scale_out": scale_out(n),
            "rpm_600_with_4_workers": rpm_shared(200),
            "stated_600_with_4_workers": rpm_shared(200, stated=True),
        }
    finally:
        ray.shutdown()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
