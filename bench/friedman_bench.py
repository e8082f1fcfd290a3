"""stats friedman over big runs: the block means are computed in DuckDB, a slice of the run's
subjects at a time under the engine's DuckDB cap, so time grows with the rows about as a scan
does and memory does not grow with them. Three sizes: a small run (read whole, in one query),
a large one and one three times larger (both read in slices), so that flatness is seen where
slicing is at work. Each store is built in one process and measured in another, so the peak
RSS of building it does not hide the test's own peak;
``python bench/friedman_bench.py build ROWS DIR`` / ``measure DIR`` run one step."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

CRITERIA = 6
MODELS = 6


def build(n_rows: int, folder: str) -> dict[str, Any]:
    import pyarrow as pa

    from jurybench.engine._records import register_jurors, register_rubric
    from jurybench.jurors._spec import JurorSpec
    from jurybench.jury import Jury, register_jury
    from jurybench.store import connect

    sys.path.insert(0, str(Path(__file__).parent))
    from stats_bench import insert_judgments, quality_rubric

    rubric = quality_rubric(CRITERIA)
    juror = JurorSpec(model="fake/quality", name="quality")
    n_items = n_rows // CRITERIA
    n_prompts = max(1, n_items // (MODELS * 10))  # ten items per prompt and model
    rng = np.random.default_rng(3)
    con = connect(Path(folder) / "f.duckdb")
    register_rubric(con, rubric)
    register_jurors(con, [juror])
    con.execute(
        "INSERT INTO runs (run_id, rubric_hash, mode, jurors, status) VALUES ('f', ?, 'pointwise', '[]', 'finished')",
        [rubric.content_hash],
    )
    register_jury(con, "f", Jury((juror,), aggregation="mean"))
    ids = np.array([f"i{k}" for k in range(n_items)])
    models = np.array([f"m{k % MODELS}" for k in range(n_items)])
    prompts = np.array([f"p{(k // MODELS) % n_prompts}" for k in range(n_items)])
    con.register("new_items", pa.table({"item_id": ids, "model": models, "prompt": prompts}))
    con.execute(
        "INSERT INTO items (item_id, prompt, response, model) SELECT item_id, prompt, 'x', model FROM new_items"
    )
    shift = np.array([int(m[1:]) * 0.1 for m in models])
    scores = np.clip(np.rint(3 + shift[:, None] + rng.normal(0, 1, (n_items, CRITERIA))), 1, 5)
    insert_judgments(con, rubric, juror, "f", ids, [f"c{k}" for k in range(CRITERIA)], scores)
    del scores
    con.close()
    return {"rows": n_items * CRITERIA, "blocks": n_prompts}


def measure(folder: str) -> dict[str, Any]:
    """Peak RSS growth of one friedman over a built store, as the CLI and the library run it
    (the store by path: read, then the result recorded), after the libraries it uses are loaded."""
    import duckdb  # noqa: F401
    import pandas  # noqa: F401
    import scipy.stats  # noqa: F401

    from jurybench.stats import friedman
    from jurybench.store import connect

    connect(Path(folder) / "f.duckdb").close()  # migrated, and its catalog read once
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu = time.process_time()
    start = time.perf_counter()
    result = friedman(str(Path(folder) / "f.duckdb"), "f", block="prompt").attrs["result"]
    seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_s,
        "rss_before_mb": before,
        "rss_after_mb": after,
        "growth_mb": after - before,
        "p_c0": result["criteria"]["c0"]["p"],
    }


def bench_friedman(*sizes: int) -> dict[str, Any]:
    """``small``, ``large`` and (given a third size) ``larger``: each size built and measured."""
    runs = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            step = {}
            for args in (["build", str(n), tmp], ["measure", tmp]):
                done = subprocess.run(
                    [sys.executable, __file__, *args], capture_output=True, text=True, check=True, env={**os.environ}
                )
                step.update(json.loads(done.stdout.strip().splitlines()[-1]))
        runs.append(step)
    a, b = runs[0], runs[1]
    out = {
        "small": a,
        "large": b,
        "rows_ratio": b["rows"] / a["rows"],
        "time_ratio": b["seconds"] / a["seconds"],
        "peak_rss_ratio": b["rss_after_mb"] / a["rss_after_mb"],
        "growth_mb_large": b["growth_mb"],
    }
    if len(runs) > 2:
        c = runs[2]
        out.update(
            {
                "larger": c,
                "larger_rows_ratio": c["rows"] / b["rows"],
                "larger_time_ratio": c["seconds"] / b["seconds"],
                "larger_growth_ratio": c["growth_mb"] / max(b["growth_mb"], 1.0),
            }
        )
    return out


if __name__ == "__main__":
    if sys.argv[1] == "both":  # python bench/friedman_bench.py both SMALL LARGE [LARGER]
        print(json.dumps(bench_friedman(*(int(n) for n in sys.argv[2:]))))
    elif sys.argv[1] == "build":
        print(json.dumps(build(int(sys.argv[2]), sys.argv[3])))
    else:
        print(json.dumps(measure(sys.argv[2])))
