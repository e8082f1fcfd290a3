"""Conversations at scale (``make bench`` runs it; alone: ``python bench/conversation_bench.py``).

1. Import: 1,000 and 10,000 conversations of 30 messages (OpenAI chat JSON lines, a tool call and
   its result every third turn) through ``jurybench items import --format openai-chat``, each in
   its own process: seconds and peak RSS (``wait4``). Targets: peak RSS at 10k / at 1k <= 1.5 (the
   memory stays flat while the file grows tenfold), seconds per conversation at 10k / at 1k <= 1.5.
2. Rendering: a 30-message trace fitted for a judge and rendered through a ``{conversation}``
   rubric, against a single response of the same length through the same rubric's
   ``{response}``: time per rendering. Target: conversation / single <= 3.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JURYBENCH = [sys.executable, "-m", "jurybench.cli"]
MESSAGES = 30


def conversation(k: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a support agent with tools."}]
    messages.append({"role": "user", "content": f"Ticket {k}: my order {k} has not arrived."})
    turn = 0
    while len(messages) < MESSAGES - 1:
        if turn % 3 == 0:
            call = f"c{k}-{turn}"
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": call, "function": {"name": "lookup_order", "arguments": json.dumps({"order": k})}}
                    ],
                }
            )
            messages.append(
                {"role": "tool", "tool_call_id": call, "content": json.dumps({"order": k, "state": "late"})}
            )
        else:
            messages.append(
                {"role": "assistant" if turn % 2 else "user", "content": f"Turn {turn} about order {k}. " * 6}
            )
        turn += 1
    messages = messages[: MESSAGES - 1]
    if messages[-1].get("tool_calls"):
        messages.pop()
    while len(messages) < MESSAGES - 1:
        messages.append({"role": "user", "content": "Any news?"})
    messages.append({"role": "assistant", "content": f"Order {k} ships tomorrow."})
    return {"id": f"t{k}", "messages": messages, "outcome": k % 2}


def peak_rss_mb(args: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode(errors="replace")[-500:]
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(args)}: {err}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start


def import_case(n: int, tmp: Path) -> dict[str, Any]:
    path = tmp / f"conversations{n}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for k in range(n):
            f.write(json.dumps(conversation(k)) + "\n")
    rss, seconds = peak_rss_mb(
        [*JURYBENCH, "items", "import", str(path), "--format", "openai-chat", "--db", str(tmp / f"c{n}.duckdb")]
    )
    return {
        "conversations": n,
        "messages": n * MESSAGES,
        "file_mb": path.stat().st_size / 2**20,
        "peak_rss_mb": rss,
        "seconds": seconds,
        "ms_per_conversation": seconds / n * 1000,
    }


def render_case(repeats: int = 300) -> dict[str, Any]:
    from jurybench.imports import openai_messages
    from jurybench.rubric import parse_rubric

    rubric_text = """name: bench-goal
kind: pointwise
criteria:
  - name: goal
    description: Was the user's goal met?
    scale: {min: 1, max: 5}
    anchors: {1: none of it, 2: little, 3: partly, 4: mostly, 5: fully}
templates:
  en:
    user: "{conversation}{response}\\n\\n{criteria}"
"""
    rubric = parse_rubric(rubric_text, source="bench-goal.yaml")
    messages = openai_messages(conversation(7)["messages"], "bench")
    from jurybench.rubric import render_transcript

    same_length = render_transcript(messages)[0]
    as_trace = {"item_id": "t7", "conversation": messages, "response": ""}
    as_single = {"item_id": "s7", "conversation": None, "prompt": None, "response": same_length}

    def per_render(subject: dict[str, Any]) -> float:
        times = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(repeats):
                rubric.render(subject)
            times.append((time.perf_counter() - start) / repeats)
        return statistics.median(times)

    trace_s, single_s = per_render(as_trace), per_render(as_single)
    return {
        "trace_chars": len(same_length),
        "conversation_us": trace_s * 1e6,
        "single_us": single_s * 1e6,
        "conversation_over_single": trace_s / single_s,
        "target_conversation_over_single": 3.0,
    }


def bench_conversations(small: int = 1_000, large: int = 10_000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        a, b = import_case(small, tmp), import_case(large, tmp)
    return {
        "import_small": a,
        "import_large": b,
        "rss_large_over_small": b["peak_rss_mb"] / a["peak_rss_mb"],
        "target_rss_large_over_small": 1.5,
        "time_per_conversation_large_over_small": b["ms_per_conversation"] / a["ms_per_conversation"],
        "target_time_per_conversation_large_over_small": 1.5,
        "render": render_case(),
    }


if __name__ == "__main__":
    sizes = [int(x) for x in sys.argv[1:]]
    print(json.dumps(bench_conversations(*sizes), indent=2))
