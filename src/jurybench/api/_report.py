"""Reports over stored judgments from Python: a preference run against the humans, a
classification run's answers. Declared once: the command line (``report preference``,
``report classification``), a study step and the HTTP bodies derive from these."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from jurybench.declare import NAME_HTTP, param, python_signature
from jurybench.errors import user_facing

if TYPE_CHECKING:
    import pandas as pd

    from jurybench.annotations import PreferenceReport
    from jurybench.api._store import StoreLike

PreferenceRun = Annotated[str, param("Run id of a preference (A/B) run.", http=NAME_HTTP)]
OneAnnotator = Annotated[
    str | None,
    param("Compare with this annotator only (default: human majority).", http={"max_length": 256}),
]
ClassificationRun = Annotated[str, param("Run id of a classification run.", http=NAME_HTTP)]


@user_facing
def preference_report(
    store: StoreLike | None, run: PreferenceRun, *, annotator: OneAnnotator = None
) -> PreferenceReport:
    """Each juror's and the jury's verdicts on a preference run against the humans' (their
    majority, or one ``annotator``), in the order shown and over both orders, with order
    consistency; ``as_dict()`` gives it as JSON takes it."""
    from jurybench.annotations import preference_accuracy
    from jurybench.store import reading

    with reading(store) as con:
        return preference_accuracy(con, run, annotator=annotator)


@user_facing
def classification_answers(store: StoreLike | None, run: ClassificationRun) -> pd.DataFrame:
    """A classification run's answers, one row per juror and language: how many, named a label
    as written, only after normalisation, or invalid by why (no label, empty, unreadable,
    refusal)."""
    import pandas as pd

    from jurybench.annotations import answer_breakdown
    from jurybench.store import reading

    with reading(store) as con:
        rows = answer_breakdown(con, run)
    columns = ["juror", "language", "answers", "as_written", "normalised", "no_label", "empty", "unreadable", "refusal"]
    return pd.DataFrame(rows, columns=columns)


preference_report.__signature__ = python_signature(preference_report)  # type: ignore[attr-defined]
classification_answers.__signature__ = python_signature(classification_answers)  # type: ignore[attr-defined]
