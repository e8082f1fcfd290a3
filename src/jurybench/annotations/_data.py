"""Read a run's juror scores and the human labels of its subjects as arrays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from jurybench.errors import JurybenchError
from jurybench.rubric import AnyRubric
from jurybench.store._db import first_row


def run_rubric(con: Any, run_id: str) -> AnyRubric:
    from pydantic import TypeAdapter

    from jurybench.rubric._model import Rubric

    row = first_row(con, "SELECT ru.body FROM runs r JOIN rubrics ru USING (rubric_hash) WHERE r.run_id = ?", [run_id])
    if row is None:
        known = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 8").fetchall()]
        raise JurybenchError(f"no run '{run_id}'.", hint=f"Runs: {', '.join(known) or 'none'}.")
    rubric: AnyRubric = TypeAdapter(Rubric).validate_json(row[0])
    return rubric


@dataclass
class PointwiseData:
    """One criterion: items x jurors (mean of valid samples, NaN if none) and items x annotators."""

    criterion: str
    items: list[str]
    jurors: list[str]
    juror_keys: list[str]
    juror_scores: np.ndarray[Any, np.dtype[np.float64]]
    annotators: list[str]
    human: np.ndarray[Any, np.dtype[np.float64]]

    @property
    def human_mean(self) -> np.ndarray[Any, np.dtype[np.float64]]:
        with np.errstate(all="ignore"):
            return np.asarray(np.nanmean(self.human, axis=1), dtype=float)

    @property
    def jury_mean(self) -> np.ndarray[Any, np.dtype[np.float64]]:
        with np.errstate(all="ignore"):
            return np.asarray(np.nanmean(self.juror_scores, axis=1), dtype=float)


def pointwise_data(con: Any, run_id: str, criteria: list[str] | None = None) -> list[PointwiseData]:
    """Per criterion, the run's items that have at least one human label."""
    rubric = run_rubric(con, run_id)
    if rubric.kind != "pointwise":
        raise JurybenchError(f"run '{run_id}' used a {rubric.kind} rubric; this needs a pointwise run.")
    wanted = criteria or rubric.dimensions
    unknown = [c for c in wanted if c not in rubric.dimensions]
    if unknown:
        raise JurybenchError(
            f"criterion {unknown[0]!r} is not in rubric '{rubric.name}'.",
            hint=f"Valid: {', '.join(rubric.dimensions)}.",
        )
    juror_rows = con.execute(
        """SELECT j.item_id, j.criterion, ju.name, j.juror_key, avg(j.score) FILTER (WHERE j.status = 'valid')
           FROM pointwise_judgments j JOIN run_calls rc USING (call_key) JOIN jurors ju USING (juror_key)
           WHERE rc.run_id = ? GROUP BY ALL""",
        [run_id],
    ).fetchall()
    human_rows = con.execute(
        """SELECT h.subject_id, h.criterion, h.annotator, h.value FROM human_labels h
           WHERE h.subject_kind = 'item' AND h.subject_id IN
             (SELECT DISTINCT j.item_id FROM pointwise_judgments j JOIN run_calls rc USING (call_key) WHERE rc.run_id = ?)""",
        [run_id],
    ).fetchall()
    out = []
    for criterion in wanted:
        humans = [r for r in human_rows if r[1] == criterion]
        items = sorted({r[0] for r in humans})
        if not items:
            continue
        jurors = sorted({(r[2], r[3]) for r in juror_rows if r[1] == criterion})
        item_index = {item: i for i, item in enumerate(items)}
        juror_index = {key: j for j, (_, key) in enumerate(jurors)}
        scores = np.full((len(items), len(jurors)), np.nan)
        for item, crit, _, key, value in juror_rows:
            if crit == criterion and item in item_index and value is not None:
                scores[item_index[item], juror_index[key]] = value
        annotators = sorted({r[2] for r in humans})
        annotator_index = {a: k for k, a in enumerate(annotators)}
        human = np.full((len(items), len(annotators)), np.nan)
        for item, _, annotator, value in humans:
            human[item_index[item], annotator_index[annotator]] = value
        out.append(
            PointwiseData(criterion, items, [n for n, _ in jurors], [k for _, k in jurors], scores, annotators, human)
        )
    if not out:
        raise JurybenchError(
            f"no human labels for the items of run '{run_id}'.",
            hint="Import annotations first ('jurybench annotations import FILE --rubric ...').",
        )
    return out
