"""Issue 40's trust fixes, measured through the CLI and the server as a user meets them:

- the budget: the share of ``--max-cost`` spent on a priced loopback stub, with and without the
  juror's ``max_tokens`` (target: at least 90 %, never more than 100 %);
- the SQL memory cap: a served store's peak resident memory above its start while three
  single-expression queries that build huge values run (target: under the cap and a quarter),
  and how long each took to answer 413 and free its slot;
- a stated rate limit of 0 a minute: 20 items judged, and the seconds it took (it was 732 s).

    python bench/trust_bench.py   -> one JSON object on stdout
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CLI = [sys.executable, "-m", "jurybench.cli"]
FULL = {"relevance": 5, "coherence": 4, "empathy": 3, "surprise": 2, "engagement": 1, "complexity": 3}


def _items(tmp: Path, n: int) -> Path:
    db = tmp / "t.duckdb"
    items = tmp / "items.csv"
    items.write_text("item_id,response\n" + "".join(f"i{i:05d},Story number {i} about a fox.\n" for i in range(n)))
    subprocess.run([*CLI, "items", "import", str(items), "--db", str(db)], check=True, capture_output=True)
    return db


def budget(max_tokens: str, budget_usd: float = 0.02, n: int = 600) -> dict[str, Any]:
    import duckdb

    from jurybench.testing import RateLimits, StubServer

    with tempfile.TemporaryDirectory() as folder, StubServer(json.dumps(FULL), limits=RateLimits()) as stub:
        db = _items(Path(folder), n)
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-bench-0123456789,concurrency=32{max_tokens}"
        run = subprocess.run(
            [
                *CLI,
                "score",
                "-r",
                "story-quality",
                "-j",
                juror,
                "--run",
                "b",
                "--no-progress",
                "--max-cost",
                str(budget_usd),
                "--db",
                str(db),
            ],
            capture_output=True,
            text=True,
        )
        con = duckdb.connect(str(db), read_only=True)
        calls, spent = con.execute("SELECT count(*), coalesce(sum(cost_usd), 0) FROM calls").fetchone() or (0, 0.0)
        con.close()
    return {
        "max_tokens": max_tokens.removeprefix(",max_tokens=") or None,
        "budget_usd": budget_usd,
        "calls": calls,
        "spent_usd": spent,
        "share": spent / budget_usd,
        "exit_code": run.returncode,
    }


def _status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))


def _post(url: str, body: dict[str, Any]) -> int:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


EXPRESSIONS = [  # queries whose memory DuckDB's own limit does not see (one function call's value)
    "SELECT length(repeat('x', 100000 * 10000))",
    "SELECT count(*) FROM (SELECT unnest(range(10000 * 10000)))",
    "SELECT sum(length(x)) FROM (SELECT repeat('y', 20000 * 10000) AS x FROM range(8))",
]


@contextlib.contextmanager
def _sql_server(cap_mb: int) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A fresh ``jurybench serve`` with ``--sql-memory-mb cap_mb``, once it answers: (process, /v1/sql URL)."""
    from jurybench.testing.stub import free_port

    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        db = str(Path(folder) / "s.duckdb")
        server = subprocess.Popen(
            [*CLI, "serve", "--db", db, "--port", str(port), "--sql-memory-mb", str(cap_mb)],
            env={**os.environ, "JURYBENCH_TOKEN": ""},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        url = f"http://127.0.0.1:{port}/v1/sql"
        try:
            while True:  # up when it answers
                try:
                    if _post(url, {"query": "SELECT 1"}) == 200:
                        break
                except OSError:
                    time.sleep(0.1)
            yield server, url
        finally:
            server.terminate()
            server.wait(30)


def sql_memory(cap_mb: int = 512) -> dict[str, Any]:
    with _sql_server(cap_mb) as (server, url):
        before = _status_kb(server.pid, "VmRSS")
        answers = []
        for query in EXPRESSIONS:
            started = time.perf_counter()
            status = _post(url, {"query": query})
            answered = time.perf_counter() - started
            freed = _post(url, {"query": "SELECT 42"})  # a slot free again
            answers.append({"query": query, "status": status, "seconds": answered, "next_query": freed})
        peak = _status_kb(server.pid, "VmHWM")
        after = _status_kb(server.pid, "VmRSS")
    return {
        "cap_mb": cap_mb,
        "peak_growth_mb": (peak - before) / 1024,
        "after_growth_mb": (after - before) / 1024,
        "answers": answers,
        "parallel": sql_memory_parallel(cap_mb),
    }


def sql_memory_parallel(cap_mb: int = 512, clients: int = 8) -> dict[str, Any]:
    """``clients`` heavy queries posted at once to a fresh server (the cap is the process's, for
    all of them together): the server's peak growth over its resident size before, against the
    target of ``cap_mb`` and a quarter."""
    from concurrent.futures import ThreadPoolExecutor

    heavy = [*EXPRESSIONS, "SELECT max(x) FROM (SELECT list(i) AS x FROM range(50000000) t(i))"]
    with _sql_server(cap_mb) as (server, url):
        before = _status_kb(server.pid, "VmRSS")
        with ThreadPoolExecutor(clients) as pool:
            statuses = list(pool.map(lambda k: _post(url, {"query": heavy[k % len(heavy)]}), range(clients)))
        peak = _status_kb(server.pid, "VmHWM")
        answered_after = _post(url, {"query": "SELECT 42"})
    growth = (peak - before) / 1024
    return {
        "clients": clients,
        "cap_mb": cap_mb,
        "statuses": statuses,
        "peak_growth_mb": growth,
        "target_mb": cap_mb * 1.25,
        "within_target": growth <= cap_mb * 1.25,
        "answers_after": answered_after,
    }


def zero_rate_limit(n: int = 20) -> dict[str, Any]:
    from jurybench.testing import StubServer

    with tempfile.TemporaryDirectory() as folder, StubServer(json.dumps(FULL)) as stub:
        db = _items(Path(folder), n)
        said = {"x-ratelimit-limit-requests": "0", "x-ratelimit-remaining-requests": "0"}
        stub.script.extend((200, json.dumps(FULL), said) for _ in range(n))
        juror = f"openai/stub,api_base={stub.api_base},api_key=sk-bench-0123456789,concurrency=1"
        started = time.perf_counter()
        run = subprocess.run(
            [
                *CLI,
                "score",
                "-r",
                "story-quality",
                "-j",
                juror,
                "--no-progress",
                "--give-up-after",
                "120",
                "--db",
                str(db),
            ],
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
    return {"items": n, "seconds": seconds, "exit_code": run.returncode, "said": said}


def main() -> None:
    out = {
        "budget": [budget(""), budget(",max_tokens=2000")],
        "sql_memory": sql_memory(),
        "zero_rate_limit": zero_rate_limit(),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
