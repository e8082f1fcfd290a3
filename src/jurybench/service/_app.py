"""The FastAPI application: /v1 endpoints over the library, auth, limits and error shapes.

Errors are JSON ``{"error": "...", "hint": "..."}`` (validation errors add ``fields``: the
path of each wrong field and what is wrong), never a stack trace; the request's values are
not echoed back (they may hold keys).
"""

import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Body, Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jurybench import __version__
from jurybench.engine import RunEnd, end_runs
from jurybench.errors import JurybenchError, NotFound
from jurybench.redact import install_log_redaction, register_secret
from jurybench.service import _requests as rq
from jurybench.service._access import Auth, HostCheck, check_token
from jurybench.service._access import error_response as _error
from jurybench.service._jobs import Conflict, JobManager, JobWrite
from jurybench.service._stats import run_statistic, stat_bodies
from jurybench.service._store import GroupWriter, SqlTimeout, SqlTooLarge, Store
from jurybench.service._viewer import mount_viewer
from jurybench.viewer import WarmUp

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.jury import Jury
    from jurybench.rubric import AnyRubric
    from jurybench.store import ImportResult, Row

log = logging.getLogger("jurybench.service")
DOCS_ASSETS = "/docs-assets"  # Swagger UI and ReDoc, served from the installed package: no CDN


@dataclass
class ServiceConfig:
    db: Path
    token: str | None = None
    workers: int = 2
    max_body_bytes: int = 10 * 1024 * 1024
    sql_timeout_s: float = 10.0
    sql_max_rows: int = 10_000
    sql_memory_mb: int = 512
    calibration_dir: Path | None = None
    default_jury: Mapping[str, object] | None = None  # used when a job gives none (serve --demo: a simulated jury)
    url: str = ""
    warm_viewer: bool = True  # compute the newest runs' page aggregates in the background at start
    extra: dict[str, object] = field(default_factory=dict)
    # Host headers answered (None: any; 'jurybench serve' sets the address it listens as).
    allowed_hosts: tuple[str, ...] | None = None

    @property
    def calibrations(self) -> Path:
        return self.calibration_dir or self.db.parent / "calibration"


