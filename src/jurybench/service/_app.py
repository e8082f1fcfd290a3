"""The FastAPI application: the service's routers (one module per resource: ``_route_*.py``)
assembled over one store, with auth, limits and error shapes.

Errors are JSON ``{"error": "...", "hint": "..."}`` (validation errors add ``fields``: the
path of each wrong field and what is wrong), never a stack trace; the request's values are
not echoed back (they may hold keys).
"""

import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jurybench import __version__
from jurybench.engine import JobsOnRay, RunEnd, end_runs
from jurybench.errors import JurybenchError, NotFound
from jurybench.redact import install_log_redaction, register_secret
from jurybench.service import (
    _route_annotations,
    _route_calibration,
    _route_items,
    _route_jobs,
    _route_reports,
    _route_service,
    _route_sql,
    _route_stats,
)
from jurybench.service._access import Auth, HostCheck, check_token
from jurybench.service._access import error_response as _error
from jurybench.service._jobs import Conflict, JobManager, JobWrite
from jurybench.service._state import ServiceConfig, ServiceState
from jurybench.service._store import GroupWriter, SqlTimeout, SqlTooLarge, Store
from jurybench.service._viewer import mount_viewer
from jurybench.viewer import WarmUp

log = logging.getLogger("jurybench.service")
DOCS_ASSETS = "/docs-assets"  # Swagger UI and ReDoc, served from the installed package: no CDN


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
            return _error(
                413, f"request body over the server's limit of {self.limit} bytes.", "Send fewer rows per request."
            )

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
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="jurybench API",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> Any:
        return get_redoc_html(
            openapi_url="/openapi.json",
            title="jurybench API",
            redoc_js_url=f"{DOCS_ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{DOCS_ASSETS}/favicon.png",
            with_google_fonts=False,
        )


class _TooBig(Exception):
    pass


def _jobs_on_ray(config: ServiceConfig) -> JobsOnRay | None:
    """Ray for the jobs (``serve --executor ray``), connected; None for jobs in this process.
    JurybenchError for options that do not go together or a Ray that cannot start."""
    from jurybench.engine import check_executor

    if config.executor == "local" and config.ray_workers is not None:
        raise JurybenchError("--ray-workers spreads each job's calls over Ray workers: give --executor ray with it.")
    check_executor(config.executor, config.address, None)  # an unknown executor, --address without ray
    if config.executor == "local":
        return None
    return JobsOnRay(config.address, config.ray_workers, max(1, config.workers))


def create_app(
    config: ServiceConfig, *, store: Store | None = None, start_jobs: bool = True, close_store: bool = False
) -> FastAPI:
    """The service over one store; jobs start with the app (and stop with it). A given store
    is closed with the app only if ``close_store`` (``jurybench serve`` opens it first, so that
    a store held elsewhere is one line, not a server that fails to start)."""
    import contextlib

    state = ServiceState(config)
    install_log_redaction()
    register_secret(config.token)

    def open_state() -> None:
        if state.store is not None:
            return
        # Loaded at start, not by the first submissions and jobs (pandas and pyarrow for DuckDB's Arrow
        # tables, calibration and numpy for juries, the engine): a second the first clients would wait.
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401

        import jurybench.api
        import jurybench.calibration
        import jurybench.jury  # noqa: F401

        # The executor first: one that cannot start leaves nothing open (no store, no Ray).
        state.ray = _jobs_on_ray(config)
        try:
            state.store = store or Store(
                config.db, config.url, sql_memory_mb=config.sql_memory_mb, sql_timeout_s=config.sql_timeout_s
            )
        except BaseException:
            if state.ray is not None:
                state.ray.close()
                state.ray = None
            raise
        # Submissions and the ends of jobs are committed in groups (as many as are waiting).
        state.group = GroupWriter(state.store, batched={JobWrite: JobManager.insert_many, RunEnd: end_runs})
        state.jobs = JobManager(
            state.store,
            workers=config.workers,
            end_run=state.group.run,
            commit_later=state.group.submit,
            calibration_dir=config.calibrations,
            ray=state.ray,
        )
        if start_jobs:
            state.jobs.start()

    if store is not None:  # given a store, the app is ready at once (also without a lifespan)
        open_state()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        open_state()
        assert state.store is not None and state.group is not None and state.jobs is not None
        warming = WarmUp(state.store, start=config.warm_viewer)
        try:
            yield
        finally:
            warming.stop()
            if start_jobs:
                state.jobs.shutdown()
            state.group.close()
            if state.ray is not None:
                state.ray.close()
            if store is None or close_store:
                state.store.close()
            state.store = state.group = state.jobs = state.ray = None

    app = FastAPI(
        title="jurybench",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        description="Judge generations with a jury of LLMs over HTTP: jobs, items, annotations, calibration, "
        "statistics and read-only SQL on one DuckDB store.",
    )
    app.state.jurybench = state
    _offline_docs(app)
    mount_viewer(app, config, lambda: state.store)
    _error_shapes(app)
    app.add_middleware(_BodyLimit, limit=config.max_body_bytes)
    if config.token:
        check_token(config.token)
        app.add_middleware(Auth, token=config.token)
    if config.allowed_hosts is not None:  # outermost: a foreign Host is refused before anything else
        app.add_middleware(HostCheck, allowed=set(config.allowed_hosts))
    for module in (_route_service, _route_jobs, _route_items, _route_annotations, _route_calibration, _route_reports):
        app.include_router(module.router)
    app.include_router(_route_stats.router())
    app.include_router(_route_sql.router)
    return app


def _error_shapes(app: FastAPI) -> None:
    """Every error as ``{"error", "hint"}`` with its status; never a stack trace."""

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
        return _error(
            422, f"{first['field']}: {first['message']}", "See /openapi.json for the request schema.", fields=fields
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        incident = uuid.uuid4().hex[:12]
        log.exception("unexpected error %s on %s %s", incident, request.method, request.url.path)
        return _error(500, f"internal error (incident {incident}; details are in the server log).")


__all__ = ["ServiceConfig", "create_app"]
