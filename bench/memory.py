"""Peak memory of the engine and the importers as runs grow (``make bench`` runs it; alone:
``python bench/memory.py``). Every case runs in its own process; its peak RSS is read from
``wait4``. Ratios between sizes are the targets, so the machine's noise matters little."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JURYBENCH = [sys.executable, "-m", "jurybench.cli"]


def peak_rss_mb(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(peak RSS in MB, seconds, stderr tail) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode(errors="replace")[-500:]
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {err}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start, err


def write_items(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as f:
        f.write("item_id,prompt,response,model,language\n")
        for i in range(n):
            f.write(
                f"i{i},Write a short story about the number {i},Once upon a time there was a number {i} "
                f"that lived alone and counted sheep every night until morning,m{i % 7},en\n"
            )


def score_case(n: int, tmp: Path) -> dict[str, Any]:
    db = tmp / f"score{n}.duckdb"
    items = tmp / f"items{n}.csv"
    write_items(items, n)
    subprocess.run([*JURYBENCH, "items", "import", str(items), "--db", str(db)], check=True, capture_output=True)
    rss, seconds, _ = peak_rss_mb(
        [*JURYBENCH, "score", "-r", "story-quality", "-j", "fake/a", "--no-progress", "--db", str(db)]
    )
    return {"items": n, "calls": n, "judgment_rows": n * 6, "peak_rss_mb": rss, "seconds": seconds}


def import_case(n: int, tmp: Path) -> dict[str, Any]:
    items = tmp / f"import{n}.csv"
    write_items(items, n)
    rss, seconds, _ = peak_rss_mb([*JURYBENCH, "items", "import", str(items), "--db", str(tmp / f"import{n}.duckdb")])
    return {"rows": n, "peak_rss_mb": rss, "seconds": seconds}


def bench_memory(
    small: int = 3_000, large: int = 30_000, judgment_items: int = 166_667, import_rows: int = 600_000
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        a, b = score_case(small, tmp), score_case(large, tmp)
        million = score_case(judgment_items, tmp) if judgment_items else None
        imported = import_case(import_rows, tmp) if import_rows else None
    return {
        "score_small": a,
        "score_large": b,
        "large_over_small": b["peak_rss_mb"] / a["peak_rss_mb"],
        "target_large_over_small": 1.3,
        "score_1m_judgments": million,
        "import": imported,
        "target_mb": 500,
    }


if __name__ == "__main__":
    sizes = [int(x) for x in sys.argv[1:]]
    print(json.dumps(bench_memory(*sizes), indent=2))
