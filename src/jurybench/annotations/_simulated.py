"""Simulated human labels for offline studies: annotators who see the same latent truth as the
simulated jurors (``sim/``), without their distortions."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError
from jurybench.jurors import load_sim_subjects, truth
from jurybench.store import as_float

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.rubric import AnyRubric


def simulate_human_labels(
    con: Connection,
    rubric: AnyRubric,
    *,
    where: str | None = None,
    fraction: float = 1.0,
    annotators: int = 3,
    noise: float = 0.5,
    seed: int = 0,
    truth_seed: int = 0,
    panel_file: Path | None = None,
) -> int:
    """Human labels from the known truth, for offline studies: each annotator rates a seeded share
    of the items on every criterion as round(mid + half * 0.5 * z + planted + noise * e), clipped
    (the same truth and generator markers the simulated jurors see, without their distortions).
    Annotators are named sim-human-1.. ; returns the number of labels written. ``panel_file``:
    nothing is written to the store; the panel's mean per item and criterion (annotator 'panel',
    a value between the scale's points) goes to that CSV instead, for 'annotations import
    --continuous' as a published panel mean would."""
    from jurybench.rubric import PointwiseRubric, load_subjects

    if not isinstance(rubric, PointwiseRubric):
        raise JurybenchError("simulated human labels are for pointwise rubrics (scores per criterion).")
    if not 0 < fraction <= 1 or annotators < 1 or noise < 0:
        raise JurybenchError("--fraction must be in (0, 1], --annotators at least 1, --noise at least 0.")
    subjects = load_subjects(con, rubric, where)
    items, _ = load_sim_subjects(con)
    rows = []
    for subject in subjects:
        item = items[subject["item_id"]]
        pick = random.Random(int.from_bytes(hashlib.sha256(f"{seed}\x1f{item.item_id}".encode()).digest()[:8], "big"))
        if pick.random() >= fraction:
            continue
        for k in range(1, annotators + 1):
            rng = random.Random(
                int.from_bytes(hashlib.sha256(f"{seed}\x1f{item.item_id}\x1f{k}".encode()).digest()[:8], "big")
            )
            for c in rubric.criteria:
                given = item.metadata.get(f"true_{c.name}")
                z = as_float(given) if given is not None else truth(item.item_id, c.name, truth_seed)
                mid, half = (c.scale.min + c.scale.max) / 2, (c.scale.max - c.scale.min) / 2
                value = mid + half * 0.5 * z + item.planted.get(c.name, 0.0) + noise * rng.gauss(0, 1)
                score = int(min(c.scale.max, max(c.scale.min, round(value))))
                rows.append(("item", item.item_id, c.name, f"sim-human-{k}", float(score), str(score), "simulated"))
    if not rows:
        raise JurybenchError("no items selected for simulated labels.", hint="Check --where and --fraction.")
    if panel_file is not None:
        import csv

        means: dict[tuple[str, str], list[float]] = {}
        for _, item_id, criterion, _, value, _, _ in rows:
            means.setdefault((item_id, criterion), []).append(value)
        panel_file.parent.mkdir(parents=True, exist_ok=True)
        with panel_file.open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(["item_id", "annotator", "criterion", "value"])
            for (item_id, criterion), values in means.items():
                writer.writerow([item_id, "panel", criterion, repr(round(sum(values) / len(values), 6))])
        return len(means)
    con.executemany(
        "INSERT OR REPLACE INTO human_labels (subject_kind, subject_id, criterion, annotator, value, label, source_file) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    return len(rows)
