"""The viewer's pages: server-rendered HTML (Jinja2, autoescaped) over a read-only store.

Everything a page needs is served from the package (one stylesheet, no script, no font, no
CDN). Item and answer texts are escaped by the templates: text that holds HTML or a script
is shown as text."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import math
import re
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from starlette.requests import Request  # resolved by FastAPI from this module's names

from jurybench.errors import JurybenchError, NotFound
from jurybench.store import as_float
from jurybench.viewer._label import Annotating

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from duckdb import DuckDBPyConnection as Connection
    from fastapi import APIRouter, FastAPI
    from fastapi.responses import HTMLResponse
    from jinja2 import Environment
    from markupsafe import Markup

    from jurybench.store import StoreRef
    from jurybench.viewer._find import Filter

ASSETS = "/assets"
HERE = Path(__file__).parent


def _num(value: object, digits: int = 4) -> str:
    """Numbers to ``digits`` significant digits, without exponent for ordinary sizes."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    try:
        x = as_float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return "–"
    if x == 0:
        return "0"
    if abs(x) >= 10**digits:
        return f"{x:,.0f}"
    if abs(x) < 1e-4:
        return f"{x:.2e}"
    return f"{x:.{digits}g}"


def _pct(value: object) -> str:
    return "–" if value is None else f"{100 * as_float(value):.1f} %"


def _usd(value: object) -> str:
    if value is None:
        return "unknown"
    from jurybench.jurors import usd

    return usd(as_float(value))


def _when(value: object) -> str:
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return "–" if value is None else str(value)


def _breakable(value: object) -> Markup:
    """A name as HTML that may wrap only between its parts: after '/', ',', '=', '_' and '.'
    (a hyphen wraps by itself), never inside a word (the runs list, issue 40)."""
    from markupsafe import Markup, escape

    parts = re.split(r"(?<=[/,=_.])", str(value))
    return Markup("<wbr>").join(escape(part) for part in parts if part)


def _when_html(value: object) -> Markup:
    """A time that wraps between its date and its clock, never inside either."""
    from markupsafe import Markup, escape

    return Markup(" ").join(Markup('<span class="nowrap">{}</span>').format(escape(p)) for p in _when(value).split(" "))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = float(seconds)
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min" if s < 7200 else f"{s / 3600:.1f} h"


def run_segment(run_id: object) -> str:
    """A run id as one path segment. Servers decode %2F to '/' before routing, so a run named
    'a/b' is written 'a~sb' ('~' itself as '~~'; run_from_segment undoes it), then quoted."""
    return quote(str(run_id).replace("~", "~~").replace("/", "~s"), safe="~")


def run_from_segment(segment: str) -> str:
    return re.sub(r"~(~|s)", lambda m: "~" if m.group(1) == "~" else "/", segment)


def environment() -> Environment:
    import jinja2

    from jurybench.stats import no_valid_answers_note

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        num=_num,
        pct=_pct,
        usd=_usd,
        when=_when,
        when_html=_when_html,
        breakable=_breakable,
        duration=_duration,
        u=lambda s: quote(str(s), safe=""),
        run_u=run_segment,
        silent_note=lambda result: no_valid_answers_note(result) if isinstance(result, dict) else None,
    )
    env.globals.update(
        labelling_blind=False,
        ASSETS=ASSETS,
        qs=lambda **kw: urlencode({k: v for k, v in kw.items() if v not in (None, "")}),
    )
    return env


def plot_of(con: Connection, row: dict[str, Any]) -> str | None:
    """The recorded statistic's plot as SVG text (cached by result id), or None when it has none."""
    from jurybench.plots import PLOT_OF_STAT, plot_caption, svg
    from jurybench.viewer._data import MEMO

    if row["name"] not in PLOT_OF_STAT:
        return None

    def make() -> str | None:
        import json

        caption = plot_caption(
            con,
            row["name"],
            row.get("run_id"),
            json.dumps(row.get("params") or {}),
            row["result_id"],
            row.get("created_at"),
        )
        try:
            return svg(row["name"], row["result"], caption=caption)
        except (KeyError, TypeError, ValueError, IndexError):  # a result of another shape: shown as a table only
            return None

    return MEMO.get(("plot", row["result_id"]), make)


