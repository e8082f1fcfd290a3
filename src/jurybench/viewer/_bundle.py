"""``jurybench report bundle``: runs as one folder (or zip) that opens offline and holds what a
reader needs to check them: the HTML report, each run's subjects with the jury's and every
juror's answers as a page and as CSV, and the raw calls (the messages sent, the text answered)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store import StoreRef

README = """jurybench report bundle: {runs}

index.html          start here: the runs, and links to everything below
report.html         the report (jury, jurors, figures with intervals, statistics, calibration)
<run>/subjects.html every subject with the jury's score and each juror's answers
<run>/subjects.csv  the subjects as imported (ids, prompts, responses, references, models)
<run>/jury.csv      the jury's score per subject and dimension (the run's rule)
<run>/jurors.csv    each juror's score per subject and dimension (mean over its samples)
<run>/calls.jsonl   every call: the messages sent, the text answered, its status and reason

Made by jurybench from {store}. Everything opens offline.
"""


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "run"


def _frame(con: Connection, sql: str, args: list[object]) -> Any:
    return con.execute(sql, args).df()


def _subjects(con: Connection, run: str, pairwise: bool) -> Any:
    if pairwise:
        return _frame(
            con,
            "SELECT p.pair_id, p.item_a, p.item_b, a.prompt, a.response AS response_a, b.response AS response_b, "
            "a.model AS model_a, b.model AS model_b, p.dataset FROM pairs p JOIN items a ON a.item_id = p.item_a "
            "JOIN items b ON b.item_id = p.item_b WHERE p.pair_id IN (SELECT subject_id FROM run_subjects "
            "WHERE run_id = ?) ORDER BY p.pair_id",
            [run],
        )
    return _frame(
        con,
        "SELECT item_id, prompt, response, reference, model, language, dataset, metadata FROM items "
        "WHERE item_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?) ORDER BY item_id",
        [run],
    )


def _transcripts(con: Connection, subjects: Any, pairwise: bool) -> dict[str, str]:
    """Each conversation among the subjects' items as the judges read it whole (rubric/_transcript.py)."""
    from jurybench.rubric import render_transcript
    from jurybench.store import load_messages

    ids = [str(v) for c in (("item_a", "item_b") if pairwise else ("item_id",)) for v in subjects[c].tolist()]
    return {item: render_transcript(messages)[0] for item, messages in load_messages(con, ids).items()}


def _page(
    run: str, rubric: Any, subjects: Any, jury: Any, jurors: Any, conversations: dict[str, str] | None = None
) -> str:
    """The subjects as one HTML table: text (a conversation: its whole transcript), the jury's
    score per dimension, each juror's."""
    conversations = conversations or {}
    key = rubric.subject_column
    dim = rubric.dimension_column
    jury_score = {(str(r[key]), str(r[dim])): r["jury_score"] for r in jury.to_dict(orient="records")}
    said: dict[str, list[str]] = {}
    for r in jurors.to_dict(orient="records"):
        score = r.get("juror_score")
        value = "—" if score is None or score != score else f"{score:g}"
        said.setdefault(str(r[key]), []).append(
            f"{html.escape(str(r.get('juror')))} · {html.escape(str(r[dim]))}: {value}"
        )
    dims = list(rubric.dimensions)
    head = "".join(f"<th>{html.escape(d)}</th>" for d in dims)
    rows = []
    for record in subjects.to_dict(orient="records"):
        sid = str(record[key])
        text_fields = ("prompt", "response_a", "response_b") if rubric.pairwise else ("prompt", "response", "reference")
        texts = "".join(
            f"<details><summary>{field}</summary><pre>{html.escape(str(record.get(field) or ''))}</pre></details>"
            for field in text_fields
            if record.get(field)
        )
        for side, item in (("a", record.get("item_a")), ("b", record.get("item_b")), ("", record.get("item_id"))):
            if item is not None and str(item) in conversations:
                texts += (
                    f"<details><summary>conversation{' ' + side.upper() if side else ''}</summary>"
                    f"<pre class='conversation'>{html.escape(conversations[str(item)])}</pre></details>"
                )
        scores = ""
        for d in dims:
            mean = jury_score.get((sid, d))
            scores += f"<td class='num'>{'—' if mean is None or mean != mean else f'{mean:.2f}'}</td>"
        answers = "<br>".join(said.get(sid, []))
        rows.append(
            f"<tr><td class='mono'>{html.escape(sid)}</td><td>{texts}</td>{scores}<td class='small'>{answers}</td></tr>"
        )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>"
        + html.escape(f"{run}: subjects")
        + "</title><style>body{font-family:system-ui,sans-serif;margin:24px;max-width:1240px}"
        "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e5e7eb;padding:6px;"
        "vertical-align:top;text-align:left}pre{white-space:pre-wrap;margin:4px 0}.num{text-align:right}"
        ".mono{font-family:monospace}.small{font-size:12px;color:#374151}</style></head><body>"
        f"<p><a href='../index.html'>index</a> · <a href='../report.html'>report</a></p>"
        f"<h1>{html.escape(run)}: {len(rows)} subjects</h1><p>Rubric {html.escape(rubric.name)}@"
        f"{html.escape(rubric.version)}; the jury's score by the run's rule, and each juror's (mean over its samples).</p>"
        f"<table><thead><tr><th>subject</th><th>text</th>{head}<th>jurors</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></body></html>"
    )


