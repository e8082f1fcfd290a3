"""Statistics benchmarks (called by run.py; the DuckDB part also runs alone for its own peak memory)."""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def bench_gap() -> dict[str, Any]:
    """G_T bootstrap for 13 models x 19 categories x 150 pairs, B = 2000: vectorised vs loop."""
    from jurybench.stats._pairwise import bootstrap_gaps_loop
    from jurybench.stats.functions import treatment_gaps

    rng = np.random.default_rng(0)
    groups = {f"model{m:02d}": rng.normal(0.1 * m / 13, 1, size=(150, 19)).round() for m in range(13)}
    start = time.perf_counter()
    treatment_gaps(groups, n_boot=2000, seed=0)
    fast = time.perf_counter() - start
    start = time.perf_counter()
    for i, eps in enumerate(groups.values()):
        bootstrap_gaps_loop(eps, n_boot=2000, seed=i)
    slow = time.perf_counter() - start
    return {"vectorised_seconds": fast, "loop_seconds": slow, "speedup": slow / fast, "target_seconds": 1.0}


def bench_cohens_d() -> dict[str, Any]:
    """Cohen's d with bootstrap CIs, 24 cells x 30 sub-scales, 400 runs per arm, B = 2000."""
    from jurybench.stats._effects import cohens_d_loop
    from jurybench.stats.functions import cohens_d_cells

    rng = np.random.default_rng(1)
    cells = [(rng.normal(0.2, 1, (400, 30)), rng.normal(0, 1, (400, 30))) for _ in range(24)]
    start = time.perf_counter()
    for a, b in cells:
        cohens_d_cells(a, b, n_boot=2000, seed=0)
    fast = time.perf_counter() - start
    # The per-resample, per-cell loop is slow: time 100 resamples of one cell, scale to 24 x 2000.
    a, b = cells[0]
    start = time.perf_counter()
    cohens_d_loop(a, b, n_boot=100, seed=0)
    slow = (time.perf_counter() - start) * 24 * 20
    return {
        "vectorised_seconds": fast,
        "loop_seconds_extrapolated": slow,
        "speedup": slow / fast,
        "target_seconds": 3.0,
    }


def quality_rubric(criteria: int) -> Any:
    """A synthetic pointwise rubric 'quality' with criteria c0..c{n-1} on a 1-5 scale."""
    from jurybench.rubric import parse_rubric

    return parse_rubric(
        "name: quality\nkind: pointwise\ncriteria:\n"
        + "".join(
            f"  - {{name: c{k}, description: criterion {k}, scale: {{min: 1, max: 5}}, anchors: {{1: a, 2: b, 3: c, 4: d, 5: e}}}}\n"
            for k in range(criteria)
        )
        + "templates: {en: {user: '{response}'}}\n"
    )


def insert_judgments(
    con: Any, rubric: Any, juror: Any, run_id: str, item_ids: Any, criteria: list[str], scores: Any, prefix: str = "c"
) -> None:
    """One answered call per item of the run (``scores``: items x criteria), straight into the
    store's tables: synthetic runs of any size in seconds."""
    import pyarrow as pa

    calls = np.array([f"{prefix}{i}" for i in range(len(item_ids))])
    con.register("new_calls", pa.table({"call_key": calls, "item_id": np.asarray(item_ids)}))
    con.execute(
        "INSERT INTO calls (call_key, rubric_hash, juror_key, subject_kind, subject_id, sample_index, messages, "
        "status, attempts) SELECT call_key, ?, ?, 'item', item_id, 0, '[]', 'ok', 1 FROM new_calls",
        [rubric.content_hash, juror.key],
    )
    con.execute("INSERT INTO run_calls SELECT ?, call_key FROM new_calls", [run_id])
    con.register(
        "new_judgments",
        pa.table(
            {
                "call_key": np.repeat(calls, len(criteria)),
                "item_id": np.repeat(np.asarray(item_ids), len(criteria)),
                "criterion": np.tile(criteria, len(item_ids)),
                "score": np.asarray(scores, dtype=float).ravel(),
            }
        ),
    )
    con.execute(
        "INSERT INTO pointwise_judgments (call_key, rubric_hash, juror_key, item_id, sample_index, criterion, score, "
        "status) SELECT call_key, ?, ?, item_id, 0, criterion, score, 'valid' FROM new_judgments",
        [rubric.content_hash, juror.key],
    )