def result_table(row: dict[str, Any]) -> tuple[list[str], list[list[object]]]:
    from jurybench.stats import flatten

    try:
        return flatten(row["name"], row["result"], digits=None, summary=False)
    except (KeyError, TypeError, ValueError, AttributeError):
        return [], []


def find_query(
    q: str = "",
    criterion: str = "",
    min: str = "",
    max: str = "",
    spread: str = "",
    status: str = "",
    human: str = "",
    model: str = "",
    language: str = "",
    dataset: str = "",
    sort: str = "",
) -> dict[str, str]:
    """The find form's fields as given (checked by ``Filter.parse``, which names a bad one)."""
    return {
        "q": q,
        "criterion": criterion,
        "min": min,
        "max": max,
        "spread": spread,
        "status": status,
        "human": human,
        "model": model,
        "language": language,
        "dataset": dataset,
        "sort": sort,
    }


def router(store_of: Callable[[], StoreRef], annotating: Annotating | None = None) -> APIRouter:
    """The pages as a FastAPI router over ``store_of()`` (anything ``jurybench.store.reading``
    takes); mounted at ``/`` by ``jurybench view`` and ``jurybench serve``. With ``annotating``
    enabled, item and pair pages take human labels (the store must be writable)."""
    from fastapi import APIRouter

    api = APIRouter(include_in_schema=False)
    pages = _Pages(store_of, annotating or Annotating(enabled=False))
    _asset_routes(api)
    _run_routes(api, pages)
    _label_routes(api, pages)
    _other_routes(api, pages)
    return api