def report_bundle(store: StoreRef, runs: list[str], out: Path, *, zipped: bool = False) -> Path:
    """Write the bundle to the folder ``out`` (or ``out``.zip with ``zipped``); nothing is left
    behind when a run is missing, and an existing bundle is replaced whole."""
    from jurybench.annotations import run_rubric
    from jurybench.errors import JurybenchError
    from jurybench.store import reading
    from jurybench.viewer._report import report_html

    if not runs:
        raise JurybenchError("report bundle needs at least one --run.")
    target = out.with_suffix(".zip") if zipped else out
    if out.exists() and not out.is_dir():
        raise JurybenchError(f"{out} exists and is not a folder.", hint="Name a new folder with --out.")
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        report_html(store, runs, staging / "report.html")
        links = []
        with reading(store) as con:
            for run in runs:
                rubric = run_rubric(con, run)
                folder = staging / _safe(run)
                folder.mkdir()
                subjects = _subjects(con, run, rubric.pairwise)
                jury = _frame(con, f"SELECT * FROM {rubric.jury_view} WHERE run_id = ? ORDER BY ALL", [run])
                jurors = _frame(con, f"SELECT * FROM {rubric.juror_view} WHERE run_id = ? ORDER BY ALL", [run])
                calls = con.execute(
                    "SELECT c.subject_id, j.name AS juror, c.presented_order AS shown_order, c.sample_index, c.status, "
                    "c.reason, c.messages, c.response_text, c.cost_usd FROM calls c JOIN run_calls rc USING (call_key) "
                    "LEFT JOIN jurors j USING (juror_key) WHERE rc.run_id = ? ORDER BY c.subject_id, j.name, "
                    "c.presented_order, c.sample_index",
                    [run],
                ).fetchall()
                subjects.to_csv(folder / "subjects.csv", index=False)
                jury.to_csv(folder / "jury.csv", index=False)
                jurors.to_csv(folder / "jurors.csv", index=False)
                columns = (
                    "subject_id",
                    "juror",
                    "shown_order",
                    "sample_index",
                    "status",
                    "reason",
                    "messages",
                    "response_text",
                    "cost_usd",
                )
                with (folder / "calls.jsonl").open("w", encoding="utf-8") as f:
                    for row in calls:
                        record = dict(zip(columns, row, strict=True))
                        record["messages"] = json.loads(record["messages"]) if record["messages"] else None
                        f.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
                conversations = _transcripts(con, subjects, rubric.pairwise)
                (folder / "subjects.html").write_text(
                    _page(run, rubric, subjects, jury, jurors, conversations), encoding="utf-8"
                )
                links.append(
                    f"<li><strong>{html.escape(run)}</strong> ({html.escape(rubric.name)}, {len(subjects)} subjects, "
                    f"{len(calls)} calls): <a href='{_safe(run)}/subjects.html'>subjects and answers</a> · "
                    f"<a href='{_safe(run)}/subjects.csv'>subjects.csv</a> · <a href='{_safe(run)}/jury.csv'>jury.csv</a> · "
                    f"<a href='{_safe(run)}/jurors.csv'>jurors.csv</a> · <a href='{_safe(run)}/calls.jsonl'>calls.jsonl</a></li>"
                )
        (staging / "index.html").write_text(
            "<!doctype html><html><head><meta charset='utf-8'><title>jurybench bundle</title></head>"
            "<body style='font-family:system-ui,sans-serif;margin:24px'><h1>jurybench bundle</h1>"
            "<p><a href='report.html'>The report</a>: jury, jurors, figures with intervals, statistics.</p><ul>"
            + "".join(links)
            + "</ul></body></html>",
            encoding="utf-8",
        )
        (staging / "README.txt").write_text(README.format(runs=", ".join(runs), store=store), encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if zipped:
        made = shutil.make_archive(str(staging), "zip", root_dir=staging)
        shutil.rmtree(staging)
        Path(made).replace(target)
        return target
    shutil.rmtree(out, ignore_errors=True)
    staging.replace(out)
    return out