def bench_store_ratings(n_runs: int = 400, n_items: int = 100) -> dict[str, Any]:
    """1,920,000 item ratings (6 models x 4 languages x 2 arms x 400 runs x 100 items) in DuckDB,
    Cohen's d per model x language cell for 100 items and 30 sub-scales, straight from the store."""
    import pyarrow as pa

    from jurybench.engine._records import register_jurors, register_rubric
    from jurybench.jurors._spec import JurorSpec
    from jurybench.jury import Jury, register_jury
    from jurybench.rubric import parse_rubric
    from jurybench.stats.builtin.cohens_d import cohens_d
    from jurybench.store import connect

    rubric = parse_rubric(
        "name: inventory\nkind: pointwise\ncriteria:\n"
        + "".join(
            f"  - {{name: i{k:03d}, description: item {k}, scale: {{min: 1, max: 5}}, anchors: {{1: a, 2: b, 3: c, 4: d, 5: e}}}}\n"
            for k in range(n_items)
        )
        + "templates: {en: {user: '{response}'}}\n"
    )
    juror = JurorSpec(model="fake/inventory", name="inventory")
    rng = np.random.default_rng(2)
    with tempfile.TemporaryDirectory() as tmp:
        con = connect(Path(tmp) / "inventory.duckdb")
        register_rubric(con, rubric)
        register_jurors(con, [juror])
        con.execute(
            "INSERT INTO runs (run_id, rubric_hash, mode, jurors, status) VALUES ('inv', ?, 'pointwise', '[]', 'finished')",
            [rubric.content_hash],
        )
        register_jury(con, "inv", Jury((juror,), aggregation="mean"))
        start = time.perf_counter()
        item_ids, models, langs, treatments = [], [], [], []
        for m in range(6):
            for lang in ("en", "ko", "zh", "de"):
                for arm in ("a", "b"):
                    for r in range(n_runs):
                        item_ids.append(f"m{m}-{lang}-{arm}-{r:03d}")
                        models.append(f"m{m}")
                        langs.append(lang)
                        treatments.append(json.dumps({"arm": arm}))
        n = len(item_ids)
        con.register(
            "new_items", pa.table({"item_id": item_ids, "model": models, "language": langs, "treatment": treatments})
        )
        con.execute(
            "INSERT INTO items (item_id, prompt, response, model, language, treatment) SELECT item_id, 'inventory', 'x', model, language, treatment::JSON FROM new_items"
        )
        shift = np.array([0.3 if t.endswith('"a"}') else 0.0 for t in treatments])
        scores = np.clip(np.rint(3 + shift[:, None] + rng.normal(0, 1, (n, n_items))), 1, 5)
        insert_judgments(con, rubric, juror, "inv", item_ids, [f"i{k:03d}" for k in range(n_items)], scores)
        load_s = time.perf_counter() - start
        factors = Path(tmp) / "factors.csv"
        factors.write_text("criterion,factor\n" + "".join(f"i{k:03d},s{k % 30:02d}\n" for k in range(n_items)))
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        result = cohens_d.compute(
            con,
            "inv",
            arm="treatment->>'arm'",
            arms=("a", "b"),
            by="model || '/' || language",
            factor_file=factors,
            boot=2000,
            seed=0,
        )
        stat_s = time.perf_counter() - start
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        stored = con.execute("SELECT count(*) FROM pointwise_judgments").fetchall()[0][0]
    cells = result["cells"]
    one = next(iter(cells.values()))["effects"]
    return {
        "ratings": int(stored),
        "cells": len(cells),
        "effects_per_cell": len(one),
        "insert_seconds": load_s,
        "cohens_d_seconds": stat_s,
        "peak_rss_mb": rss_after / 1024,
        "rss_growth_during_statistic_mb": (rss_after - rss_before) / 1024,
    }


if __name__ == "__main__":
    print(json.dumps(bench_store_ratings()))
    sys.exit(0)
