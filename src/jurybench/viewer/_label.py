"""Rate by hand: the label form on an item's or pair's page, saving it as human labels with
the same validation as ``annotations import``, and the label queue (the run's subjects
without a human label, those the jurors disagree on most first; or, for a second opinion,
the labelled subjects the run's calibration misses most that this annotator has not labelled).

Labels are blind by default: until the annotator has saved a label of the subject, its page
shows neither the jury's scores, nor any juror's answer, nor other annotators' labels, so the
labels that ``agreement`` and ``calibrate`` compare with the jury are not anchored to it
(``view --annotate --show-jury`` opts in). Each label records whether its annotator saw the
jury (``human_labels.saw_jury``).

Blind holds on every page while labelling, not only the form: the run page lists subjects
without scores and finds them by text and labels only; the runs list, disagreements, compare,
statistics and calibrations (every page with a jury figure) say they are hidden. Who is
labelling is known from a cookie the server signs when a label is saved
(``jurybench_annotator``): a subject's page is shown whole only to the annotator who labelled
it, whatever ``?annotator=`` says (the query only fills the form's name), and a label saved
from a browser that was shown a subject's jury (its cookie's annotator had labelled it) records
``saw_jury = true`` whatever name it is saved under.

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
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.rubric import AnyRubric
    from jurybench.store import Row, StoreRef

QUEUE_FILTER = {"human": "without", "sort": "spread"}  # unlabelled, widest juror spread first
QUEUES = ("spread", "residual", "sample")
ANNOTATOR_COOKIE = "jurybench_annotator"
MAX_NOTE = 2000
MAX_ANNOTATOR = 100


@dataclass(frozen=True)
class Annotating:
    """Whether the pages take labels, and the forms' token."""

    enabled: bool = False
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    show_jury: bool = False  # --show-jury: the form shows the jury's answers (recorded with each label)
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)  # signs the annotator cookie

    @property
    def blind(self) -> bool:
        """Labelling blind: every page hides the jury (but a subject's page from who labelled it)."""
        return self.enabled and not self.show_jury

    def sign(self, annotator: str) -> str:
        """The annotator cookie's value: the name (base64url) and this server's HMAC of it."""
        import base64
        import hashlib

        name = base64.urlsafe_b64encode(annotator.encode()).decode().rstrip("=")
        mac = hmac.new(self.secret.encode(), annotator.encode(), hashlib.sha256).hexdigest()[:40]
        return f"{name}.{mac}"

    def annotator_of(self, cookie: str | None) -> str:
        """The annotator a cookie made by :meth:`sign` names ("" for none, or a forged one)."""
        import base64
        import binascii

        if not cookie or "." not in cookie:
            return ""
        name, _, _mac = cookie.partition(".")
        try:
            annotator = base64.urlsafe_b64decode(name + "=" * (-len(name) % 4)).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return ""
        return annotator if hmac.compare_digest(self.sign(annotator), cookie) else ""

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
    """One field per criterion the label form asks for: its name, its description, its choices
    (the scale's points, A/B/tie, or a classification's labels: the rubric kind says) and each
    choice's anchor text, with the key that picks it (1-9 in order; a, b, t for A, B, tie)."""
    fields = []
    for dim in rubric.dimensions:
        description, anchors = rubric.label_guide(dim)
        choices = rubric.human_choices(dim)
        keys = _choice_keys(choices)
        fields.append(
            {
                "name": dim,
                "description": description,
                "choices": [
                    {"value": c, "anchor": anchors.get(c, ""), "key": k} for c, k in zip(choices, keys, strict=True)
                ],
            }
        )
    return fields


def _choice_keys(choices: list[str]) -> list[str]:
    """The key that picks each choice: A, B and tie by their letters, otherwise 1, 2, ... in
    order (empty past the ninth)."""
    letters = {"A": "a", "B": "b", "tie": "t"}
    if all(c in letters for c in choices):
        return [letters[c] for c in choices]
    return [str(i + 1) if i < 9 else "" for i in range(len(choices))]


def labelled_by(con: Connection, subject_id: str, annotator: str) -> bool:
    """Whether ``annotator`` has a label of the subject (its page is then shown whole)."""
    if not annotator:
        return False
    found = con.execute(
        "SELECT 1 FROM human_labels WHERE subject_id = ? AND annotator = ? LIMIT 1", [subject_id, annotator]
    ).fetchall()
    return bool(found)


def save(
    store: StoreRef,
    run_id: str,
    subject_id: str,
    form: dict[str, str],
    *,
    show_jury: bool = False,
    shown_as: str = "",
) -> int:
    """The form's labels of one subject, validated as ``annotations import`` validates a file and
    written in one transaction; how many were stored. ``form``: ``annotator``, ``note``,
    ``replace`` and one ``value:<criterion>`` per criterion (blank: not labelled). Each label
    records whether the annotator saw the jury: with ``show_jury``, when the annotator had
    labelled the subject before, or when ``shown_as`` (the annotator this browser's cookie
    names) had: the page was then shown whole, whatever name the label is saved under."""
    from jurybench.annotations import run_rubric
    from jurybench.imports import import_annotation_rows
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
        row: Row = {rubric.subject_column: subject_id, "annotator": annotator, **values}
        result = import_annotation_rows(
            con,
            [(1, row)],
            rubric,
            source="label form",
            layout="wide-criterion",
            replace=form.get("replace") == "on",
            note=note,
            saw_jury=show_jury or labelled_by(con, subject_id, annotator) or labelled_by(con, subject_id, shown_as),
        )
    return result.inserted + result.replaced


