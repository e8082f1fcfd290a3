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
import socket
import threading
import time
from collections import deque
from typing import Any


def _completion(model: str, content: Any) -> dict[str, Any]:
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
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def make_app(default_content: str, script: deque[tuple[int, Any]], requests: list[dict[str, Any]]) -> Any:
    from aiohttp import web

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        requests.append(body)
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

    def __init__(self, default_content: str = "{}", port: int | None = None) -> None:
        self.default_content = default_content
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
        runner = web.AppRunner(make_app(self.default_content, self.script, self.requests), access_log=None)
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
