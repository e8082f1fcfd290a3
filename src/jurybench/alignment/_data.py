"""What an alignment starts from: the run's rubric, the juror to align, and the labelled subjects
with the humans' mean, the juror's own answer and the prompt group of each."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from duckdb import DuckDBPyConnection as Connection

    from jurybench.jurors import JurorSpec
    from jurybench.rubric import AnyRubric


@dataclass(frozen=True)
class Labelled:
    """One labelled subject: its text, the humans' mean label, the juror's answer in the run
    (None: no valid answer), and its prompt group."""

    subject_id: str
    prompt: str
    response: str
    human: float
    original: float | None
    group: str


@dataclass(frozen=True)
class AlignmentData:
    run_id: str
    rubric: AnyRubric
    juror: JurorSpec
    juror_name: str
    criterion: str
    subjects: list[Labelled]
    scale: tuple[int, int] | None  # a scored criterion's scale; None for labels
    labels: tuple[str, ...] = ()  # a classification's labels: human and original are their indices

    @property
    def measure(self) -> str:
        """What a subject's error is: ``mae`` (|score - humans' mean|) or ``error_rate`` (the
        label is not the humans' plurality; the agreement is the accuracy)."""
        return "error_rate" if self.labels else "mae"

    def error(self, answers: np.ndarray, human: np.ndarray) -> np.ndarray:
        """Each subject's error of ``answers`` against ``human`` (NaN where there is no answer)."""
        if self.labels:
            return np.where(np.isnan(answers), np.nan, (answers != human).astype(float))
        return np.asarray(np.abs(answers - human), dtype=float)

    def shown_answer(self, human: float) -> int | str:
        """The humans' answer as a demonstration shows it: the label, or the scale's nearest point."""
        if self.labels:
            return self.labels[int(human)]
        assert self.scale is not None
        return int(min(self.scale[1], max(self.scale[0], np.floor(human + 0.5))))

    @property
    def n_groups(self) -> int:
        return len({s.group for s in self.subjects})


def run_juror(con: Connection, run_id: str, juror: str) -> tuple[JurorSpec, str]:
    """The juror to align: a juror of the run named ``juror``, or a juror string
    (MODEL[,key=value...]) that is one of the run's jurors (how to give it options the store
    does not keep, such as api_base)."""
    from jurybench.jurors import JurorSpec, parse_juror

    rows = con.execute(
        "SELECT rj.name, j.model, j.params, j.juror_key FROM run_jurors rj JOIN jurors j USING (juror_key) "
        "WHERE rj.run_id = ? ORDER BY rj.position",
        [run_id],
    ).fetchall()
    by_name = [r for r in rows if r[0] == juror]
    if len(by_name) == 1:
        name, model, params, _ = by_name[0]
        return JurorSpec(model, json.loads(params) if params else {}, name=name), name
    if len(by_name) > 1:
        raise JurybenchError(
            f"--juror {juror!r}: the run has {len(by_name)} jurors of that name.",
            hint="Give the juror's whole string (MODEL,key=value...) to say which.",
        )
    try:
        spec = parse_juror(juror)
    except JurybenchError:
        spec = None
    match = [r for r in rows if spec is not None and r[3] == spec.key]
    if spec is None or not match:
        raise JurybenchError(
            f"--juror {juror!r} is not a juror of run '{run_id}'.",
            hint=f"Its jurors: {', '.join(r[0] for r in rows) or 'none'} (a name, or the juror's whole string).",
        )
    return spec, str(match[0][0])


def alignment_data(
    con: Connection, run_id: str, juror: str, criterion: str | None, labels: str | None
) -> AlignmentData:
    """The labelled subjects of ``run_id`` on ``criterion`` (only those of the label sample
    ``labels``, when given), with the juror's answers in the run."""
    from jurybench.annotations import run_rubric

    rubric = run_rubric(con, run_id)
    classifies = rubric.categorical and not rubric.pairwise and rubric.keeps_gold
    if not rubric.scores_items and not classifies:
        raise JurybenchError(
            f"run '{run_id}' used a {rubric.kind} rubric; align works on pointwise rubrics (scores on a scale per "
            "item) and classifications (a label per item).",
            hint="Pairwise, preference and questionnaire runs are not aligned yet.",
        )
    spec, name = run_juror(con, run_id, juror)
    sample_sql = ""
    if labels is not None:
        if not con.execute("SELECT 1 FROM label_samples WHERE sample = ? LIMIT 1", [labels]).fetchall():
            known = [r[0] for r in con.execute("SELECT DISTINCT sample FROM label_samples ORDER BY 1").fetchall()]
            raise JurybenchError(
                f"--labels: no label sample {labels!r}.", hint=f"Samples: {', '.join(known) or 'none'}."
            )
        sample_sql = " AND h.subject_id IN (SELECT subject_id FROM label_samples WHERE sample = ?)"
    labelled = con.execute(
        "SELECT criterion, count(DISTINCT subject_id) FROM human_labels h WHERE subject_kind = 'item' AND "
        "(value IS NOT NULL OR label IS NOT NULL) AND subject_id IN (SELECT subject_id FROM run_subjects "
        f"WHERE run_id = ?){sample_sql} GROUP BY criterion ORDER BY criterion",
        [run_id] + ([labels] if labels is not None else []),
    ).fetchall()
    counts = {c: n for c, n in labelled if c in rubric.dimensions}
    if criterion is None:
        if len(counts) != 1:
            raise JurybenchError(
                f"run '{run_id}' has labels on {len(counts)} criteria"
                + (f" ({', '.join(f'{c}: {n}' for c, n in counts.items())})" if counts else "")
                + "; say which to align with --criterion.",
                hint="Import labels with 'jurybench annotations import'." if not counts else None,
            )
        criterion = next(iter(counts))
    if criterion not in rubric.dimensions:
        raise JurybenchError(
            f"--criterion {criterion!r} is not in rubric '{rubric.name}'.",
            hint=f"Valid: {', '.join(rubric.dimensions)}.",
        )
    args: list[object] = [run_id, criterion]
    if labels is not None:
        args.append(labels)
    if classifies:
        return _classification_data(con, run_id, rubric, spec, name, criterion, sample_sql, args)
    rows = con.execute(
        f"""SELECT h.subject_id, avg(h.value), any_value(i.prompt), any_value(i.response)
            FROM human_labels h JOIN items i ON i.item_id = h.subject_id
            WHERE h.subject_kind = 'item' AND h.value IS NOT NULL
              AND h.subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)
              AND h.criterion = ?{sample_sql}
            GROUP BY h.subject_id ORDER BY h.subject_id""",
        args,
    ).fetchall()
    answers = dict(
        con.execute(
            "SELECT item_id, juror_score FROM juror_pointwise WHERE run_id = ? AND juror_key = ? AND criterion = ? "
            "AND juror_score IS NOT NULL",
            [run_id, spec.key, criterion],
        ).fetchall()
    )
    subjects = [
        Labelled(sid, prompt or "", response or "", float(human), _number(answers.get(sid)), prompt or sid)
        for sid, human, prompt, response in rows
    ]
    return AlignmentData(run_id, rubric, spec, name, criterion, subjects, rubric.scale_for(criterion))


def _classification_data(
    con: Connection,
    run_id: str,
    rubric: AnyRubric,
    spec: JurorSpec,
    name: str,
    criterion: str,
    sample_sql: str,
    args: list[object],
) -> AlignmentData:
    """A classification's labelled subjects: the humans' plurality label (ties to the first in
    the rubric's order) and the juror's most frequent valid label over its samples, both as the
    label's index."""
    from collections import Counter

    from jurybench.annotations import plurality

    labels = tuple(rubric.human_choices(criterion))
    humans: dict[str, list[str]] = {}
    texts: dict[str, tuple[str, str]] = {}
    for sid, label, prompt, response in con.execute(
        f"""SELECT h.subject_id, h.label, i.prompt, i.response FROM human_labels h JOIN items i ON i.item_id = h.subject_id
            WHERE h.subject_kind = 'item' AND h.label IS NOT NULL
              AND h.subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)
              AND h.criterion = ?{sample_sql} ORDER BY h.subject_id, h.annotator""",
        args,
    ).fetchall():
        if label in labels:
            humans.setdefault(sid, []).append(label)
            texts[sid] = (prompt or "", response or "")
    answered: dict[str, Counter[str]] = {}
    for item, predicted in con.execute(
        "SELECT item_id, predicted FROM classification_outcomes WHERE run_id = ? AND juror_key = ? "
        "AND predicted IS NOT NULL ORDER BY item_id, sample_index",
        [run_id, spec.key],
    ).fetchall():
        answered.setdefault(item, Counter())[predicted] += 1
    subjects = []
    for sid in sorted(humans):
        target = plurality(humans[sid], labels, preference=False)
        assert target is not None  # every subject here has a label
        prompt, response = texts[sid]
        own = modal_label(answered.get(sid) or {}, labels)
        subjects.append(Labelled(sid, prompt, response, float(labels.index(target)), own, prompt or sid))
    return AlignmentData(run_id, rubric, spec, name, criterion, subjects, None, labels)


def modal_label(counts: Mapping[str, int], labels: Sequence[str]) -> float | None:
    """The index of the most frequent label in ``counts`` (a tie: the first in ``labels``'
    order), or None when nothing was counted."""
    if not counts:
        return None
    top = max(counts.values())
    return float(next(i for i, label in enumerate(labels) if counts.get(label) == top))


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None