class _BodyLimit:
    """ASGI middleware: refuse bodies over the limit (by Content-Length, and by counting)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope.get("headers") or [] if k == b"content-length"), None)

        def too_big() -> JSONResponse:  # made only when needed: an answer costs a redaction pass
            return _error(413, f"request body over the server's limit of {self.limit} bytes.",
                          "Send fewer rows per request.")  # fmt: skip

        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await too_big()(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooBig
            return message

        try:
            await self.app(scope, counted, send)
        except _TooBig:
            await too_big()(scope, receive, send)


def _offline_docs(app: FastAPI) -> None:
    """/docs (Swagger UI) and /redoc with their scripts and styles served by this server, from
    the fastapi-offline package's copies: the pages work offline and behind firewalls."""
    from importlib import resources

    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
    from fastapi.staticfiles import StaticFiles

    folder = resources.files("fastapi_offline") / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(folder)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> Any:
        return get_swagger_ui_html(openapi_url="/openapi.json", title="jurybench API",
                                   swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png")  # fmt: skip

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> Any:
        return get_redoc_html(openapi_url="/openapi.json", title="jurybench API",
                              redoc_js_url=f"{DOCS_ASSETS}/redoc.standalone.js",
                              redoc_favicon_url=f"{DOCS_ASSETS}/favicon.png", with_google_fonts=False)  # fmt: skip


class _TooBig(Exception):
    pass


def create_app(
    config: ServiceConfig, *, store: Store | None = None, start_jobs: bool = True, close_store: bool = False
) -> FastAPI:
    """The service over one store; jobs start with the app (and stop with it). A given store
    is closed with the app only if ``close_store`` (``jurybench serve`` opens it first, so that
    a store held elsewhere is one line, not a server that fails to start)."""
    import contextlib

    state: dict[str, Any] = {}
    install_log_redaction()
    register_secret(config.token)

    def open_state() -> None:
        if "store" in state:
            return
        # Loaded at start, not by the first submissions and jobs (pandas and pyarrow for DuckDB's Arrow
        # tables, calibration and numpy for juries, the engine): a second the first clients would wait.
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401

        import jurybench.api
        import jurybench.calibration
        import jurybench.jury  # noqa: F401

        state["store"] = store or Store(config.db, config.url, sql_memory_mb=config.sql_memory_mb,
                                        sql_timeout_s=config.sql_timeout_s)  # fmt: skip
        # Submissions and the ends of jobs are committed in groups (as many as are waiting).
        state["group"] = GroupWriter(state["store"], batched={JobWrite: JobManager.insert_many, RunEnd: end_runs})
        state["jobs"] = JobManager(state["store"], workers=config.workers, end_run=state["group"].run,
                                   calibration_dir=config.calibrations)  # fmt: skip
        if start_jobs:
            state["jobs"].start()

    if store is not None:  # given a store, the app is ready at once (also without a lifespan)
        open_state()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        open_state()
        warming = WarmUp(state["store"], start=config.warm_viewer)
        try:
            yield
        finally:
            warming.stop()
            if start_jobs:
                state["jobs"].shutdown()
            state["group"].close()
            if store is None or close_store:
                state["store"].close()
            state.clear()

    app = FastAPI(
        title="jurybench", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
        description="Judge generations with a jury of LLMs over HTTP: jobs, items, annotations, calibration, "
        "statistics and read-only SQL on one DuckDB store.",
    )  # fmt: skip

    _offline_docs(app)
    mount_viewer(app, config, lambda: state["store"])

    # -- errors ------------------------------------------------------------------------------
    @app.exception_handler(JurybenchError)
    async def _jurybench_error(request: Request, exc: JurybenchError) -> JSONResponse:
        status = 404 if isinstance(exc, NotFound) else 409 if isinstance(exc, Conflict) else 400
        if isinstance(exc, SqlTimeout):
            status = 408
        if isinstance(exc, SqlTooLarge):
            status = 413
        return _error(status, exc.message, exc.hint)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        fields = [{"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"]} for e in exc.errors()[:20]]
        first = fields[0] if fields else {"field": "body", "message": "invalid"}
        return _error(422, f"{first['field']}: {first['message']}", "See /openapi.json for the request schema.",
                      fields=fields)  # fmt: skip

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        incident = uuid.uuid4().hex[:12]
        log.exception("unexpected error %s on %s %s", incident, request.method, request.url.path)
        return _error(500, f"internal error (incident {incident}; details are in the server log).")

    # -- auth --------------------------------------------------------------------------------
    app.add_middleware(_BodyLimit, limit=config.max_body_bytes)
    if config.token:
        check_token(config.token)
        app.add_middleware(Auth, token=config.token)
    if config.allowed_hosts is not None:  # outermost: a foreign Host is refused before anything else
        app.add_middleware(HostCheck, allowed=set(config.allowed_hosts))

    # Dependencies are async (they only look up the app's state): a sync one would cost every
    # request a trip through the thread pool.
    async def store_() -> Store:
        return state["store"]  # type: ignore[no-any-return]

    def group_writer() -> GroupWriter:
        return state["group"]  # type: ignore[no-any-return]

    async def jobs_() -> JobManager:
        return state["jobs"]  # type: ignore[no-any-return]

    StoreDep = Annotated[Store, Depends(store_)]
    JobsDep = Annotated[JobManager, Depends(jobs_)]
    Limit = Annotated[int, Query(ge=1, le=1000)]
    Offset = Annotated[int, Query(ge=0, le=10_000_000)]
    Id = Annotated[str, PathParam(min_length=1, max_length=256)]

    # -- health ------------------------------------------------------------------------------
    @app.get("/v1/health", tags=["service"])
    def health() -> dict[str, object]:
        """Liveness (no token needed)."""
        return {"status": "ok", "version": __version__}

    @app.get("/v1/rubrics", tags=["service"])
    def rubrics() -> list[dict[str, object]]:
        """The rubrics the server knows by name."""
        from jurybench.rubric import load_rubric, rubric_files

        out: list[dict[str, object]] = []
        for name, path in rubric_files():
            try:
                r = load_rubric(path)
            except JurybenchError:  # a broken file is left out here ('jurybench rubrics check' names it)
                continue
            out.append({"name": name, "kind": r.kind, "dimensions": r.dimensions, "hash": r.content_hash})
        return out

    # -- jobs --------------------------------------------------------------------------------
    def _prepare(
        body: rq.JobIn, *, need_keys: bool = True
    ) -> tuple[dict[str, Any], "AnyRubric", "Jury", list[dict[str, str] | None]]:
        """A job's request, rubric, jury and inline keys, checked as the CLI checks them."""
        from jurybench.calibration import attach_calibration
        from jurybench.engine import check_batch_jurors, check_orders, validate_jurors

        request = body.model_dump(exclude_none=True)
        if not body.swap:  # the older way to ask for one order
            request["orders"] = "one" if body.orders == "both" else body.orders
        if body.jury is None:
            if not config.default_jury:
                raise JurybenchError("jury: missing.", hint='Give jury.jurors (e.g. ["openai/gpt-4o-mini"]).')
            request["jury"] = dict(config.default_jury)
        rubric = rq.load_rubric_for(request)
        check_orders(str(request.get("orders") or "both"), rubric)
        secrets = rq.secrets_of(request["jury"])
        request["jury"] = rq.public_jury(request["jury"])  # stored and served without credentials
        jury = rq.jury_for(request, secrets, config.calibrations)
        validate_jurors(rubric, list(jury.jurors), need_keys=need_keys)  # a plan calls nothing: no key needed
        jury = attach_calibration(jury, rubric)
        jury.resolved(rubric)
        if body.batch:
            check_batch_jurors(list(jury.jurors))
        if body.max_cost is not None:
            from jurybench.jurors import price_of

            unknown = [j.display_name for j in jury.jurors if price_of(j) is None]
            if unknown:
                raise JurybenchError(f"max_cost: no price is known for {', '.join(unknown)}, so a budget cannot be kept.",
                                     hint="Use models litellm's price map lists, or leave max_cost out.")  # fmt: skip
        return request, rubric, jury, secrets

    @app.post("/v1/plan", tags=["jobs"])
    def plan_job(body: rq.JobIn, store: StoreDep) -> dict[str, object]:
        """What a job would do and cost, per juror (calls after the cache, input tokens of the rendered
        prompts, expected output tokens, cost synchronously and in batch); nothing is called or written.
        Subjects must be stored already (item_ids, pair_ids or where)."""
        from jurybench.api import score
        from jurybench.rubric import is_pairwise

        if body.items or body.pairs:
            raise JurybenchError("a plan reads stored subjects: upload items or pairs first (POST /v1/items, "
                                 "/v1/pairs), then plan with item_ids, pair_ids or where.")  # fmt: skip
        _, rubric, jury, _ = _prepare(body, need_keys=False)
        ids, where = rq.subject_predicate(body, is_pairwise(rubric))
        with store.cursor() as cur:
            result = score(cur, rubric=rubric, jury=jury, where=where, ids=ids, plan=True).result
        jurors = [p.as_dict() for p in result.plan]

        def total(name: str) -> float | None:
            values = [p[name] for p in jurors]
            return None if any(v is None for v in values) else sum(values)

        return {"n_calls": sum(p["calls"] for p in jurors), "n_cached": sum(p["cached"] for p in jurors),
                "cost_usd": total("cost_usd"), "cost_batch_usd": total("cost_batch_usd"), "jurors": jurors}  # fmt: skip

    @app.post("/v1/jobs", status_code=202, tags=["jobs"])
    async def submit_job(body: rq.JobIn, jobs: JobsDep) -> dict[str, object]:
        """Submit a scoring job: a rubric, a jury, and items or pairs (inline or stored)."""
        import asyncio

        with jobs.admitting_one():
            # Checking a request takes about a millisecond: on the event loop, not a thread-pool trip.
            write, items, pairs, secrets = _submission(body, jobs)
            # Committed with other clients' submissions by the group writer; no thread waits for it.
            row = await asyncio.wrap_future(group_writer().submit(write, items, pairs))
            return jobs.enqueue(row, secrets)

    def _submission(
        body: rq.JobIn, jobs: JobManager
    ) -> tuple[JobWrite, list[dict[str, object]], list[dict[str, object]], list[dict[str, str] | None]]:
        """The checked request as a job write for the group writer (its row is inserted after the
        inline items and pairs of its group are imported), and the request's inline keys."""
        from jurybench.rubric import is_pairwise

        request, rubric, _jury, secrets = _prepare(body)
        ids, where = rq.subject_predicate(body, is_pairwise(rubric))
        request.pop("items", None)
        request.pop("pairs", None)
        request["_where"] = where
        request["_ids"] = ids
        request["_needs_key"] = any(secrets)
        items = [item.model_dump(exclude_none=True) for item in body.items or []]
        pairs = [pair.model_dump(exclude_none=True) for pair in body.pairs or []]
        return JobWrite(request, rubric, ids, where), items, pairs, secrets

    @app.get("/v1/jobs", tags=["jobs"])
    def list_jobs(jobs: JobsDep, status: Annotated[str | None, Query(max_length=32)] = None, limit: Limit = 100,
                  offset: Offset = 0) -> list[dict[str, object]]:  # fmt: skip
        """Jobs, newest first."""
        return jobs.list(status=status, limit=limit, offset=offset)

    @app.get("/v1/jobs/{job_id}", tags=["jobs"])
    async def get_job(job_id: Id, jobs: JobsDep) -> dict[str, object]:
        """A job's status and progress: calls done, invalid, refusals, failed, cost so far."""
        known = jobs.known(job_id)  # a job this server has touched: from memory, no query
        if known is not None:
            return known
        from starlette.concurrency import run_in_threadpool

        return await run_in_threadpool(jobs.get, job_id)

    @app.post("/v1/jobs/{job_id}/cancel", tags=["jobs"])
    def cancel_job(job_id: Id, jobs: JobsDep) -> dict[str, object]:
        """Cancel a queued or running job (answers stored so far stay)."""
        return jobs.cancel(job_id)

    # -- items, pairs, annotations ---------------------------------------------------------
    def _import_items(cur: "Connection", items: list[rq.ItemIn], dataset: str | None,
                      in_transaction: bool = False) -> "ImportResult":  # fmt: skip
        from jurybench.store import import_item_rows

        rows = [(n, item.model_dump(exclude_none=True)) for n, item in enumerate(items, start=1)]
        return import_item_rows(cur, rows, source="items", dataset=dataset, in_transaction=in_transaction)

    def _import_pairs(cur: "Connection", pairs: list[rq.PairIn], dataset: str | None,
                      in_transaction: bool = False) -> "ImportResult":  # fmt: skip
        from jurybench.store import import_pair_rows

        rows = [(n, pair.model_dump(exclude_none=True)) for n, pair in enumerate(pairs, start=1)]
        return import_pair_rows(cur, rows, source="pairs", dataset=dataset, in_transaction=in_transaction)

    def _counts(result: "ImportResult") -> dict[str, object]:
        return {"inserted": result.inserted, "unchanged": result.unchanged, "updated": result.updated}

    def _listing(store: Store, table: str, key: str, dataset: str | None, limit: int,
                 offset: int) -> list[dict[str, object]]:  # fmt: skip
        where = " WHERE dataset = ?" if dataset else ""
        return _rows(store, f"SELECT * FROM {table}{where} ORDER BY {key} LIMIT ? OFFSET ?",
                     [*([dataset] if dataset else []), limit, offset])  # fmt: skip

    Dataset = Annotated[str | None, Query(max_length=256)]

    @app.post("/v1/items", status_code=201, tags=["items"])
    def upload_items(body: rq.ItemsUpload, store: StoreDep) -> dict[str, object]:
        """Import items, all or nothing (an id stored with other content is a conflict)."""
        with store.writing() as cur:
            return _counts(_import_items(cur, body.items, body.dataset))

    @app.post("/v1/judgments", status_code=201, tags=["judgments"])
    def upload_judgments(body: rq.JudgmentsUpload, store: StoreDep) -> dict[str, object]:
        """Judgments made elsewhere, as run ``run``'s (juror ``import/<juror>``), all or nothing."""
        from jurybench.engine import import_judgments

        rubric = rq.load_rubric_for({"rubric": body.rubric})
        rows = [(n, j.model_dump(exclude_none=True)) for n, j in enumerate(body.judgments, start=1)]
        with store.writing() as cur:
            result = import_judgments(cur, rows, rubric, run=body.run, juror=body.juror, source="judgments",
                                      replace=body.replace, continuous=body.continuous)  # fmt: skip
        return {"run": result.run_id, "calls": result.calls, "judgments": result.judgments,
                "inserted": result.inserted, "unchanged": result.unchanged, "replaced": result.replaced,
                "orders": result.orders, "probabilistic": result.probabilistic}  # fmt: skip

    @app.get("/v1/items", tags=["items"])
    def list_items(store: StoreDep, dataset: Dataset = None, limit: Limit = 100, offset: Offset = 0) -> Any:
        """Items, by id (``?dataset=`` to choose one dataset)."""
        return _listing(store, "items", "item_id", dataset, limit, offset)

    @app.get("/v1/items/{item_id}", tags=["items"])
    def get_item(item_id: Id, store: StoreDep) -> dict[str, object]:
        rows = _rows(store, "SELECT * FROM items WHERE item_id = ?", [item_id])
        if not rows:
            raise NotFound(f"no item {item_id!r}.")
        return rows[0]

    @app.post("/v1/pairs", status_code=201, tags=["items"])
    def upload_pairs(body: rq.PairsUpload, store: StoreDep) -> dict[str, object]:
        """Import pairs of stored items, all or nothing."""
        with store.writing() as cur:
            return _counts(_import_pairs(cur, body.pairs, body.dataset))

    @app.get("/v1/pairs", tags=["items"])
    def list_pairs(store: StoreDep, dataset: Dataset = None, limit: Limit = 100, offset: Offset = 0) -> Any:
        """Pairs, by id."""
        return _listing(store, "pairs", "pair_id", dataset, limit, offset)

    @app.post("/v1/annotations", status_code=201, tags=["annotations"])
    def upload_annotations(body: rq.AnnotationsUpload, store: StoreDep) -> dict[str, object]:
        """Import human labels (long layout), validated against the rubric, all or nothing."""
        from jurybench.annotations import import_annotation_rows

        rubric = rq.load_rubric_for({"rubric": body.rubric})
        column = rubric.subject_column
        rows: list[tuple[int, Row]] = [(n, {column: lab.subject_id, "annotator": lab.annotator, "criterion": lab.criterion,
                     "value": lab.value}) for n, lab in enumerate(body.labels, start=1)]  # fmt: skip
        with store.writing() as cur:
            result = import_annotation_rows(cur, rows, rubric, source="labels", layout="long", replace=body.replace,
                                            continuous=body.continuous)  # fmt: skip
        return {"inserted": result.inserted, "unchanged": result.unchanged, "replaced": result.replaced}

    @app.get("/v1/annotations", tags=["annotations"])
    def list_annotations(store: StoreDep, subject_id: Annotated[str | None, Query(max_length=256)] = None,
                         limit: Limit = 100, offset: Offset = 0) -> list[dict[str, object]]:  # fmt: skip
        sql = ("SELECT subject_kind, subject_id, criterion, annotator, value, label FROM human_labels"
               + (" WHERE subject_id = ?" if subject_id else "")
               + " ORDER BY subject_id, criterion, annotator LIMIT ? OFFSET ?")  # fmt: skip
        return _rows(store, sql, [*([subject_id] if subject_id else []), limit, offset])

    # -- calibration -------------------------------------------------------------------------
    @app.post("/v1/calibrations", status_code=201, tags=["calibration"])
    def fit(body: rq.CalibrationIn, store: StoreDep) -> dict[str, object]:
        """Fit juror weights on a run with human labels; returns the artifact with its metrics."""
        from jurybench.calibration import fit_calibration
        from jurybench.stats import jsonable

        with store.writing() as cur:
            artifact, path = fit_calibration(
                cur, body.run, name=body.name, criteria=body.criteria, covariates=body.covariates,
                methods=list(body.methods) if body.methods else None, group_by=body.group_by, test_size=body.test_size, folds=body.folds,
                seed=body.seed, n_boot=body.boot, out_dir=config.calibrations,
            )  # fmt: skip
        return {"name": body.name, "file": path.name, "artifact": jsonable(artifact)}

    @app.get("/v1/calibrations", tags=["calibration"])
    def list_calibrations() -> list[dict[str, object]]:
        """Calibration files in the server's calibration folder."""
        from jurybench.calibration import load_artifact

        out = []
        folder = config.calibrations
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                artifact, _ = load_artifact(path)
            except JurybenchError:
                continue
            out.append({"name": path.stem, "rubric": artifact.get("rubric"), "jurors": artifact.get("jurors"),
                        "created": artifact.get("created")})  # fmt: skip
        return out

    @app.post("/v1/calibrations/{name}/apply", tags=["calibration"])
    def apply(name: Annotated[str, PathParam(pattern=rq.NAME)], body: rq.ApplyIn, store: StoreDep) -> dict[str, object]:
        """Score a run with a calibration (stored in calibrated_scores)."""
        from jurybench.calibration import apply_calibration
        from jurybench.stats import jsonable

        path = config.calibrations / f"{name}.json"
        if not path.exists():
            raise NotFound(f"no calibration named {name!r}.", hint="See GET /v1/calibrations.")
        with store.writing() as cur:
            return {"name": name, "run": body.run, "result": jsonable(apply_calibration(cur, path, body.run))}

    @app.post("/v1/jury/select", tags=["calibration"])
    def select(body: rq.JurySelectIn, store: StoreDep) -> dict[str, object]:
        """The cheapest sub-jury of a pilot run that is good enough (as 'jurybench jury select'):
        every sub-jury's held-out error, cost and latency, the Pareto front, the chosen one, and
        the chosen one as a jury file (``jury_file``, YAML text)."""
        from jurybench.calibration import jury_file_text, select_jury
        from jurybench.stats import jsonable

        with store.reading() as cur:
            selection = select_jury(cur, **body.model_dump())
        return {**jsonable(selection.as_dict()), "jury_file": jury_file_text(selection)}

    # -- statistics --------------------------------------------------------------------------
    def _stat_endpoint(name: str, model: Any) -> None:  # a pydantic model made at run time
        def endpoint(body: Annotated[model, Body()], store: StoreDep) -> dict[str, object]:
            return run_statistic(store, name, body)

        endpoint.__doc__ = f"Run the {name} statistic (parameters as in 'jurybench stats {name}'); recorded."
        app.post(f"/v1/stats/{name}", tags=["statistics"], name=f"stats_{name}")(endpoint)

    for stat_name, stat_model in stat_bodies().items():
        _stat_endpoint(stat_name, stat_model)

    @app.get("/v1/stats/results", tags=["statistics"])
    def list_results(store: StoreDep, limit: Limit = 100, offset: Offset = 0) -> list[dict[str, object]]:
        return _rows(store, "SELECT result_id, name, run_id, params, seed, created_at FROM stats_results "
                     "ORDER BY created_at DESC, result_id LIMIT ? OFFSET ?", [limit, offset])  # fmt: skip

    @app.get("/v1/stats/results/{result_id}", tags=["statistics"])
    def get_result(result_id: Id, store: StoreDep) -> dict[str, object]:
        rows = _rows(store, "SELECT * FROM stats_results WHERE result_id = ?", [result_id])
        if not rows:
            raise NotFound(f"no recorded statistic {result_id!r}.")
        return rows[0]

    # -- SQL ---------------------------------------------------------------------------------
    @app.post("/v1/sql", tags=["sql"])
    def sql(body: rq.SqlIn, store: StoreDep) -> dict[str, object]:
        """One read-only SELECT; the server's time (408), memory and answer-size (413) and row limits
        apply (truncated says so)."""
        limit = min(body.limit or config.sql_max_rows, config.sql_max_rows)
        names, rows, truncated = store.query(body.query, limit=limit, timeout_s=config.sql_timeout_s)
        return {"columns": names, "rows": [[_plain(v) for v in r] for r in rows], "truncated": truncated}

    return app


def _plain(value: object) -> object:
    """A JSON-safe value (timestamps and decimals as text; NaN and infinities as null)."""
    import datetime as dt
    import decimal
    import math

    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dt.date | dt.datetime | dt.time | dt.timedelta | decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _rows(store: Store, sql: str, params: list[object]) -> list[dict[str, object]]:
    with store.cursor() as cur:
        result = cur.execute(sql, params)
        names = [d[0] for d in result.description]
        out: list[dict[str, object]] = []
        for row in result.fetchall():
            record: dict[str, object] = {}
            for name, value in zip(names, row, strict=True):
                if name in ("treatment", "metadata", "params", "result") and isinstance(value, str):
                    with contextlib.suppress(ValueError):
                        value = json.loads(value)
                record[name] = _plain(value)
            out.append(record)
    return out