class _Pages:
    """What the routes share: the templates, the store, the labelling switch, and the contexts
    of the run page and a subject's page (also shown again after a refused label)."""

    def __init__(self, store_of: Callable[[], StoreRef], annotating: Annotating) -> None:
        self.env = environment()
        self.env.globals["labelling_blind"] = annotating.blind  # every page, error pages too
        self.store_of = store_of
        self.annotating = annotating

    def page(
        self, template: str, build: Callable[[Any], dict[str, object]], title: str, status: int = 200
    ) -> HTMLResponse:
        from fastapi.responses import HTMLResponse

        from jurybench.store import reading

        start = time.perf_counter()
        try:
            with reading(self.store_of()) as con:
                context = build(con)
        except NotFound as exc:
            html = self.env.get_template("error.html").render(title="Not found", message=exc.message, hint=exc.hint)
            return HTMLResponse(html, status_code=404)
        except JurybenchError as exc:
            html = self.env.get_template("error.html").render(title="Error", message=exc.message, hint=exc.hint)
            return HTMLResponse(html, status_code=400)
        html = self.env.get_template(template).render(title=title, **context)
        response = HTMLResponse(html, status_code=status)
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Server-Timing"] = f"page;dur={1000 * (time.perf_counter() - start):.1f}"
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; script-src 'self'"
        )
        return response

    def hidden(self, what: str) -> HTMLResponse:
        """A page with jury figures, while labelling blind: it says so (403), and how to see it."""
        from fastapi.responses import HTMLResponse

        html = self.env.get_template("error.html").render(
            title="Hidden while labelling",
            message=f"{what} shows the jury's scores, which stay hidden while labelling blind.",
            hint="Browse them in a viewer without --annotate (jurybench view STORE), or start this one with "
            "--show-jury (each label then records that its annotator saw the jury).",
        )
        return HTMLResponse(html, status_code=403)

    def annotator(self, request: Request) -> str:
        """Who is labelling in this browser: the name its signed cookie carries ("" for none)."""
        from jurybench.viewer._label import ANNOTATOR_COOKIE

        return self.annotating.annotator_of(request.cookies.get(ANNOTATOR_COOKIE))

    def run_context(self, con: Connection, run_id: str, after: str, want: Filter, at: int) -> dict[str, object]:
        from jurybench.viewer import _data, _detail, _find, _label

        run = _data.run_header(con, run_id)
        if self.annotating.blind:  # the labelling flow's run page: subjects by id or text, no figure
            return {
                "run": run,
                "figures": _data.run_figures(con, run),  # its counts of calls and judgments only are shown
                "subjects": {**self.subjects(con, run, after, want, at), "criteria": []},
                "want": want,
                "choices": _find.choices(con, run),
                "annotate": True,
                "sampled": _label.has_sample(con, str(run["run_id"])),
                "calibration": _data.run_calibration(con, run),
                "second_opinions": _label.applied_calibration(con, str(run["run_id"])) is not None,
            }
        results = _data.run_results(con, run_id)
        shown = []
        for r in results[:10]:  # the newest ten results with their plots
            full = _detail.result(con, r["result_id"])
            shown.append({**full, "plot": plot_of(con, full)})
        return {
            "run": run,
            "figures": _data.run_figures(con, run),
            "jurors": _data.run_jurors(con, run),
            "agreement": _data.run_agreement(con, run),
            "leaning": _data.run_leaning(con, run),
            "subjects": self.subjects(con, run, after, want, at),
            "results": results,
            "shown": shown,
            "calibration": _data.run_calibration(con, run),
            "second_opinions": _label.applied_calibration(con, str(run["run_id"])) is not None,
            "want": want,
            "choices": _find.choices(con, run),
            "statuses": _find.STATUSES,
            "find_sorts": _find.SORTS,
            "annotate": self.annotating.enabled,
            "sampled": self.annotating.enabled and _label.has_sample(con, str(run["run_id"])),
        }

    def subjects(self, con: Connection, run: dict[str, object], after: str, want: Filter, at: int) -> dict[str, object]:
        """The run's subjects by id (paged by key), or those the filter finds (paged by position)."""
        from jurybench.viewer import _data, _find

        if not want.active:
            return {**_data.run_subjects(con, run, after=after), "found": None}
        found = _find.find(con, run, want, after=at)
        page_rows = _data.subject_rows(con, run, [r["id"] for r in found["rows"]])
        for row, hit in zip(page_rows["rows"], found["rows"], strict=True):
            row |= {"score": hit["score"], "spread": hit["spread"], "pos": hit["pos"]}
        return {**page_rows, "found": found, "next": None}

    def subject_context(
        self,
        con: Connection,
        run_id: str,
        subject_id: str,
        find: dict[str, str],
        queue: str,
        form: dict[str, str],
        *,
        saved: int = 0,
        error: JurybenchError | None = None,
        shown_as: str = "",
    ) -> dict[str, object]:
        """``shown_as``: the annotator this browser's signed cookie names (the page is shown whole
        to them once they have labelled the subject; ``form['annotator']`` only fills the form)."""
        from jurybench.viewer import _data, _detail, _find, _label
        from jurybench.viewer._find import Filter

        run = _data.run_header(con, run_id)
        queue = queue if queue in _label.QUEUES else ""
        want = Filter.parse({**find, **_label.QUEUE_FILTER} if queue == "spread" else find)
        if self.annotating.blind and queue != "spread":
            want = want.without_scores()
        shown = _detail.subject(con, run, subject_id)
        step = _find.neighbours(con, run, want, subject_id)
        label = None
        blind = False
        if self.annotating.enabled:
            from jurybench.annotations import run_rubric

            # Blind until this annotator has labelled the subject (or --show-jury).
            blind = self.annotating.blind and not _label.labelled_by(con, subject_id, shown_as)
            form = {**form, "annotator": form.get("annotator") or shown_as}

            # The spread queue is the step's own filter: its count is what is left (no second scan).
            left = (
                step["total"]
                if queue == "spread"
                else _label.queue(con, run, queue, form.get("annotator", ""))[1]
                if queue
                else None
            )
            label = {
                "csrf": self.annotating.csrf,
                "fields": _label.form_fields(run_rubric(con, run_id)),
                "form": form,
                "queue": queue,
                "left": left,
                "saved": saved,
                "error": error,
                "show_jury": self.annotating.show_jury,
            }
        if blind:  # nothing of the jury or of other annotators reaches the page, not even unrendered
            shown = {k: v for k, v in shown.items() if k not in ("jury", "orders", "humans", "calls", "answers")}
        return {"run": run, **shown, "want": want, "step": step, "label": label, "queue": queue, "blind": blind}


