"""kill -9 in the middle of a run, then the same command again: how many answers the run had
received were asked for again (issue 27's yardstick: under 1 % of 2,000 calls at 200 ms
latency and concurrency 64). Requests still in flight at the kill are counted apart: no
client can keep an answer it never received. ``sent_but_not_kept``: answers the stub had sent
that the killed run did not keep (stored or journaled): those written to the socket before
the kill but not yet read by the run, and any the run read and lost. An answer counts as
answered when the stub has written it to the socket before the kill (the stub counts it
after the write), so answers the stub was still building are in flight, not lost.

Each is measured with request starts taking turns with answers (the default,
``engine/_load.py``) and with them in bursts (``JURYBENCH_BACKPRESSURE=off``), and so is the
throughput of whole runs, side by side. Beside them, Inspect AI on the same stub (the peer the
issue names; ``JURYBENCH_INSPECT_PYTHON``, the interpreter of the environment ``make bench``
builds from bench/constraints.txt): ``inspect eval`` killed after the same number of answers,
then ``inspect eval-retry`` of its log, the same count of answers asked twice.

    python bench/kill_bench.py [CALLS] [TRIALS]   -> one JSON object on stdout
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def trial(calls: int, kill_after: int | None, backpressure: bool = True, until: bool = False) -> dict[str, float]:
    """One run killed after ``kill_after`` answers, then run again (``None``: one whole run,
    for its throughput)."""
    from jurybench.testing import RateLimits, StubServer

    full = {"relevance": 5, "coherence": 4, "empathy": 3, "surprise": 2, "engagement": 1, "complexity": 3}
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubServer(json.dumps(full), limits=RateLimits(delay_s=0.2, headers=False)) as stub,
    ):
        db = Path(tmp) / "k.duckdb"
        items = Path(tmp) / "items.csv"
        items.write_text("item_id,response\n" + "".join(f"i{i:05d},Story {i}\n" for i in range(calls)))
        env = {**os.environ, "JURYBENCH_HOME": tmp, "JURYBENCH_BACKPRESSURE": "on" if backpressure else "off"}
        cli = [sys.executable, "-m", "jurybench.cli"]
        subprocess.run([*cli, "items", "import", str(items), "--db", str(db)], env=env, check=True, capture_output=True)
        juror = f"openai/stub,api_base={stub.api_base},api_key=sk-bench-0123456789,concurrency=64"
        cmd = [
            *cli,
            "score",
            "--rubric",
            "story-quality",
            "--juror",
            juror,
            "--run",
            "k",
            "--no-progress",
            "--db",
            str(db),
        ]
        if until:  # sequential judging: batches of 100 and a rule never met, so every batch is judged
            # the items carry no prompt: each is its own cluster (named, as score asks)
            cmd += ["--until", "ci_width(coherence)<0.0001", "--batch-items", "100", "--until-cluster", "item"]
        if kill_after is None:
            t0 = time.monotonic()
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            return {"calls_per_s": calls / (time.monotonic() - t0), "requests": len(stub.requests)}
        asked, answered, first_s = _killed(cmd, env, stub, kill_after)
        kept = _kept(db)
        t0 = time.monotonic()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        rerun_s = time.monotonic() - t0
        total = len(stub.requests)
        looks = _looks(db) if until else []
    in_flight = asked - answered
    return {
        "answered_before_kill": answered,
        "in_flight_at_kill": in_flight,
        "requests": total,
        "answered_twice": total - calls - in_flight,
        "kept_after_kill": kept,
        "sent_but_not_kept": answered - kept,
        "calls_per_s_first": answered / first_s,
        "calls_per_s_rerun": (calls - answered) / rerun_s,
        **({"looks": looks, "looks_kept": looks == list(range(100, calls + 1, 100))} if until else {}),
    }


def _killed(
    cmd: list[str], env: dict[str, str], stub: Any, kill_after: int, cwd: Path | None = None
) -> tuple[int, int, float]:
    """Start ``cmd``, kill -9 it once the stub has answered ``kill_after`` requests: (requests the
    stub received, answers it had written before the kill, seconds the run went)."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.monotonic()
    while stub.limits.n_ok < kill_after and proc.poll() is None:
        time.sleep(0.005)
    killed_at = time.monotonic()
    proc.kill()
    proc.wait()
    # Every request the killed run sent reaches the stub (its handler may parse one after the
    # kill); those still waiting out the stub's delay then meet a closed socket.
    _settle(stub, delay_s=0.2)
    answered = sum(1 for t in stub.limits.ok_times if t <= killed_at)  # written before the kill
    return len(stub.requests), answered, killed_at - start


