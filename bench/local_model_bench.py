"""Throughput against a real model server: jurybench versus the same requests sent directly with
the ``openai`` client, to the same llama.cpp server (SmolLM2-135M-Instruct) at the same concurrency.

The server is the bottleneck (about 10 generated tokens a second on 2 cores), so jurybench should
reach at least 0.95 of the direct figure. Runs alternate A B B A (direct, jurybench, jurybench,
direct) so that a drift of the machine's speed falls on both alike. Each jurybench run writes a
fresh store (no cache), and the direct client sends exactly the request bodies jurybench sent
(read back from the server's side: the same messages, response_format, logprobs, max_tokens).

    JURYBENCH_MODEL_PYTHON=.venv-models/bin/python JURYBENCH_MODEL_GGUF=... python bench/local_model_bench.py N C
prints one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.95


EXPECTED = "structured=schema,response_format=json_object,scores=expected,top_logprobs=5"
# Seconds per judgment by what is asked of the server: the same rubric and items, one call each.
MODES = {
    "json": "structured=json,response_format=json_object",  # JSON mode, no grammar from the schema
    "schema": "structured=schema,response_format=json_object",  # the schema as a grammar
    "expected": EXPECTED,  # the grammar and the log probabilities of the answer's tokens
}
TARGET_LOGPROB_RATIO = 2.0  # a logprob-weighted score at most twice a plain schema answer's time


def _jurybench(folder: Path, api_base: str, n: int, concurrency: int, tag: str, asks: str = EXPECTED) -> dict[str, Any]:
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import parse_rubric
    from jurybench.store import connect, import_items
    from jurybench.testing.llama import CLARITY_RUBRIC

    db = folder / f"{tag}.duckdb"
    items = folder / "items.csv"
    if not items.exists():
        rows = [
            f"i{k},Describe thing {k},This is response number {k} about a topic worth describing.,m" for k in range(n)
        ]
        items.write_text("item_id,prompt,response,model\n" + "\n".join(rows) + "\n", encoding="utf-8")
    con = connect(db)
    try:
        import_items(con, items)
        juror = parse_juror(
            f"openai/smollm2-135m,api_base={api_base},api_key=local,temperature=0,max_tokens=12,"
            f"{asks},timeout=300,concurrency={concurrency}"
        )
        started = time.perf_counter()
        result = score(con, parse_rubric(CLARITY_RUBRIC), [juror], options=EngineOptions(progress=False), run_id=tag)
        elapsed = time.perf_counter() - started
        tokens = con.execute("SELECT sum(completion_tokens) FROM calls").fetchone()[0] or 0
        stored = con.execute("SELECT count(*) FROM calls WHERE status IN ('ok', 'invalid')").fetchone()[0]
    finally:
        con.close()
    assert result.n_called == n, result.summary()
    return {"seconds": elapsed, "calls": n, "stored": stored, "completion_tokens": int(tokens)}


OPENAI_FIELDS = {"model", "messages", "response_format", "logprobs", "top_logprobs", "max_tokens", "temperature"}


def _openai_body(body: dict[str, Any]) -> dict[str, Any]:
    """A recorded request as the openai client sends it: a server's own fields (llama.cpp's
    repeat_penalty) go in extra_body, as litellm sent them."""
    sent = {k: v for k, v in body.items() if k in OPENAI_FIELDS}
    extra = {k: v for k, v in body.items() if k not in OPENAI_FIELDS and k != "stream"}
    return {**sent, "extra_body": extra} if extra else sent


async def _direct(api_base: str, bodies: list[dict[str, Any]], concurrency: int) -> dict[str, Any]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=api_base, api_key="local", max_retries=0, timeout=300)
    gate = asyncio.Semaphore(concurrency)
    tokens = 0

    async def one(body: dict[str, Any]) -> None:
        nonlocal tokens
        async with gate:
            answer = await client.chat.completions.create(**body)
            tokens += answer.usage.completion_tokens if answer.usage else 0

    started = time.perf_counter()
    await asyncio.gather(*(one(b) for b in bodies))
    elapsed = time.perf_counter() - started
    await client.close()
    return {"seconds": elapsed, "calls": len(bodies), "completion_tokens": tokens}


class _Recorder:
    """A loopback pass-through in front of the server that keeps the request bodies jurybench
    sends, so that the direct client sends the very same ones."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.bodies: list[dict[str, Any]] = []

    def serve(self, port: int) -> Any:
        import threading

        from aiohttp import ClientSession, web

        async def forward(request: web.Request) -> web.Response:
            body = await request.json()
            self.bodies.append(body)
            async with ClientSession() as session, session.post(f"{self.upstream}/chat/completions", json=body) as up:
                return web.Response(body=await up.read(), status=up.status, content_type="application/json")

        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            app = web.Application()
            app.router.add_post("/v1/chat/completions", forward)
            runner = web.AppRunner(app, access_log=None)
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
            ready.set()
            loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        ready.wait(10)
        return loop


