"""What an alignment starts from: the run's rubric, the juror to align, and the labelled subjects
with the humans' mean, the juror's own answer and the prompt group of each."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
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
    scale: tuple[int, int]

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
    if not rubric.scores_items:
        raise JurybenchError(
            f"run '{run_id}' used a {rubric.kind} rubric; align works on pointwise rubrics (scores on a scale per "
            "item) so far.",
            hint="Align a pointwise run; categorical and pairwise kinds are not supported yet.",
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
        "SELECT criterion, count(DISTINCT subject_id) FROM human_labels h WHERE subject_kind = 'item' AND value IS NOT "
        f"NULL AND subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?){sample_sql} GROUP BY criterion "
        "ORDER BY criterion",
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
    scale = rubric.scale_for(criterion)
    assert scale is not None  # a pointwise criterion has a scale
    return AlignmentData(run_id, rubric, spec, name, criterion, subjects, scale)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None
