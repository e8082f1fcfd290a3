"""The CLI's start, side by side with an earlier commit (issue 52: `jurybench --help` no slower).

A git worktree of the baseline commit is made in a temporary folder; both trees are
byte-compiled, then `jurybench --help` (and `jurybench score --help`) are started alternately
from each, through the same interpreter and launcher, so that load on the machine falls on both
alike. Reported: medians of wall time and of the child's CPU time, and their ratios.

    python bench/startup_bench.py [--against COMMIT] [--repeats N]

The default baseline is dea383c, the last commit before the house's third round (issue 52).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BASELINE = "dea383c"
LAUNCH = "import sys; sys.argv = ['jurybench', *sys.argv[1:]]; from jurybench.cli import main; main()"


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _start(src: Path, args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one start of the CLI from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cpu, wall = _child_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", LAUNCH, *args], check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - wall, _child_cpu() - cpu


def compare(against: str, repeats: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(base), against], check=True, capture_output=True
        )
        try:
            trees = {"baseline": base / "src", "current": REPO / "src"}
            for src in trees.values():
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
            out: dict[str, object] = {"baseline_commit": against, "repeats": repeats}
            for label, args in (("help", ["--help"]), ("score_help", ["score", "--help"])):
                times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
                for src in trees.values():
                    _start(src, args)  # warm the file cache
                for _ in range(repeats):
                    for name, src in trees.items():
                        times[name].append(_start(src, args))
                wall = {n: statistics.median(w for w, _ in t) for n, t in times.items()}
                cpu = {n: statistics.median(c for _, c in t) for n, t in times.items()}
                out[label] = {
                    "baseline_wall_s": wall["baseline"],
                    "current_wall_s": wall["current"],
                    "baseline_cpu_s": cpu["baseline"],
                    "current_cpu_s": cpu["current"],
                    "cpu_ratio": cpu["current"] / cpu["baseline"],
                    "wall_ratio": wall["current"] / wall["baseline"],
                }
            return out
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False, capture_output=True
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default=BASELINE, help=f"the baseline commit (default {BASELINE})")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    found = compare(args.against, args.repeats)
    print(json.dumps(found, indent=2))
    for label in ("help", "score_help"):
        row = found[label]
        assert isinstance(row, dict)
        print(
            f"jurybench {'--help' if label == 'help' else 'score --help'}: CPU {row['current_cpu_s'] * 1000:.0f} ms vs "
            f"{row['baseline_cpu_s'] * 1000:.0f} ms at {args.against} (x{row['cpu_ratio']:.2f}); wall "
            f"{row['current_wall_s'] * 1000:.0f} vs {row['baseline_wall_s'] * 1000:.0f} ms (x{row['wall_ratio']:.2f})"
        )


if __name__ == "__main__":
    main()
