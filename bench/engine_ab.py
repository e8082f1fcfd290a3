"""The engine's CPU per call against bare litellm, side by side with an earlier commit's engine, in
one run (issue 57, item 5: find and remove the per-call cost added since the last round).

One loopback stub serves three sides in turn: bare ``litellm.acompletion``, the engine of this
tree and the engine of the baseline commit (a git worktree in a temporary folder). Every block is
one fresh interpreter per side, each making its own slice of the requests and reporting the CPU
time of its run alone (not of its imports), so what one side leaves behind (threads, caches, the
store's memory) cannot slow the next. The order of the sides rotates from block to block, so that a
drift of the shared machine falls on all three alike. Both engines call through litellm
(``transport=litellm`` where the tree knows the option): the same client and the same requests as
the bare side.

    python bench/engine_ab.py [--against COMMIT] [--requests N] [--blocks K]

The default baseline is f91faa2 (2026-11-25), the last commit measured at about 1.05x bare litellm
before the round that issue 57 reports.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BASELINE = "f91faa2"
CONCURRENCY = 64

# One side's run in a fresh interpreter: argv = side, api_base, store, the first and last item
# timed, concurrency, the first and last item of the warm-up. The warm-up (a run of its own, in
# the same process, before the clock starts) pays what a process pays once: imports made on the
# first call (openai's resources, pandas and pyarrow for the store), the store's opening, the
# stub's first connections. The one-off cost is reported apart; the per-call figure is the
# steady state a long run sees.
CHILD = r"""
import asyncio, json, os, sys, time
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
side, api_base, store = sys.argv[1], sys.argv[2], sys.argv[3]
lo, hi, concurrency, wlo, whi = (int(a) for a in sys.argv[4:9])
import litellm  # imported before any clock starts on both sides (the engine imports it lazily)

def where(lo, hi):
    return f"item_id >= 'b{lo:06d}' AND item_id < 'b{hi:06d}'"

if side == "bare":
    import duckdb
    from jurybench.rubric import load_rubric, render_pointwise
    rubric = load_rubric("story-quality")
    kwargs = dict(model="openai/bench-judge", api_base=api_base, api_key="x", temperature=0, timeout=60.0,
                  max_retries=0, response_format={"type": "json_object"})

    def run(lo, hi):
        con = duckdb.connect(store, read_only=True)
        cur = con.execute(f"SELECT * FROM items WHERE {where(lo, hi)} ORDER BY item_id")
        names = [d[0] for d in cur.description]
        messages = [render_pointwise(rubric, dict(zip(names, r))) for r in cur.fetchall()]
        con.close()

        async def calls():
            sem = asyncio.Semaphore(concurrency)
            async def one(m):
                async with sem:
                    await litellm.acompletion(messages=m, **kwargs)
            await asyncio.gather(*(one(m) for m in messages))

        asyncio.run(calls())
        return len(messages)
else:
    import importlib.util
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    lean = importlib.util.find_spec("jurybench.jurors._lean") is not None
    juror = parse_juror(f"openai/bench-judge,api_base={api_base},api_key=x,temperature=0,retries=0"
                        + (",transport=litellm" if lean else ""))
    rubric = load_rubric("story-quality")

    def run(lo, hi):
        result = score(store, rubric, [juror], where=where(lo, hi),
                       options=EngineOptions(concurrency=concurrency, progress=False))
        assert result.status_counts.get("ok") == result.n_called == hi - lo, result.summary()
        return result.n_called

cpu = time.process_time()
warm = run(wlo, whi)
warm_s = time.process_time() - cpu
cpu = time.process_time()
n = run(lo, hi)
print(json.dumps({"cpu_s": time.process_time() - cpu, "n": n, "warm_s": warm_s, "warm_n": warm}))
"""


def _side(
    src: Path, side: str, api_base: str, store: Path, timed: tuple[int, int], warm: tuple[int, int]
) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    args = [side, api_base, str(store), str(timed[0]), str(timed[1]), str(CONCURRENCY), str(warm[0]), str(warm[1])]
    out = subprocess.run([sys.executable, "-c", CHILD, *args], check=True, capture_output=True, text=True, env=env)
    found: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["n"] == timed[1] - timed[0] and found["warm_n"] == warm[1] - warm[0], found
    return found


WARM = 200  # calls of each side's warm-up, before its clock starts

MAKE_STORE = (
    "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); from run import make_store; "
    "make_store(int(sys.argv[2]), Path(sys.argv[3])).close()"
)


def compare(against: str, n: int, blocks: int, warm_calls: int = WARM) -> dict[str, object]:
    sys.path.insert(0, str(REPO / "bench"))
    from run import start_stub

    port = 18767
    stub = start_stub(port)
    api_base = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        git = ["git", "-C", str(REPO), "worktree"]
        subprocess.run([*git, "add", "--detach", str(base), against], check=True, capture_output=True)
        try:
            trees = {"bare": REPO / "src", "current": REPO / "src", "baseline": base / "src"}
            for src in {*trees.values()}:
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
            # a store for each engine, made by its own tree (the baseline's schema is older); the
            # bare side reads the current one's items. Past the n timed items, each block's warm-up.
            stores = {name: Path(tmp) / f"{name}.duckdb" for name in ("current", "baseline")}
            for name, store in stores.items():
                env = {**os.environ, "PYTHONPATH": str(trees[name])}
                args = [str(REPO / "bench"), str(n + blocks * warm_calls), str(store)]
                subprocess.run([sys.executable, "-c", MAKE_STORE, *args], check=True, env=env)
            stores["bare"] = stores["current"]
            size = n // blocks
            order = list(trees)
            cpu = {name: 0.0 for name in trees}
            once = {name: 0.0 for name in trees}
            by_block: list[dict[str, float]] = []
            for k in range(blocks):
                timed = (k * size, n if k == blocks - 1 else (k + 1) * size)
                warm = (n + k * warm_calls, n + (k + 1) * warm_calls)
                block = {}
                for name in order[k % 3 :] + order[: k % 3]:  # the sides' order rotates
                    side = "bare" if name == "bare" else "engine"
                    found = _side(trees[name], side, api_base, stores[name], timed, warm)
                    cpu[name] += found["cpu_s"]
                    once[name] += found["warm_s"]
                    block[name] = round(1000 * found["cpu_s"] / (timed[1] - timed[0]), 3)
                by_block.append(block)
        finally:
            subprocess.run([*git, "remove", "--force", str(base)], capture_output=True)
            stub.terminate()
            stub.wait()
    ms = {name: 1000 * s / n for name, s in cpu.items()}
    # a process's one-off cost: its warm-up's CPU less what the warm-up's calls cost at the side's steady rate
    once_s = {name: (once[name] - blocks * warm_calls * ms[name] / 1000) / blocks for name in trees}
    return {
        "baseline_commit": against,
        "requests": n,
        "blocks": blocks,
        "cpu_ms_per_call": ms,
        "current_over_bare": ms["current"] / ms["bare"],
        "baseline_over_bare": ms["baseline"] / ms["bare"],
        "current_over_baseline": ms["current"] / ms["baseline"],
        "target_current_over_bare": 1.1,
        "cpu_ms_per_call_by_block": by_block,
        "one_off_cpu_s_per_process": once_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default=BASELINE)
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--blocks", type=int, default=3)
    args = parser.parse_args()
    result = compare(args.against, args.requests, args.blocks)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
