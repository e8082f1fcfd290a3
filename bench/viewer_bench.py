"""The viewer's pages on a store with 1 M judgment rows (two jurors x 83,333 items x 6 criteria):
each page's time, on its first visit (a run's aggregates are computed) and on a second one
(they are kept). ``python bench/viewer_bench.py ROWS`` runs it alone."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

CRITERIA = 6
MODELS = 6


def build(n_rows: int, folder: Path) -> Path:
    import pyarrow as pa

    from jurybench.engine._records import register_jurors, register_rubric
    from jurybench.jurors._spec import JurorSpec
    from jurybench.jury import Jury, register_jury
    from jurybench.store import connect

    sys.path.insert(0, str(Path(__file__).parent))
    from stats_bench import insert_judgments, quality_rubric

    rubric = quality_rubric(CRITERIA)
    jurors = [JurorSpec(model="fake/a", name="a"), JurorSpec(model="fake/b", name="b")]
    n_items = n_rows // (CRITERIA * len(jurors))
    db = folder / "v.duckdb"
    con = connect(db)
    register_rubric(con, rubric)
    register_jurors(con, jurors)
    con.execute(
        "INSERT INTO runs (run_id, rubric_hash, mode, jurors, status, created_at, finished_at) VALUES "
        "('big', ?, 'pointwise', '[]', 'finished', now(), now())",
        [rubric.content_hash],
    )
    register_jury(con, "big", Jury(tuple(jurors), aggregation="mean"))
    ids = np.array([f"i{k:07d}" for k in range(n_items)])
    models = np.array([f"m{k % MODELS}" for k in range(n_items)])
    con.register("new_items", pa.table({"item_id": ids, "model": models}))
    con.execute("INSERT INTO items (item_id, prompt, response, model) SELECT item_id, 'p', 'x', model FROM new_items")
    rng = np.random.default_rng(5)
    for k, juror in enumerate(jurors):
        scores = np.clip(np.rint(3 + rng.normal(0, 1, (n_items, CRITERIA))), 1, 5)
        insert_judgments(con, rubric, juror, "big", ids, [f"c{c}" for c in range(CRITERIA)], scores, prefix=f"j{k}-")
    con.close()
    return db


def measure(db: Path, *, warm_up: bool) -> dict[str, Any]:
    """Each page twice; with ``warm_up`` after the viewer's start-up computation has finished."""
    from fastapi.testclient import TestClient

    from jurybench.viewer import create_viewer_app
    from jurybench.viewer._data import MEMO

    MEMO.clear()  # each measurement starts without kept aggregates

    pages = {
        "runs": "/",
        "run": "/runs/big",
        "item": "/runs/big/subjects/i0000042",
        "disagreements": "/runs/big/disagreements",
        "statistics": "/stats",
        # find and step: a score range in score order, a text search, an item's neighbours
        "find": "/runs/big?criterion=c0&min=4.5&sort=-score",
        "find_text": "/runs/big?q=i00042",
        "step": "/runs/big/subjects/i0000042?criterion=c0&min=4.5&sort=-score",
    }
    out: dict[str, Any] = {}
    with TestClient(create_viewer_app(db, warm_up=warm_up)) as client:
        client.get("/assets/viewer.css")  # the app and its imports are loaded
        start = time.perf_counter()
        client.app.state.warm_up.join()  # returns at once when it was not started
        out["warm_up_s"] = time.perf_counter() - start
        for name, url in pages.items():
            times = []
            for _ in range(2):  # first visit, second visit
                start = time.perf_counter()
                response = client.get(url)
                times.append(time.perf_counter() - start)
                assert response.status_code == 200, (url, response.status_code)
            out[name] = {"first_ms": 1000 * times[0], "again_ms": 1000 * times[1]}
    return out


def bench_viewer(n_rows: int = 1_000_000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        db = build(n_rows, Path(tmp))
        cold = measure(db, warm_up=False)
        warmed = measure(db, warm_up=True)
    return {"rows": n_rows, "cold": cold, "warmed": warmed, "target_ms": 300}


if __name__ == "__main__":
    print(json.dumps(bench_viewer(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000), indent=1))
