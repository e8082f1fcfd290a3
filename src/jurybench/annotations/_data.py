"""Read a run's juror scores and the human labels of its subjects as arrays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from jurybench.errors import JurybenchError
from jurybench.rubric import AnyRubric
from jurybench.store import first_row, jury_calibration, refuse_all_used, used_labels

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray


def run_rubric(con: Connection, run_id: str) -> AnyRubric:
    import json

    from jurybench.rubric import rubric_from_data

    row = first_row(con, "SELECT ru.body FROM runs r JOIN rubrics ru USING (rubric_hash) WHERE r.run_id = ?", [run_id])
    if row is None:
        known = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 8").fetchall()]
        raise JurybenchError(f"no run '{run_id}'.", hint=f"Runs: {', '.join(known) or 'none'}.")
    return rubric_from_data(json.loads(row[0]))


@dataclass
class PointwiseData:
    """One criterion: items x jurors (mean of valid samples, NaN if none), the jury's score by
    the run's rule (NaN below quorum) and items x annotators.

    ``jurors`` are labels unique within the run; ``juror_keys`` the jurors' identities."""

    criterion: str
    items: list[str]
    jurors: list[str]
    juror_keys: list[str]
    juror_scores: NDArray[np.float64]
    annotators: list[str]
    human: NDArray[np.float64]
    jury: NDArray[np.float64]
    jurors_present: NDArray[np.float64]
    rule: dict[str, Any]
    left_out: str | None = None  # labels left out because they aligned the run's rubric (label_uses)

    @property
    def human_mean(self) -> NDArray[np.float64]:
        with np.errstate(all="ignore"):
            return np.asarray(np.nanmean(self.human, axis=1), dtype=float)

    def jury_summary(self) -> dict[str, object]:
        """The jury rule with n_jurors expected vs present and the items below quorum."""
        below = int(np.sum(self.jurors_present < self.rule["quorum"]))
        return {
            **self.rule,
            "mean_jurors_present": float(np.mean(self.jurors_present)) if len(self.items) else 0.0,
            "items_below_quorum": below,
        }


def pointwise_data(
    con: Connection, run_id: str, criteria: list[str] | None = None, *, annotators: list[str] | None = None
) -> list[PointwiseData]:
    """Per criterion, the run's items that have at least one human label (of ``annotators``, when
    given)."""
    from jurybench.jury import jurors_of_run, jury_rule

    rubric = run_rubric(con, run_id)
    if not rubric.scores_items:
        raise JurybenchError(
            f"run '{run_id}' used a {rubric.kind} rubric; this needs a pointwise run (points on a scale per item)."
        )
    wanted = criteria or rubric.dimensions
    unknown = [c for c in wanted if c not in rubric.dimensions]
    if unknown:
        raise JurybenchError(
            f"criterion {unknown[0]!r} is not in rubric '{rubric.name}'.",
            hint=f"Valid: {', '.join(rubric.dimensions)}.",
        )
    panel = jurors_of_run(con, run_id)
    rule = jury_rule(con, run_id)
    juror_rows = con.execute(
        "SELECT item_id, criterion, juror_key, juror_score FROM juror_pointwise WHERE run_id = ?", [run_id]
    ).fetchall()
    jury_rows = con.execute(
        "SELECT item_id, criterion, jury_score, n_jurors_present FROM jury_pointwise WHERE run_id = ?", [run_id]
    ).fetchall()
    human_rows = con.execute(
        """SELECT h.subject_id, h.criterion, h.annotator, h.value FROM human_labels h
           WHERE h.subject_kind = 'item' AND h.subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)""",
        [run_id],
    ).fetchall()
    if annotators is not None:
        labelled = {r[2] for r in human_rows}
        unknown = [a for a in annotators if a not in labelled]
        if unknown:
            raise JurybenchError(
                f"--annotators: {unknown[0]!r} has no labels on run '{run_id}'.",
                hint=f"Annotators: {', '.join(sorted(str(a) for a in labelled)[:12]) or 'none'}.",
            )
        human_rows = [r for r in human_rows if r[2] in annotators]
    juror_index = {seat.key: j for j, seat in enumerate(panel)}
    uses = used_labels(con, run_id)
    fitted = jury_calibration(con, run_id)  # a jury whose rule is a calibration: not measured on its own labels
    all_used: list[str] = []
    out: list[PointwiseData] = []
    for criterion in wanted:
        humans = [r for r in human_rows if r[1] == criterion]
        kept = [r for r in humans if not uses.used(r[0], criterion)]
        left_out = None
        if len(kept) < len(humans):
            if not kept:  # asked for by name: refused; else the criterion is left out, said below
                if criteria:
                    refuse_all_used(run_id, criterion, uses)
                all_used.append(criterion)
                continue
            left_out = uses.note(len(humans) - len(kept))
            humans = kept
        items = sorted({r[0] for r in humans})
        if not items:
            continue
        item_index = {item: i for i, item in enumerate(items)}
        scores = np.full((len(items), len(panel)), np.nan)
        for item, crit, key, value in juror_rows:
            if crit == criterion and item in item_index and value is not None and key in juror_index:
                scores[item_index[item], juror_index[key]] = value
        jury = np.full(len(items), np.nan)
        present = np.zeros(len(items))
        for item, crit, value, n_present in jury_rows:
            if crit == criterion and item in item_index:
                jury[item_index[item]] = np.nan if value is None else value
                present[item_index[item]] = n_present
        if fitted is not None:
            own = [i for i, item in enumerate(items) if fitted.used(item, criterion)]
            jury[own] = np.nan
            if own:
                said = f"the jury's row leaves out {fitted.why(len(own))} (its rule): measured on them it would count them twice"
                left_out = "; ".join(n for n in (left_out, said) if n)
        annotators = sorted({r[2] for r in humans})
        annotator_index = {a: k for k, a in enumerate(annotators)}
        human = np.full((len(items), len(annotators)), np.nan)
        for item, _, annotator, value in humans:
            human[item_index[item], annotator_index[annotator]] = value
        out.append(
            PointwiseData(
                criterion,
                items,
                [s.label for s in panel],
                [s.key for s in panel],
                scores,
                annotators,
                human,
                jury,
                present,
                rule,
                left_out,
            )
        )
    if not out:
        raise JurybenchError(
            f"no human labels for the items of run '{run_id}'.",
            hint="Import annotations first ('jurybench annotations import FILE --rubric ...').",
        )
    if all_used:
        if not out:
            refuse_all_used(run_id, all_used[0], uses)
        from dataclasses import replace

        said = f"left out {', '.join(all_used)}: every label of it aligned the rubric (alignment {', '.join(uses.alignments)})"
        out[0] = replace(out[0], left_out="; ".join(n for n in (out[0].left_out, said) if n))
    return out


def label_provenance(con: Connection, run_id: str, criterion: str | None = None) -> dict[str, int]:
    """How the human labels of the run's subjects (of ``criterion``, or all) were made:
    ``blind`` (the viewer's form hid the jury's answers), ``saw_jury`` (it showed them) and
    ``unknown`` (imported from a file)."""
    row = con.execute(
        """SELECT count(*) FILTER (WHERE saw_jury = false), count(*) FILTER (WHERE saw_jury = true),
                  count(*) FILTER (WHERE saw_jury IS NULL)
           FROM human_labels WHERE subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)
             AND (? IS NULL OR criterion = ?)""",
        [run_id, criterion, criterion],
    ).fetchall()[0]
    return {"blind": int(row[0]), "saw_jury": int(row[1]), "unknown": int(row[2])}
