"""Who may ask the service: the bearer token (or the viewer's read-only cookie) and the Host
header the server answers for."""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Any

from fastapi.responses import JSONResponse

from jurybench.errors import JurybenchError
from jurybench.redact import redact_value
from jurybench.service._viewer import MIN_TOKEN_LENGTH, SESSION_COOKIE, session_valid

if TYPE_CHECKING:
    from starlette.types import ASGIApp

OPEN_PATHS = frozenset({"/v1/health", "/openapi.json", "/docs", "/redoc", "/login"})
OPEN_PREFIXES = ("/docs-assets/", "/assets/")  # Swagger UI, ReDoc and the viewer's stylesheet


def error_response(status: int, message: str, hint: str | None = None, **extra: object) -> JSONResponse:
    """The service's error answer: {"error", "hint"?, ...}, redacted (an error may quote a provider's)."""
    body: dict[str, object] = {"error": message}
    if hint:
        body["hint"] = hint
    body.update(extra)
    return JSONResponse(redact_value(body), status_code=status)


class HostCheck:
    """ASGI middleware: only requests whose Host header names an address the server listens as
    (what a DNS-rebinding page cannot send), unless more hosts are allowed."""

    def __init__(self, app: ASGIApp, allowed: set[str]) -> None:
        self.app, self.allowed = app, {h.lower() for h in allowed}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = next((v for k, v in scope.get("headers") or [] if k == b"host"), b"").decode("latin-1").lower()
            if host not in self.allowed:
                response = error_response(
                    421,
                    f"this server does not answer for host {host[:100]!r}.",
                    "Use the address it printed at start (or --allow-host).",
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def listening_hosts(host: str, port: int, extra: tuple[str, ...] = ()) -> set[str]:
    """The Host headers a server on ``host:port`` answers: that address, and the loopback names
    when it is a loopback one; plus ``extra`` (name or name:port)."""
    names = {host if ":" not in host else f"[{host}]"}
    if host in ("127.0.0.1", "localhost", "::1") or host.startswith("127."):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    allowed = {f"{name}:{port}" for name in names}
    for item in extra:
        allowed |= {item} if ":" in item.lstrip("[").split("]")[-1] else {item, f"{item}:{port}"}
    return allowed


def check_token(token: str | None) -> None:
    """A bearer token long enough not to be guessed."""
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise JurybenchError(
            f"the token has {len(token)} characters; at least {MIN_TOKEN_LENGTH} are needed.",
            hint="Make one with: python -c 'import secrets; print(secrets.token_urlsafe(24))'.",
        )


def _label_form(scope: dict[str, object]) -> bool:
    """A viewer page's label form (POST /runs/<run>/labels/<subject>): the cookie lets it through
    to the route, which takes it only with the form's own token (a page on another port carries
    the cookie but cannot read the token)."""
    path = str(scope.get("path") or "")
    return scope.get("method") == "POST" and path.startswith("/runs/") and "/labels/" in path


class Auth:
    """ASGI middleware: a bearer token on every path but the open ones (a plain ASGI layer: the
    request-object middleware costs every request a task group and a stream)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token, self.plain = app, token.encode(), token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = str(scope.get("path") or "")
        if scope["type"] == "http" and path not in OPEN_PATHS and not path.startswith(OPEN_PREFIXES):
            headers = scope.get("headers") or []
            given = next((v for k, v in headers if k == b"authorization"), b"")
            scheme, _, token = given.decode("latin-1").partition(" ")
            bearer = scheme.lower() == "bearer" and hmac.compare_digest(token.encode("latin-1"), self.token)
            # The viewer's cookie reads the viewer's pages: it opens GET/HEAD of them only, and the
            # label form, which the route takes only with the form's token. Anything else that
            # changes state needs the bearer token (a form on another local port carries the
            # cookie, not the token), and so does all of /v1: its answers hold every annotator's
            # labels and every jury score, which the pages hide from an annotator labelling blind.
            page = not path.startswith("/v1/")
            reads = (scope.get("method") in ("GET", "HEAD") and page) or _label_form(scope)
            if not bearer and not (reads and self._cookie(headers)):
                if scope.get("method") == "GET" and not path.startswith("/v1/"):  # a viewer page: sign in first
                    from urllib.parse import quote

                    from starlette.responses import RedirectResponse

                    target = path + (f"?{scope['query_string'].decode('latin-1')}" if scope.get("query_string") else "")
                    await RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)(
                        scope, receive, send
                    )
                    return
                response = error_response(
                    401, "missing or wrong bearer token.", "Send 'Authorization: Bearer <token>'."
                )
                response.headers["WWW-Authenticate"] = "Bearer"
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _cookie(self, headers: list[tuple[bytes, bytes]]) -> bool:
        from http.cookies import CookieError, SimpleCookie

        for key, value in headers:
            if key == b"cookie":
                try:
                    jar = SimpleCookie(value.decode("latin-1"))
                except CookieError:
                    return False
                morsel = jar.get(SESSION_COOKIE)
                if morsel is not None and session_valid(self.plain, morsel.value):
                    return True
        return False