def queue(con: Connection, run: dict[str, object], by: str, annotator: str) -> tuple[str | None, int]:
    """The queue's next subject and how many are left in it.

    ``spread``: the run's subjects without a human label, the widest juror spread first (what a
    calibration needs most: labels where the jurors cannot settle it). ``residual``: subjects
    with human labels, by the largest gap between the newest calibration applied to the run and
    the mean human label on any criterion, leaving out those ``annotator`` labelled (a second
    opinion where a label may be wrong, or the calibration is). ``sample``: the subjects of the
    run's newest label sample (``annotations sample``) that ``annotator`` has not labelled, the
    likeliest drawn first (an active sample's most uncertain): the labels ``stats ppi`` uses."""
    from jurybench.viewer._find import Filter, find

    if by not in QUEUES:
        raise JurybenchError(f"label queue: by={by!r} is not one of {', '.join(QUEUES)}.")
    if by == "spread":
        found = find(con, run, Filter.parse(QUEUE_FILTER), limit=1)
        return (found["rows"][0]["id"] if found["rows"] else None), int(found["total"])
    if by == "sample":
        return _sample_queue(con, run, annotator)
    kind = "pair" if run["mode"] == "pairwise" else "item"
    newest = applied_calibration(con, str(run["run_id"]))
    if newest is None:
        raise JurybenchError(
            f"run '{run['run_id']}' has no calibration applied, so no residuals to queue by.",
            hint=f"Fit one (jurybench calibrate --run {run['run_id']}) and apply it "
            f"(jurybench calibrate apply), or use the disagreement queue.",
        )
    rows = con.execute(
        """WITH h AS (SELECT subject_id, criterion, avg(value) AS human FROM human_labels
                      WHERE subject_kind = $kind AND value IS NOT NULL GROUP BY ALL),
                mine AS (SELECT DISTINCT subject_id FROM human_labels WHERE subject_kind = $kind AND annotator = $who)
           SELECT c.subject_id, max(abs(c.score - h.human)) AS gap, count(*) OVER () AS n
           FROM calibrated_scores c JOIN h ON h.subject_id = c.subject_id AND h.criterion = c.criterion
           WHERE c.run_id = $run AND c.calibration_id = $cal AND c.subject_id NOT IN (SELECT subject_id FROM mine)
           GROUP BY c.subject_id ORDER BY gap DESC, c.subject_id LIMIT 1""",
        {"kind": kind, "who": annotator, "run": run["run_id"], "cal": newest},
    ).fetchall()
    return (rows[0][0], int(rows[0][2])) if rows else (None, 0)


def applied_calibration(con: Connection, run_id: str) -> str | None:
    """The newest calibration applied to the run (its calibrated_scores): the second-opinion
    queue's residuals need one; a calibration only fitted on the run gives none."""
    rows = con.execute(
        "SELECT calibration_id FROM calibrated_scores WHERE run_id = ? ORDER BY created_at DESC LIMIT 1", [run_id]
    ).fetchall()
    return str(rows[0][0]) if rows else None


def _sample_queue(con: Connection, run: dict[str, object], annotator: str) -> tuple[str | None, int]:
    from jurybench.annotations import newest_sample

    newest = newest_sample(con, run["run_id"])
    if newest is None:
        raise JurybenchError(
            f"run '{run['run_id']}' has no label sample to queue.",
            hint=f"Draw one: jurybench annotations sample --run {run['run_id']} --n N.",
        )
    rows = con.execute(
        """SELECT s.subject_id, count(*) OVER () FROM label_samples s
           WHERE s.sample = ? AND s.subject_id NOT IN (SELECT subject_id FROM human_labels WHERE annotator = ?)
           ORDER BY s.probability DESC, s.subject_id LIMIT 1""",
        [newest, annotator],
    ).fetchall()
    return (rows[0][0], int(rows[0][1])) if rows else (None, 0)


def has_sample(con: Connection, run_id: str) -> bool:
    """Whether the run has a label sample (its page then offers the sample's queue)."""
    return bool(con.execute("SELECT 1 FROM label_samples WHERE run_id = ? LIMIT 1", [run_id]).fetchall())


def sample_progress(con: Connection, run: dict[str, object], annotator: str) -> dict[str, object]:
    """The run's newest label sample: its name, how many subjects it drew, how many of them have
    a human label (anyone's) and how many ``annotator`` labelled (the sample queue's end page)."""
    from jurybench.annotations import newest_sample

    newest = newest_sample(con, run["run_id"])
    if newest is None:
        return {"sample": None, "drawn": 0, "labelled": 0, "yours": 0}
    drawn, labelled, yours = con.execute(
        """SELECT count(*),
                  count(*) FILTER (WHERE s.subject_id IN (SELECT subject_id FROM human_labels)),
                  count(*) FILTER (WHERE s.subject_id IN (SELECT subject_id FROM human_labels WHERE annotator = ?))
           FROM label_samples s WHERE s.sample = ? AND s.run_id = ?""",
        [annotator, newest, run["run_id"]],
    ).fetchone() or (0, 0, 0)
    return {"sample": newest, "drawn": int(drawn), "labelled": int(labelled), "yours": int(yours)}
