"""What a classification run's answers were: per juror and language, the answers that named a
label as written, those that named one only after normalisation (docs/rubrics.md: case, quotes,
punctuation, a list marker, a "label:" prefix), and the invalid ones by why (no label matched,
an empty answer, an answer that could not be read, a refusal). Each stored answer is read again
with the rubric's own matching, the rule the run used."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

KINDS = ("as_written", "normalised", "no_label", "empty", "unreadable", "refusal")


def answer_breakdown(con: Connection, run_id: str) -> list[dict[str, object]]:
    """One row per juror and language: answers, then each of ``KINDS`` counted."""
    from jurybench.annotations._data import run_rubric
    from jurybench.rubric import ClassificationRubric, match_label

    rubric = run_rubric(con, run_id)
    if not isinstance(rubric, ClassificationRubric):  # the labels' report: a label matched as written, ...
        raise JurybenchError(f"run '{run_id}' used a {rubric.kind} rubric; this report is for classification runs.")
    rows = con.execute(
        """SELECT coalesce(rj.name, ju.name) AS juror, i.language, c.response_text, j.status, j.reason
           FROM pointwise_judgments j JOIN run_calls rc USING (call_key) JOIN calls c USING (call_key)
           JOIN jurors ju ON ju.juror_key = j.juror_key
           LEFT JOIN run_jurors rj ON rj.run_id = rc.run_id AND rj.juror_key = j.juror_key
           JOIN items i ON i.item_id = j.item_id
           WHERE rc.run_id = ?""",
        [run_id],
    ).fetchall()
    table: dict[tuple[str, str], dict[str, Any]] = {}
    for juror, language, text, status, reason in rows:
        row = table.setdefault(
            (str(juror), str(language or "")),
            {"juror": str(juror), "language": language, "answers": 0, **dict.fromkeys(KINDS, 0)},
        )
        row["answers"] += 1
        if status == "refusal":
            row["refusal"] += 1
        elif status == "valid":
            found = match_label(rubric, text or "", language)
            row["as_written" if found.as_written else "normalised"] += 1
        elif reason == "empty answer" or not (text or "").strip():
            row["empty"] += 1
        elif str(reason or "").startswith("label: ") and "is not one of" in str(reason):
            row["no_label"] += 1
        else:
            row["unreadable"] += 1
    return [table[key] for key in sorted(table)]