def _asset_routes(api: APIRouter) -> None:
    from fastapi.responses import FileResponse

    @api.get(f"{ASSETS}/viewer.css")
    def css() -> FileResponse:
        return FileResponse(HERE / "static" / "viewer.css", media_type="text/css")

    @api.get(f"{ASSETS}/keys.js")
    def keys() -> FileResponse:  # j / k follow the page's next / previous link
        return FileResponse(HERE / "static" / "keys.js", media_type="text/javascript")


def _run_routes(api: APIRouter, pages: _Pages) -> None:
    """The runs list, a run, its disagreements and a subject's page."""
    from fastapi import Depends, Query
    from fastapi.responses import HTMLResponse

    from jurybench.viewer import _data, _detail
    from jurybench.viewer._find import Filter

    finding = Depends(find_query)  # the find form's fields, on the run page and a subject's

    @api.get("/", response_class=HTMLResponse)
    def runs(dataset: str = "", rubric: str = "", status: str = "", after: str = "") -> HTMLResponse:
        return pages.page(
            "runs.html",
            lambda con: _data.runs_page(con, dataset=dataset, rubric=rubric, status=status, after=after),
            "Runs",
        )

    @api.get("/runs/{run_id}", response_class=HTMLResponse)
    def run(run_id: str, after: str = "", at: int = Query(0, ge=0), find: dict[str, str] = finding) -> HTMLResponse:
        run_id = run_from_segment(run_id)

        def build(con: Connection) -> dict[str, object]:
            want = Filter.parse(find)
            return pages.run_context(con, run_id, after, want.without_scores() if pages.annotating.blind else want, at)

        return pages.page("run.html", build, f"Run {run_id}")

    @api.get("/runs/{run_id}/disagreements", response_class=HTMLResponse)
    def disagreements(run_id: str, sort: str = "spread", after: int = Query(0, ge=0)) -> HTMLResponse:
        run_id = run_from_segment(run_id)
        if pages.annotating.blind:
            return pages.hidden("The disagreements page")

        def build(con: Connection) -> dict[str, object]:
            run = _data.run_header(con, run_id)
            return {"run": run, **_detail.disagreements(con, run, sort=sort, after=after), "sorts": _detail.SORTS}

        return pages.page("disagreements.html", build, f"Disagreements in {run_id}")

    @api.get("/runs/{run_id}/subjects/{subject_id:path}", response_class=HTMLResponse)
    def subject(
        request: Request,
        run_id: str,
        subject_id: str,
        find: dict[str, str] = finding,
        queue: str = "",
        annotator: str = "",
        saved: int = Query(0, ge=0),
    ) -> HTMLResponse:
        run_id = run_from_segment(run_id)
        shown_as = pages.annotator(request)
        return pages.page(
            "subject.html",
            lambda con: pages.subject_context(
                con, run_id, subject_id, find, queue, {"annotator": annotator}, saved=saved, shown_as=shown_as
            ),
            f"{subject_id} in {run_id}",
        )


