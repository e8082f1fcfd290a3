"""A loopback OpenAI-compatible chat-completions server for tests and benchmarks.

It answers ``POST /v1/chat/completions`` at once. By default every answer is
``default_content``; ``script`` holds (status, content) pairs served first, in
order, to inject rate limits (429), server errors (5xx) or bad answers; ``{api_key}`` in
an error's content is replaced by the key the client sent, as providers echo it. A content
that is a mapping is the whole message (e.g. ``{"content": None, "refusal": "..."}``)
for provider signals such as OpenAI's refusal field. Run it in
a thread (``StubServer``) or as its own process:
``python -m jurybench.testing.stub --port 8765 --content '{"x": 1}'``.
It binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import socket
import threading
import time
from collections import deque
from typing import Any


def _completion(model: str, content: Any, prompt_tokens: int = 11) -> dict[str, Any]:
    message = (
        {"role": "assistant", **content} if isinstance(content, dict) else {"role": "assistant", "content": content}
    )
    return {
        "id": "stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 7, "total_tokens": prompt_tokens + 7},
    }


class RateLimits:
    """A provider's limits as a token bucket per minute, the way OpenAI states them: ``rpm``
    requests and ``tpm`` tokens (prompt, by characters / 4, plus 7 completion tokens) a
    minute, with ``burst_s`` seconds' worth available at once. Beyond them: 429 with
    ``retry-after-ms`` and ``retry-after``. Every answer carries ``x-ratelimit-*`` headers
    (``headers=False``: none, a provider that says nothing). Counts what it served."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None, *, burst_s: float = 1.0,
                 delay_s: float = 0.0, headers: bool = True) -> None:  # fmt: skip
        self.rpm, self.tpm, self.burst_s, self.delay_s, self.headers = rpm, tpm, burst_s, delay_s, headers
        self.requests_left = self._capacity(rpm)
        self.tokens_left = self._capacity(tpm)
        self.updated = time.monotonic()
        self.n_ok = 0
        self.n_limited = 0
        self.ok_times: list[float] = []
        self.limited_times: list[float] = []
        self.tokens_served = 0.0

    def _capacity(self, per_minute: float | None) -> float:
        return max(1.0, per_minute * self.burst_s / 60) if per_minute else float("inf")

    def _refill(self) -> None:
        now = time.monotonic()
        elapsed, self.updated = now - self.updated, now
        if self.rpm:
            self.requests_left = min(self._capacity(self.rpm), self.requests_left + elapsed * self.rpm / 60)
        if self.tpm:
            self.tokens_left = min(self._capacity(self.tpm), self.tokens_left + elapsed * self.tpm / 60)

    def admit(self, tokens: float) -> float:
        """0 when the request is admitted (and counted), else seconds until it would be."""
        self._refill()
        waits = []
        if self.rpm and self.requests_left < 1:
            waits.append((1 - self.requests_left) * 60 / self.rpm)
        if self.tpm and self.tokens_left < tokens:
            waits.append((min(tokens, self._capacity(self.tpm)) - self.tokens_left) * 60 / self.tpm)
        if waits:
            self.n_limited += 1
            self.limited_times.append(time.monotonic())
            return max(waits)
        self.requests_left -= 1
        self.tokens_left -= tokens
        return 0.0

    def served(self, tokens: float) -> None:
        self.n_ok += 1
        self.ok_times.append(time.monotonic())
        self.tokens_served += tokens

    def header_values(self) -> dict[str, str]:
        if not self.headers:
            return {}
        self._refill()
        out: dict[str, str] = {}
        for kind, per_minute, left in (
            ("requests", self.rpm, self.requests_left),
            ("tokens", self.tpm, self.tokens_left),
        ):
            if per_minute:
                full = (self._capacity(per_minute) - left) * 60 / per_minute
                out |= {f"x-ratelimit-limit-{kind}": str(int(per_minute)),
                        f"x-ratelimit-remaining-{kind}": str(max(0, math.floor(left))),
                        f"x-ratelimit-reset-{kind}": f"{max(0.0, full) * 1000:.0f}ms"}  # fmt: skip
        return out


def _prompt_tokens(body: dict[str, Any]) -> float:
    text = "".join(str(m.get("content") or "") for m in body.get("messages") or [])
    return max(1.0, len(text) / 4)


def make_app(
    default_content: str,
    script: deque[tuple[int, Any]],
    requests: list[dict[str, Any]],
    limits: RateLimits | None = None,
) -> Any:
    from aiohttp import web

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        requests.append(body)
        if limits is not None:
            tokens = _prompt_tokens(body) + 7
            wait = limits.admit(tokens)
            if wait > 0:
                headers = {**limits.header_values(), "retry-after-ms": f"{wait * 1000:.0f}",
                           "retry-after": str(math.ceil(wait))} if limits.headers else {}  # fmt: skip
                return web.json_response({"error": {"message": "Rate limit reached for requests", "type": "requests",
                                                    "code": "rate_limit_exceeded"}}, status=429, headers=headers)  # fmt: skip
            if limits.delay_s:
                await asyncio.sleep(limits.delay_s)
            limits.served(tokens)
            answer = _completion(body.get("model", "stub"), default_content, prompt_tokens=round(tokens) - 7)
            return web.json_response(answer, headers=limits.header_values())
        status, content = script.popleft() if script else (200, default_content)
        if status != 200:
            # "{api_key}" in an error is replaced by the key the client sent, as providers
            # do ("Incorrect API key provided: sk-..."): for tests that no secret leaks.
            key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            message = str(content).replace("{api_key}", key)
            return web.json_response({"error": {"message": message, "type": "stub_error", "code": status}},
                                     status=status)  # fmt: skip
        return web.json_response(_completion(body.get("model", "stub"), content))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    app.router.add_post("/chat/completions", handle)
    return app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class StubServer:
    """The stub in a background thread; use as a context manager."""

    def __init__(self, default_content: str = "{}", port: int | None = None, limits: RateLimits | None = None) -> None:
        self.default_content = default_content
        self.limits = limits
        self.port = port or free_port()
        self.script: deque[tuple[int, Any]] = deque()
        self.requests: list[dict[str, Any]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        from aiohttp import web

        loop = asyncio.new_event_loop()
        self._loop = loop
        runner = web.AppRunner(make_app(self.default_content, self.script, self.requests, self.limits), access_log=None)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", self.port).start())
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    def __enter__(self) -> StubServer:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("stub server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def main() -> None:
    from aiohttp import web

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--content", default="{}")
    args = parser.parse_args()
    app = make_app(args.content, deque(), [])
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