def inspect_trial(calls: int, kill_after: int, python: str) -> dict[str, float]:
    """Inspect AI's eval of ``calls`` samples on the same stub (64 connections, 200 ms), killed
    after ``kill_after`` answers, then ``eval-retry`` of its log: the answers it asked twice."""
    from jurybench.testing import RateLimits, StubServer

    task_dir = Path(__file__).resolve().parent / "peers"
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubServer(json.dumps({"relevance": 5}), limits=RateLimits(delay_s=0.2, headers=False)) as stub,
    ):
        logs = str(Path(tmp) / "logs")
        env = {**os.environ, "STUB_CALLS": str(calls), "OPENAI_API_KEY": "sk-bench-0123456789"}
        common = ["--max-connections", "64", "--display", "none", "--log-dir", logs]
        cmd = [
            python,
            "-m",
            "inspect_ai",
            "eval",
            "inspect_stub_task.py",
            "--model",
            "openai/stub",
            "--model-base-url",
            stub.api_base,
            "-M",
            "responses_api=false",
            *common,
        ]
        asked, answered, first_s = _killed(cmd, env, stub, kill_after, cwd=task_dir)
        (log,) = sorted(Path(logs).glob("*.eval"))
        subprocess.run(
            [python, "-m", "inspect_ai", "eval-retry", str(log), *common],
            env=env,
            cwd=task_dir,
            check=True,
            capture_output=True,
        )
        total = len(stub.requests)
    in_flight = asked - answered
    return {
        "answered_before_kill": answered,
        "in_flight_at_kill": in_flight,
        "requests": total,
        "answered_twice": total - calls - in_flight,
        "calls_per_s_first": answered / first_s,
    }


def _looks(db: Path) -> list[int]:
    """The subjects judged at each look of the resumed sequential run (those before the kill kept)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute("SELECT stopping FROM runs WHERE run_id = 'k'").fetchone()
    finally:
        con.close()
    return [look["judged"] for look in json.loads(row[0])["looks"]] if row and row[0] else []


def _settle(stub: object, delay_s: float) -> None:
    """Wait until the stub has stopped receiving the killed run's requests: no new one for
    twice its answer delay (an event on the stub's side, not a fixed pause)."""
    seen, quiet_since = -1, time.monotonic()
    requests = stub.requests  # type: ignore[attr-defined]
    while time.monotonic() - quiet_since < 2 * delay_s + 0.1:
        if len(requests) != seen:
            seen, quiet_since = len(requests), time.monotonic()
        time.sleep(0.01)


def _kept(db: Path) -> int:
    """Answers the killed run kept: stored, or in its journal for the next run to store."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        keys = {r[0] for r in con.execute("SELECT call_key FROM calls WHERE status <> 'error'").fetchall()}
    finally:
        con.close()
    for journal in Path(str(db) + ".journal").glob("*.jsonl"):
        for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                keys.add(json.loads(line)["call"]["call_key"])
            except (ValueError, KeyError, TypeError):
                continue
    return len(keys)


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    out: dict[str, object] = {"calls": calls, "target_share": 0.005}
    jurybench_runs: list[dict[str, float]] = []
    for label, on in (("", True), ("without_backpressure_", False)):
        runs = [trial(calls, calls * (k + 1) // (trials + 2), on) for k in range(trials)]
        jurybench_runs = jurybench_runs or runs
        worst = max(r["answered_twice"] for r in runs)
        out |= {f"{label}trials": runs, f"{label}worst_answered_twice": worst, f"{label}worst_share": worst / calls}
    # Inspect AI on the same stub, killed at the same points, resumed with eval-retry
    peer = os.environ.get("JURYBENCH_INSPECT_PYTHON")
    if peer and Path(peer).exists():
        inspect_runs = [inspect_trial(calls, calls * (k + 1) // (trials + 2), peer) for k in range(trials)]
        out |= {
            "inspect_trials": inspect_runs,
            "inspect_worst_answered_twice": max(r["answered_twice"] for r in inspect_runs),
            # over the same kill points: jurybench's total against Inspect's
            "inspect_total_answered_twice": sum(r["answered_twice"] for r in inspect_runs),
            "total_answered_twice": sum(r["answered_twice"] for r in jurybench_runs),
        }
    # score --until (issue 40, item 6): the same kill and resume, in batches; the looks stay.
    # Kill points off the batches' ends (batches of 100), where calls are in flight.
    sequential = [trial(calls // 2, calls // 2 * (k + 1) // (trials + 2) + 37, True, until=True) for k in range(trials)]
    out |= {
        "until_trials": sequential,
        "until_calls": calls // 2,
        "until_worst_answered_twice": max(r["answered_twice"] for r in sequential),
        "until_looks_kept": all(r["looks_kept"] for r in sequential),
    }
    # Throughput of whole runs, alternating, so both see the same machine.
    speeds: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(2):
        for on in (True, False):
            speeds[on].append(trial(calls, None, on)["calls_per_s"])
    out |= {
        "calls_per_s": max(speeds[True]),
        "without_backpressure_calls_per_s": max(speeds[False]),
        "throughput_ratio": max(speeds[True]) / max(speeds[False]),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
