"""Which human labels produced the rubric a run was judged with (``label_uses``, written by
``jurybench align``): agreement, calibration and PPI leave them out of that run's figures, so a
gain is never measured on the labels that made it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


@dataclass(frozen=True)
class UsedLabels:
    """The (subject, criterion) pairs whose labels made run's rubric, and the alignments that used them."""

    pairs: frozenset[tuple[str, str]]
    alignments: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def used(self, subject_id: str, criterion: str) -> bool:
        return (subject_id, criterion) in self.pairs

    def note(self, left_out: int, what: str = "labels") -> str:
        return (
            f"{left_out} {what} left out: they aligned the rubric this run was judged with (alignment "
            f"{', '.join(self.alignments)}); a figure measured on them would count them twice"
        )


def used_labels(con: Connection, run_id: str) -> UsedLabels:
    """The labels that aligned ``run_id``'s rubric (none for a rubric no alignment made)."""
    rows = con.execute(
        "SELECT u.subject_id, u.criterion, u.alignment_id FROM label_uses u JOIN runs r ON r.rubric_hash = "
        "u.aligned_hash WHERE r.run_id = ? ORDER BY ALL",
        [run_id],
    ).fetchall()
    return UsedLabels(frozenset((r[0], r[1]) for r in rows), tuple(sorted({r[2] for r in rows})))


def refuse_all_used(run_id: str, criterion: str, uses: UsedLabels) -> None:
    """Every label of ``criterion`` on the run aligned its rubric: a figure would rest only on them."""
    from jurybench.errors import JurybenchError

    raise JurybenchError(
        f"every label of '{criterion}' on run '{run_id}' aligned the rubric it was judged with (alignment "
        f"{', '.join(uses.alignments)}); measured on them, the aligned juror's gain would be counted twice.",
        hint="Label other subjects of the run (jurybench annotations sample) and measure on those.",
    )


@dataclass(frozen=True)
class FittedOn:
    """A calibration that shapes a run's scores, and the (subject, criterion) labels it was fitted
    on (its file's ``labels_used``; None when the file does not say, fitted before it was
    recorded: then every label may have been used)."""

    calibration_id: str
    name: str
    pairs: frozenset[tuple[str, str]] | None

    def used(self, subject_id: str, criterion: str) -> bool:
        return self.pairs is None or (subject_id, criterion) in self.pairs

    def why(self, n: int, what: str = "labels") -> str:
        if self.pairs is None:
            return (
                f"calibration '{self.name}' does not record which labels it was fitted on (fitted before "
                f"jurybench recorded them), so any of the {n} {what} may have fitted it"
            )
        return f"{n} {what} fitted calibration '{self.name}'"


def fitted_on(body: str | None) -> frozenset[tuple[str, str]] | None:
    """The labels a calibration file says it was fitted on (``labels_used``), or None."""
    import json

    try:
        used = json.loads(body or "{}").get("labels_used")
    except (ValueError, AttributeError):
        return None
    if not isinstance(used, dict) or not isinstance(used.get("criteria"), dict):
        return None
    return frozenset((str(s), str(c)) for c, ids in used["criteria"].items() for s in ids)


def applied_calibration(con: Connection, run_id: str) -> FittedOn | None:
    """The calibration applied to the run last (``calibrate apply``), if any."""
    row = con.execute(
        "SELECT s.calibration_id, k.name, k.body FROM calibrated_scores s JOIN calibrations k USING (calibration_id) "
        "WHERE s.run_id = ? GROUP BY ALL ORDER BY max(s.created_at) DESC, 1 LIMIT 1",
        [run_id],
    ).fetchone()
    return None if row is None else FittedOn(str(row[0]), str(row[1]), fitted_on(row[2]))


def jury_calibration(con: Connection, run_id: str) -> FittedOn | None:
    """The calibration the run's jury rule scores with (aggregation 'calibrated'), if any."""
    row = con.execute(
        "SELECT k.calibration_id, k.name, k.body FROM runs r JOIN juries ju ON ju.jury_id = r.jury_id "
        "JOIN calibrations k ON k.calibration_id = ju.calibration_id WHERE r.run_id = ? AND ju.aggregation = 'calibrated'",
        [run_id],
    ).fetchone()
    return None if row is None else FittedOn(str(row[0]), str(row[1]), fitted_on(row[2]))
