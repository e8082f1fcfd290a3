"""Rate by hand: the label form on an item's or pair's page, saving it as human labels with
the same validation as ``annotations import``, and the label queue (the run's subjects
without a human label, those the jurors disagree on most first).

The viewer is read-only unless annotation is on (``jurybench view --annotate``; ``serve``
behind its token). Every form carries a token the server drew at start (``csrf``): a page on
another local port can post to the server with the viewer's cookie, but cannot read a page to
learn the token."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from jurybench.rubric import AnyRubric

QUEUE_FILTER = {"human": "without", "sort": "spread"}  # unlabelled, widest juror spread first
MAX_NOTE = 2000
MAX_ANNOTATOR = 100


@dataclass(frozen=True)
class Annotating:
    """Whether the pages take labels, and the forms' token."""

    enabled: bool = False
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def check(self, given: str) -> None:
        if not self.enabled:
            raise Forbidden(
                "this viewer is read-only.", hint="Start it with 'jurybench view --annotate' to add labels."
            )
        if not hmac.compare_digest(given.encode(), self.csrf.encode()):
            raise Forbidden("the form's token is missing or stale.", hint="Reload the page and submit the form again.")


class Forbidden(JurybenchError):
    """A label form this server may not take (read-only viewer, or a form it did not serve)."""


def form_fields(rubric: AnyRubric) -> list[dict[str, Any]]:
    """One field per criterion the label form asks for: its name and its choices (the scale's
    points, A/B/tie, or a classification's labels)."""
    from jurybench.rubric import ClassificationRubric, PreferenceRubric

    out = []
    for dim in rubric.dimensions:
        if isinstance(rubric, PreferenceRubric):
            choices = ["A", "B", *(["tie"] if rubric.allow_tie else [])]
        elif isinstance(rubric, ClassificationRubric):
            choices = [lb.name for lb in rubric.labels]
        else:
            scale = rubric.scale_for(dim)
            assert scale is not None
            choices = [str(v) for v in range(int(scale[0]), int(scale[1]) + 1)]
        out.append({"name": dim, "choices": choices})
    return out


def save(store: Any, run_id: str, subject_id: str, form: dict[str, str]) -> int:
    """The form's labels of one subject, validated as ``annotations import`` validates a file and
    written in one transaction; how many were stored. ``form``: ``annotator``, ``note``,
    ``replace`` and one ``value:<criterion>`` per criterion (blank: not labelled)."""
    from jurybench.annotations import import_annotation_rows, run_rubric
    from jurybench.store import writing

    annotator = form.get("annotator", "").strip()
    if not annotator:
        raise JurybenchError("label form, field 'annotator': missing value.", hint="Give your name or initials.")
    if len(annotator) > MAX_ANNOTATOR:
        raise JurybenchError(f"label form, field 'annotator': longer than {MAX_ANNOTATOR} characters.")
    note = form.get("note", "").strip()[:MAX_NOTE] or None
    with writing(store) as con:
        rubric = run_rubric(con, run_id)
        values = {dim: form.get(f"value:{dim}", "").strip() for dim in rubric.dimensions}
        values = {dim: v for dim, v in values.items() if v}
        if not values:
            raise JurybenchError("label form: no criterion has a value.", hint="Choose a value for at least one.")
        row = {rubric.subject_column: subject_id, "annotator": annotator, **values}
        result = import_annotation_rows(con, [(1, row)], rubric, source="label form", layout="wide-criterion",
                                        replace=form.get("replace") == "on", note=note)  # fmt: skip
    return result.inserted + result.replaced
