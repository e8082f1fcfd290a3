"""Jurors without a valid answer in a run, said as such beside every statistic and plot.

A juror whose every answer in a run was invalid, a refusal or an error (a real judge that never
wrote the rubric's format; a model whose endpoint failed throughout) gives no score, so every
statistic leaves it out: jury-level figures are over the jurors that answered, juror-level
tables have no row for it. Left at that, it would look like a juror that was never asked.
Every recorded statistic over a run therefore carries ``without_valid_answers`` (one entry per
such juror, with its answers counted by outcome), and the CLI's tables, the plots' captions and
the viewer print :func:`no_valid_answers_note` from it. Nothing here imports numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

# Per juror of the run's panel: its calls in the run (made or reused) by outcome, kept where it
# has no valid judgment in them. Aggregates over few groups: they do not grow with the run beyond
# the join of its calls.
_COUNTS = """
WITH valid AS (
    SELECT j.juror_key FROM pointwise_judgments j JOIN run_calls rc USING (call_key)
    WHERE rc.run_id = $run AND j.status = 'valid'
    UNION ALL
    SELECT j.juror_key FROM pairwise_judgments j JOIN run_calls rc USING (call_key)
    WHERE rc.run_id = $run AND j.status = 'valid'
), n_valid AS (
    SELECT juror_key, count(*) AS n FROM valid GROUP BY juror_key
), outcomes AS (
    SELECT c.juror_key, count(*) AS n_calls,
           count(*) FILTER (WHERE c.status = 'invalid') AS n_invalid,
           count(*) FILTER (WHERE c.status = 'refusal') AS n_refusal,
           count(*) FILTER (WHERE c.status = 'error') AS n_error
    FROM calls c JOIN run_calls rc USING (call_key) WHERE rc.run_id = $run GROUP BY c.juror_key
)
SELECT rj.name, coalesce(o.n_calls, 0), coalesce(o.n_invalid, 0), coalesce(o.n_refusal, 0), coalesce(o.n_error, 0)
FROM run_jurors rj LEFT JOIN n_valid v USING (juror_key) LEFT JOIN outcomes o USING (juror_key)
WHERE rj.run_id = $run AND v.n IS NULL AND list_contains($jurors, rj.juror_key)
ORDER BY rj.position, rj.name
"""
# Whether a juror has a valid judgment in the run, cheaply: a few of its valid judgments under the
# run's rubric are looked up among the run's calls, the scan stopping at the first found. Only a
# juror not found so (silent, or whose first valid judgments all belong to other runs) is
# counted by the full query above, which joins every call of the run.
_PROBE = """
SELECT 1 FROM run_calls rc WHERE rc.run_id = $run AND rc.call_key IN (
    SELECT call_key FROM {table} WHERE juror_key = $juror AND rubric_hash = $rubric AND status = 'valid' LIMIT 1000
) LIMIT 1
"""


def jurors_without_valid_answers(con: Connection, run_id: str) -> list[dict[str, object]]:
    """The jurors of run ``run_id``'s panel with no valid judgment in it, in the jury's order, each
    with its calls in the run counted by outcome: ``calls``, ``invalid`` (answered, not in the
    rubric's format), ``refusal`` and ``error`` (no answer)."""
    found = con.execute(
        "SELECT rj.juror_key, r.rubric_hash FROM run_jurors rj JOIN runs r USING (run_id) WHERE rj.run_id = ?",
        [run_id],
    ).fetchall()
    unsure = [
        str(key)
        for key, rubric in found
        if not any(
            con.execute(_PROBE.format(table=table), {"run": run_id, "juror": key, "rubric": rubric}).fetchall()
            for table in ("pointwise_judgments", "pairwise_judgments")
        )
    ]
    if not unsure:
        return []
    rows = con.execute(_COUNTS, {"run": run_id, "jurors": unsure}).fetchall()
    return [
        {"run": run_id, "juror": name, "calls": n, "invalid": invalid, "refusal": refusal, "error": error}
        for name, n, invalid, refusal, error in rows
    ]


def _counted(entry: dict[str, Any]) -> str:
    if not entry["calls"]:
        return "no calls in the run"
    parts = [f"{entry['invalid']} invalid", f"{entry['refusal']} refused"]
    if entry["error"]:
        parts.append(f"{entry['error']} in error")
    answered = entry["calls"] - entry["invalid"] - entry["refusal"] - entry["error"]
    if answered:  # answered in the format, yet no criterion's score was valid
        parts.append(f"{answered} without a valid score")
    return f"{entry['calls']} calls: " + ", ".join(parts)


def silent_label(name: str, silent: bool) -> str:
    """A row's name in a table, with '(no valid answers)' when ``silent``: every table that keeps
    a row for such a juror or model labels it the same way."""
    return f"{name} (no valid answers)" if silent else name


def named_jurors(entries: list[dict[str, Any]], *, runs: bool = False) -> str:
    """'a (4 calls: 3 invalid, 1 refused); b (no calls in the run)': ``entries`` with their counts
    (and with ``runs``, each one's run: 'a in run r (...)')."""
    return "; ".join(e["juror"] + (f" in run {e['run']}" if runs else "") + f" ({_counted(e)})" for e in entries)


def no_valid_answers_note(result: dict[str, Any]) -> str | None:
    """One sentence naming the jurors a recorded result had no valid answer from (None if none):
    they are left out of every figure of it."""
    entries = result.get("without_valid_answers") or []
    if not entries:
        return None
    named = named_jurors(entries, runs=True)
    which = "it gave no score and is" if len(entries) == 1 else "they gave no score and are"
    return f"no valid answers from {named}: {which} left out of every figure here."
