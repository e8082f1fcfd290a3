"""HANNA's human-written stories with their three raters' scores, as an alignment needs them:
the texts from the released fixture (tests/fixtures/released/hanna/), the ratings read at run
time from ../shared/datasets/hanna/hanna_metric_scores_llm.csv (story i of its Human row is the
i-th prompt's Human story)."""

from __future__ import annotations

import ast
import csv
from pathlib import Path

from jurybench.datasets.hanna import CRITERIA
from tests.conftest import DATA, REPO

FIXTURE = REPO / "tests" / "fixtures" / "released" / "hanna" / "hanna_llm_stories.csv.gz"
SCORES = DATA / "hanna" / "hanna_metric_scores_llm.csv"


def stories() -> list[dict[str, str]]:
    """The fixture's records: position (the prompt's index), prompt, the human story."""
    import pandas as pd

    frame = pd.read_csv(FIXTURE, index_col=0, keep_default_na=False)
    return [{"position": str(i), "prompt": r.Prompt, "response": r.Human} for i, r in frame.iterrows()]


def human_row() -> dict[str, list[float]]:
    """The metric file's Human row: each column's list of 96 values (one per story)."""
    csv.field_size_limit(1 << 27)
    with SCORES.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["Model"] == "Human":
                return {k: ast.literal_eval(v) for k, v in row.items() if v.startswith("[")}
    raise AssertionError("no Human row")


def write_files(folder: Path, criteria: set[str] | None = None) -> tuple[Path, Path]:
    """items.csv (item_id hanna-human-<position>) and labels.csv (item_id, annotator, criterion,
    value; of ``criteria`` only, when given)."""
    scores = human_row()
    items, labels = folder / "items.csv", folder / "labels.csv"
    with items.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "prompt", "response", "model"])
        for s in stories():
            w.writerow([f"hanna-human-{s['position']}", s["prompt"], s["response"], "Human"])
    with labels.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "annotator", "criterion", "value"])
        for s in stories():
            p = int(s["position"])
            for rater in (1, 2, 3):
                for code, criterion in CRITERIA.items():
                    if criteria is not None and criterion not in criteria:
                        continue
                    w.writerow([f"hanna-human-{p}", f"rater{rater}", criterion, scores[f"Human {rater} {code}"][p]])
    return items, labels