def _throughput(api_base: str, folder: Path, n: int, concurrency: int, tag: str) -> dict[str, Any]:
    """jurybench against the direct client on the same request bodies: a warm-up run through the
    recorder captures the bodies jurybench sends, then runs in the order A B B A (a drift of the
    machine's speed falls on both alike)."""
    from jurybench.testing import free_port

    relay = free_port()
    recorder = _Recorder(api_base)
    recorder.serve(relay)
    _jurybench(folder, f"http://127.0.0.1:{relay}/v1", n, concurrency, f"{tag}record")
    bodies = [_openai_body(b) for b in recorder.bodies]
    runs: list[tuple[str, dict[str, Any]]] = []
    for turn, kind in enumerate(("direct", "jurybench", "jurybench", "direct")):
        if kind == "direct":
            runs.append((kind, asyncio.run(_direct(api_base, bodies, concurrency))))
        else:
            runs.append((kind, _jurybench(folder, api_base, n, concurrency, f"{tag}run{turn}")))

    def rate(kind: str, key: str) -> float:
        return sum(r[key] for k, r in runs if k == kind) / sum(r["seconds"] for k, r in runs if k == kind)

    return {
        "runs": [{"kind": k, **r} for k, r in runs],
        "jurybench_calls_per_s": rate("jurybench", "calls"),
        "direct_calls_per_s": rate("direct", "calls"),
        "calls_ratio": rate("jurybench", "calls") / rate("direct", "calls"),
        "tokens_ratio": rate("jurybench", "completion_tokens") / rate("direct", "completion_tokens"),
    }


def _per_mode(folder: Path, api_base: str, n: int, tag: str) -> dict[str, float]:
    """Seconds per judgment by what is asked of the server, one call at a time, modes in the order
    A B C C B A, each on a fresh store."""
    per_mode: dict[str, list[float]] = {mode: [] for mode in MODES}
    for turn, mode in enumerate((*MODES, *reversed(MODES))):
        done = _jurybench(folder, api_base, n, 1, f"{tag}mode{turn}", MODES[mode])
        per_mode[mode].append(done["seconds"] / done["calls"])
    return {mode: sum(v) / len(v) for mode, v in per_mode.items()}


def _llama_server_slots(gguf: str, folder: Path, n: int) -> dict[str, Any] | None:
    """llama.cpp's own server (JURYBENCH_LLAMA_SERVER, built by make bench) with two slots:
    throughput against the direct client at concurrency 2, and seconds per judgment by mode (its
    log probabilities are computed natively)."""
    binary = os.environ.get("JURYBENCH_LLAMA_SERVER")
    if not binary:
        return None
    from jurybench.testing.llama import llama_cpp_server

    folder = folder / "slots"  # its own items: more requests than the first section's
    folder.mkdir(exist_ok=True)
    with llama_cpp_server(binary, gguf, folder / "llama-server.log", slots=2) as api_base:
        section: dict[str, Any] = {"slots": 2, "requests_per_run": n, **_throughput(api_base, folder, n, 2, "slots-")}
        seconds = _per_mode(folder, api_base, n, "slots-")
    return {
        **section,
        "seconds_per_judgment": seconds,
        "logprob_ratio": seconds["expected"] / seconds["schema"],
        "target_ratio": TARGET,
        "target_logprob_ratio": TARGET_LOGPROB_RATIO,
    }


def main() -> None:
    n, concurrency = (int(a) for a in sys.argv[1:3])
    python, gguf = os.environ.get("JURYBENCH_MODEL_PYTHON"), os.environ.get("JURYBENCH_MODEL_GGUF")
    if not python or not gguf:
        print(json.dumps({"skipped": "JURYBENCH_MODEL_PYTHON / JURYBENCH_MODEL_GGUF not set (make bench sets them)"}))
        return
    from jurybench.testing.llama import llama_server

    folder = Path(tempfile.mkdtemp(prefix="jb-local-bench-"))
    with llama_server(python, gguf, folder / "server.log") as api_base:
        throughput = _throughput(api_base, folder, n, concurrency, "")
        seconds = _per_mode(folder, api_base, n, "")
    slots_section = _llama_server_slots(gguf, folder, max(32, 4 * n))
    print(
        json.dumps(
            {
                "requests_per_run": n,
                "concurrency": concurrency,
                **throughput,
                "target_ratio": TARGET,
                "seconds_per_judgment": seconds,
                "grammar_ratio": seconds["schema"] / seconds["json"],
                "logprob_ratio": seconds["expected"] / seconds["schema"],
                "target_logprob_ratio": TARGET_LOGPROB_RATIO,
                **({"llama_server": slots_section} if slots_section else {}),
            }
        )
    )


if __name__ == "__main__":
    main()
