"""Cost-aware jury selection on a simulated study: what the chosen sub-jury saves.

A pilot of PILOT stories (5 simulated jurors of known accuracy and price: two good, one of them
twenty times dearer, and three noisy cheap ones; three simulated annotators) chooses a sub-jury
with 'jury select'. Then a study of STUDY new stories is judged twice, by the chosen sub-jury
and by the full jury, and each jury's mean score is compared with the new stories' human labels
(RMSE over story x criterion): the money the choice saves, at the error it keeps.

    python bench/selection_bench.py PILOT STUDY
prints one JSON object.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

JURORS = [
    "sim/good-cheap,noise=0.4,cost=0.001",
    "sim/good-dear,noise=0.35,cost=0.02",
    "sim/noisy-a,noise=1.5,cost=0.0004",
    "sim/noisy-b,noise=1.8,cost=0.0006",
    "sim/noisy-c,noise=2.0,cost=0.0003",
]


def main(pilot: int, study: int) -> dict[str, object]:
    import numpy as np

    import jurybench as jb

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "selection.duckdb"
        with jb.open(db) as store:
            store.import_items(
                [
                    {"item_id": f"p{k}", "response": f"Pilot story {k}", "prompt": f"pp{k % 40}", "dataset": "pilot"}
                    for k in range(pilot)
                ]
            )
            store.import_items(
                [
                    {"item_id": f"s{k}", "response": f"Study story {k}", "prompt": f"sp{k % 80}", "dataset": "study"}
                    for k in range(study)
                ]
            )
            jb.score(store, rubric="story-quality", jury=JURORS, where="dataset = 'pilot'", run="pilot")
            store.simulate_annotations(rubric="story-quality", annotators=3, noise=0.5)
        started = time.perf_counter()
        selection = jb.select_jury(db, "pilot", out=Path(folder) / "chosen.yaml")
        seconds = time.perf_counter() - started
        with jb.open(db) as store:
            chosen = jb.score(
                store,
                rubric="story-quality",
                jury=Path(folder) / "chosen.yaml",
                where="dataset = 'study'",
                run="study-chosen",
            )
            full = jb.score(store, rubric="story-quality", jury=JURORS, where="dataset = 'study'", run="study-full")

            def rmse(run: str) -> float:
                rows = store.sql(
                    "SELECT j.jury_score, avg(h.value) AS human FROM jury_pointwise j JOIN human_labels h "
                    "ON h.subject_id = j.item_id AND h.criterion = j.criterion "
                    f"WHERE j.run_id = '{run}' AND j.jury_score IS NOT NULL GROUP BY j.item_id, j.criterion, j.jury_score"
                )
                return float(np.sqrt(np.mean((rows["jury_score"] - rows["human"]) ** 2)))

            chosen_cost, full_cost = chosen.cost_usd or 0.0, full.cost_usd or 0.0
            return {
                "pilot_stories": pilot,
                "study_stories": study,
                "candidates": len(selection.candidates),
                "select_seconds": seconds,
                "chosen": list(selection.chosen.jurors),
                "pilot_error_chosen": selection.chosen.error,
                "pilot_error_full": selection.full.error,
                "study_cost_chosen": chosen_cost,
                "study_cost_full": full_cost,
                "cost_ratio": chosen_cost / full_cost if full_cost else None,
                "study_rmse_chosen": rmse("study-chosen"),
                "study_rmse_full": rmse("study-full"),
            }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]))))