def _label_routes(api: APIRouter, pages: _Pages) -> None:
    """Human labels from a subject's page, and the label queue."""
    from fastapi.responses import HTMLResponse

    from jurybench.viewer import _data, _find, _label
    from jurybench.viewer._find import Filter

    @api.post("/runs/{run_id}/labels/{subject_id:path}", response_class=HTMLResponse)
    async def add_label(run_id: str, subject_id: str, request: Request) -> Any:
        """The label form of an item's or pair's page: saved, then back to the page (or on to the
        queue's next subject); a bad value shows the page again with the message."""
        from urllib.parse import parse_qs

        from fastapi.responses import RedirectResponse

        run_id = run_from_segment(run_id)
        raw = parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)
        form = {k: v[0] for k, v in raw.items()}
        try:
            pages.annotating.check(form.get("csrf", ""))
        except _label.Forbidden as exc:
            html = pages.env.get_template("error.html").render(title="Forbidden", message=exc.message, hint=exc.hint)
            return HTMLResponse(html, status_code=403)
        find = {k: form.get(k, "") for k in _find.FIELDS}
        queue = form.get("queue", "")
        shown_as = pages.annotator(request)
        try:
            stored = await asyncio.to_thread(
                partial(_label.save, show_jury=pages.annotating.show_jury, shown_as=shown_as),
                pages.store_of(),
                run_id,
                subject_id,
                form,
            )
        except JurybenchError as exc:
            failed = (
                exc
                if "already gave" not in exc.message
                else JurybenchError(exc.message, hint="Tick 'replace my earlier labels' to overwrite it.")
            )
            return pages.page(
                "subject.html",
                lambda con: pages.subject_context(
                    con, run_id, subject_id, find, queue, form, error=failed, shown_as=shown_as
                ),
                f"{subject_id} in {run_id}",
                status=400,
            )
        _data.MEMO.clear()  # the agreement figures and the queue change with the new labels
        base = f"/runs/{run_segment(run_id)}"
        who = form.get("annotator", "").strip()
        if queue in _label.QUEUES:
            response = RedirectResponse(f"{base}/queue?{urlencode({'annotator': who, 'by': queue})}", 303)
        else:
            query = Filter.parse(find).query(saved=stored, annotator=who)
            response = RedirectResponse(f"{base}/subjects/{quote(subject_id, safe='')}?{query}", 303)
        # This browser now labels as ``who``: its pages of the subjects ``who`` labelled are shown whole.
        response.set_cookie(
            _label.ANNOTATOR_COOKIE, pages.annotating.sign(who), httponly=True, samesite="strict", path="/"
        )
        return response

    @api.get("/runs/{run_id}/queue", response_class=HTMLResponse)
    def label_queue(request: Request, run_id: str, annotator: str = "", by: str = "spread") -> Any:
        """The queue's next subject (see ``_label.queue``), or a page saying the queue is empty."""
        from fastapi.responses import RedirectResponse

        run_id = run_from_segment(run_id)
        annotator = annotator or pages.annotator(request)
        nxt: list[str] = []

        def build(con: Connection) -> dict[str, object]:
            run = _data.run_header(con, run_id)
            if not pages.annotating.enabled:
                raise JurybenchError(
                    "this viewer is read-only: it has no label queue.",
                    hint="Start it with 'jurybench view --annotate' to add labels.",
                )
            first, _left = _label.queue(con, run, by, annotator)
            nxt.extend([first] if first else [])
            progress = _label.sample_progress(con, run, annotator) if by == "sample" else None
            return {"run": run, "by": by, "progress": progress}

        shown = pages.page("queue.html", build, f"Label queue of {run_id}")
        if not nxt:
            return shown  # the queue is empty, or an error page
        query = (Filter.parse(_label.QUEUE_FILTER) if by == "spread" else Filter()).query(queue=by, annotator=annotator)
        return RedirectResponse(f"/runs/{run_segment(run_id)}/subjects/{quote(nxt[0], safe='')}?{query}", 303)


