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
