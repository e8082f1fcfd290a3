"""The viewer's pages in the service: at / behind the token, which a browser gives once at
/login (an HttpOnly cookie derived from the token, so no response carries the token)."""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import FastAPI, Request

SESSION_COOKIE = "jurybench_session"  # the viewer's pages: a browser signs in once at /login


SESSION_TTL_S = 12 * 3600  # a signed-in browser signs in again after this long
MIN_TOKEN_LENGTH = 16


def session_of(token: str, issued: int | None = None) -> str:
    """The cookie a signed-in browser holds: when it was issued and an HMAC of that under the
    token, never the token itself, so no response carries the secret."""
    import time

    at = int(time.time()) if issued is None else int(issued)
    mac = hmac.new(token.encode(), f"jurybench viewer session {at}".encode(), "sha256").hexdigest()
    return f"{at}.{mac}"


def session_valid(token: str, value: str, now: float | None = None) -> bool:
    """A cookie made by :func:`session_of` under ``token`` that has not expired."""
    import time

    issued, _, _mac = value.partition(".")
    if not issued.isdigit():
        return False
    age = (time.time() if now is None else now) - int(issued)
    return 0 <= age <= SESSION_TTL_S and hmac.compare_digest(value.encode(), session_of(token, int(issued)).encode())


_LOGIN = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in · jurybench</title>
<link rel="stylesheet" href="/assets/viewer.css"></head><body><header class="top"><span class="brand">jurybench</span></header>
<main><h1>Sign in</h1><p class="muted">This server asks for its token (the one given to 'jurybench serve').</p>
{error}<form method="post" action="/login"><input type="hidden" name="next" value="{next}">
<label>Token <input type="password" name="token" autocomplete="current-password" autofocus></label>
<button type="submit">Open the viewer</button></form></main></body></html>"""


def mount_viewer(app: FastAPI, config: Any, store_of: Any) -> None:
    """The viewer's pages at / (read-only, behind the token: a browser signs in once at /login,
    which sets an HttpOnly cookie derived from the token)."""
    import html
    from urllib.parse import parse_qs

    from fastapi.responses import HTMLResponse, RedirectResponse

    from jurybench.viewer import router

    def safe_next(value: str) -> str:
        return value if value.startswith("/") and not value.startswith("//") and "\\" not in value else "/"

    @app.get("/login", include_in_schema=False)
    def login_form(next: str = "/") -> HTMLResponse:
        return HTMLResponse(_LOGIN.format(error="", next=html.escape(safe_next(next), quote=True)))

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Any:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        token, target = (form.get("token") or [""])[0], safe_next((form.get("next") or ["/"])[0])
        if config.token and not hmac.compare_digest(token.encode(), config.token.encode()):
            page = _LOGIN.format(error='<p class="error">Wrong token.</p>', next=html.escape(target, quote=True))
            return HTMLResponse(page, status_code=401)
        response = RedirectResponse(target, status_code=303)
        if config.token:
            response.set_cookie(
                SESSION_COOKIE,
                session_of(config.token),
                httponly=True,
                samesite="strict",
                path="/",
                max_age=SESSION_TTL_S,
                secure=request.url.scheme == "https",
            )
        return response

    from jurybench.viewer import Annotating

    # Behind the token, item and pair pages take human labels (a form's own token guards them),
    # blind unless serve --show-jury.
    app.include_router(router(store_of, Annotating(enabled=True, show_jury=config.show_jury)))