def _other_routes(api: APIRouter, pages: _Pages) -> None:
    """Two runs compared, the recorded statistics and the calibrations."""
    from fastapi import Query
    from fastapi.responses import HTMLResponse

    from jurybench.viewer import _data, _detail

    @api.get("/compare", response_class=HTMLResponse)
    def compare(run: list[str] | None = Query(None)) -> HTMLResponse:  # noqa: B008 (FastAPI reads a repeated ?run=)
        from jurybench.viewer._compare import compare as compared

        if pages.annotating.blind:
            return pages.hidden("Comparing runs")
        wanted = [run_from_segment(r) for r in run or []][:2]
        title = "Compare " + " and ".join(wanted) if wanted else "Compare runs"
        return pages.page("compare.html", lambda con: compared(con, [_data.run_header(con, r) for r in wanted]), title)

    @api.get("/stats", response_class=HTMLResponse)
    def stats(name: str = "", after: str = "") -> HTMLResponse:
        if pages.annotating.blind:
            return pages.hidden("The statistics page")
        return pages.page("stats.html", lambda con: _detail.results_page(con, name=name, after=after), "Statistics")

    @api.get("/stats/{result_id}", response_class=HTMLResponse)
    def stat(result_id: str) -> HTMLResponse:
        if pages.annotating.blind:
            return pages.hidden("A statistic's page")

        def build(con: Connection) -> dict[str, object]:
            row = _detail.result(con, result_id)
            columns, rows = result_table(row)
            return {"r": row, "plot": plot_of(con, row), "columns": columns, "rows": rows}

        return pages.page("stat.html", build, f"Statistic {result_id[:12]}")

    @api.get("/calibrations", response_class=HTMLResponse)
    def calibrations() -> HTMLResponse:
        if pages.annotating.blind:
            return pages.hidden("The calibrations page")
        return pages.page("calibrations.html", lambda con: {"rows": _detail.calibrations(con)}, "Calibrations")

    @api.get("/calibrations/{calibration_id}", response_class=HTMLResponse)
    def calibration(calibration_id: str) -> HTMLResponse:
        if pages.annotating.blind:
            return pages.hidden("A calibration's page")
        return pages.page(
            "calibration.html", lambda con: {"c": _detail.calibration(con, calibration_id)}, "Calibration"
        )

    @api.get("/alignments", response_class=HTMLResponse)
    def alignments() -> HTMLResponse:
        if pages.annotating.blind:
            return pages.hidden("The alignments page")
        return pages.page("alignments.html", lambda con: {"rows": _detail.alignments(con)}, "Alignments")

    @api.get("/alignments/{alignment_id}", response_class=HTMLResponse)
    def alignment(alignment_id: str) -> HTMLResponse:
        if pages.annotating.blind:
            return pages.hidden("An alignment's page")
        return pages.page("alignment.html", lambda con: {"a": _detail.alignment(con, alignment_id)}, "Alignment")


def warm(store: StoreRef, *, runs: int = 20, stop: threading.Event | None = None) -> None:
    """Compute the newest runs' aggregates (figures, juror table, disagreements) ahead of the
    first visit: on a big store they take seconds once, then pages take milliseconds. Best
    effort: whatever fails here (a store closing under it) is left for the page to report."""
    import logging

    from jurybench.store import reading
    from jurybench.viewer import _data, _detail

    try:
        with reading(store) as con:
            ids = [
                r[0]
                for r in con.execute(
                    "SELECT run_id FROM runs WHERE status <> 'running' ORDER BY created_at DESC LIMIT ?", [runs]
                ).fetchall()
            ]
            for run_id in ids:
                if stop is not None and stop.is_set():
                    return
                try:
                    run = _data.run_header(con, run_id)
                    _data.run_figures(con, run)
                    _data.run_jurors(con, run)
                    _detail.disagreements(con, run)
                except JurybenchError:
                    continue
    except Exception as exc:  # a background nicety must not print a traceback
        logging.getLogger("jurybench.viewer").debug("warm-up stopped: %s", exc)


class WarmUp:
    """:func:`warm` in a background thread (unless ``start`` is false), stopped and waited for
    before the store closes."""

    def __init__(self, store: StoreRef, *, start: bool = True) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=warm, args=(store,), kwargs={"stop": self._stop}, daemon=True, name="viewer-warm-up"
        )
        if start:
            self._thread.start()

    def join(self) -> None:
        if self._thread.ident is not None:
            self._thread.join()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(timeout=30)


def create_viewer_app(db: Path, *, warm_up: bool = True, annotate: bool = False, show_jury: bool = False) -> FastAPI:
    """The standalone viewer (``jurybench view``): the store opened read-only (``annotate``:
    writable, and item and pair pages take human labels); the newest runs' aggregates are
    computed in the background at start (``warm_up``)."""
    from fastapi import FastAPI

    from jurybench.store import Holder

    store = Holder(db, read_only=not annotate)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.warm_up = WarmUp(store, start=warm_up)
        try:
            yield
        finally:
            app.state.warm_up.stop()
            store.close()

    app = FastAPI(title="jurybench viewer", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.include_router(router(lambda: store, Annotating(enabled=annotate, show_jury=show_jury)))
    app.state.store = store
    return app


__all__ = ["ASSETS", "WarmUp", "create_viewer_app", "environment", "router", "warm"]
