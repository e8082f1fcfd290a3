"""A loopback OpenAI-compatible chat-completions server for tests and benchmarks.

It answers ``POST /v1/chat/completions`` at once. By default every answer is
``default_content``; ``script`` holds (status, content) pairs, or (status, content,
headers) triples, served first, in order, to inject rate limits (429), server errors (5xx) or bad answers; ``{api_key}`` in
an error's content is replaced by the key the client sent, as providers echo it. A content
that is a mapping is the whole message (e.g. ``{"content": None, "refusal": "..."}``)
for provider signals such as OpenAI's refusal field. It also speaks two batch APIs (see :class:`Batches`): OpenAI's files + batches and
Anthropic's message batches, answering each request as the chat endpoint would. Run it in
a thread (``StubServer``) or as its own process:
``python -m jurybench.testing.stub --port 8765 --content '{"x": 1}'``.
It binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import socket
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import web


def _completion(
    model: str,
    content: object,
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    cached_tokens: int | None = None,
    finish_reason: str = "stop",
) -> dict[str, object]:
    content = dict(content) if isinstance(content, dict) else content
    # A scripted answer's "logprobs" belong to the choice, as a provider sends them.
    logprobs = content.pop("logprobs", None) if isinstance(content, dict) else None
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
                "finish_reason": finish_reason,
                **({"logprobs": logprobs} if logprobs is not None else {}),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            **({"prompt_tokens_details": {"cached_tokens": cached_tokens}} if cached_tokens is not None else {}),
        },
    }


class RateLimits:
    """A provider's limits as a token bucket per minute, the way OpenAI states them: ``rpm``
    requests and ``tpm`` tokens (prompt, by characters / 4, plus 7 completion tokens) a
    minute, with ``burst_s`` seconds' worth available at once. Beyond them: 429 with
    ``retry-after-ms`` and ``retry-after``. Every answer carries ``x-ratelimit-*`` headers
    (``headers=False``: none, a provider that says nothing). Counts what it served."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        burst_s: float = 1.0,
        delay_s: float = 0.0,
        headers: bool = True,
    ) -> None:
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
                out |= {
                    f"x-ratelimit-limit-{kind}": str(int(per_minute)),
                    f"x-ratelimit-remaining-{kind}": str(max(0, math.floor(left))),
                    f"x-ratelimit-reset-{kind}": f"{max(0.0, full) * 1000:.0f}ms",
                }
        return out


class Batches:
    """The batch APIs' state: uploaded files and batches, for ``/v1/files``, ``/v1/batches`` (OpenAI)
    and ``/v1/messages/batches`` (Anthropic).

    A batch is ``validating`` at first, ``in_progress`` after it, and ends ``delay_s`` after it
    was created: ``completed`` with every answer, or, with ``expire_after=N``, ``expired`` with
    only its first N answers (the next batch only; later ones complete). ``fail=True`` fails the
    next batch at validation. Answers come from
    the server's script, then its default content, as for the chat endpoint; a scripted error
    status is that request's error line. ``create_delay_s`` holds the answer to a create after
    the batch exists (to kill a client in between). Counts creates and cancels."""

    def __init__(self, delay_s: float = 0.2, expire_after: int | None = None, create_delay_s: float = 0.0) -> None:
        self.delay_s, self.expire_after, self.create_delay_s = delay_s, expire_after, create_delay_s
        self.fail = False
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.n_created = 0
        self.n_polled = 0  # looks at a batch's state (a client polls only what it has recorded)
        self.n_cancelled = 0
        self.requests_seen = 0

    def create(
        self,
        protocol: str,
        requests: list[dict[str, object]],
        metadata: dict[str, object] | None,
        input_file_id: str | None = None,
    ) -> dict[str, object]:
        self.n_created += 1
        batch_id = f"batch_{protocol[:3]}_{self.n_created}_{int(time.time() * 1000) % 100000}"
        batch = {
            "id": batch_id,
            "protocol": protocol,
            "requests": requests,
            "metadata": metadata or {},
            "created": time.time(),
            "input_file_id": input_file_id,
            "results": None,
            "cancelled": False,
            "failed": self.fail,
            "expire_after": self.expire_after,
        }
        self.fail = False
        self.expire_after = None
        self.batches[batch_id] = batch
        self.requests_seen += len(requests)
        return batch

    def state(self, batch: dict[str, Any]) -> str:
        age = time.time() - batch["created"]
        if batch["failed"]:
            return "failed"
        if batch["cancelled"]:
            return "cancelled"
        if age < min(0.05, self.delay_s / 2):
            return "validating"
        if age < self.delay_s:
            return "in_progress"
        return "expired" if batch["expire_after"] is not None else "completed"

    def settle(self, batch: dict[str, Any], answer: Any) -> list[tuple[str, int, Any, dict[str, Any]]]:
        """(custom_id, status, content, request) for every request answered, computed once."""
        if batch["results"] is None:
            requests = batch["requests"]
            if batch["expire_after"] is not None:
                requests = requests[: batch["expire_after"]]
            if batch["cancelled"] or batch["failed"]:
                requests = []
            batch["results"] = [(r["custom_id"], *answer(), r) for r in requests]
        return list(batch["results"])


class PromptCache:
    """A provider's automatic prompt cache, as OpenAI describes its own: a prompt that starts with
    at least ``min_tokens`` tokens already sent reads them from the cache, in whole blocks of
    ``block`` tokens, and the answer's usage says how many (``prompt_tokens_details.cached_tokens``).
    The stub's tokens are characters / 4 of the messages' text in order; it remembers the last
    ``remember`` prompts."""

    def __init__(self, min_tokens: int = 1024, block: int = 128, remember: int = 64) -> None:
        self.min_tokens, self.block = min_tokens, block
        self.seen: deque[str] = deque(maxlen=remember)

    def tokens(self, body: dict[str, Any]) -> tuple[int, int]:
        """(prompt tokens, of which read from the cache) for a request; remembers its prompt."""
        text = "".join(str(m.get("content") or "") for m in body.get("messages") or [])
        shared = max((_common_length(text, old) for old in self.seen), default=0)
        self.seen.append(text)
        tokens = shared // 4
        cached = (tokens // self.block) * self.block if tokens >= self.min_tokens else 0
        return max(1, len(text) // 4), cached


def _common_length(a: str, b: str) -> int:
    """The length of the longest common prefix of two texts (bisected on slices)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while high - low > 1:  # a[:low] is common, a[:high] is not
        middle = (low + high) // 2
        low, high = (middle, high) if a[:middle] == b[:middle] else (low, middle)
    return low


def _prompt_tokens(body: dict[str, Any]) -> float:
    text = "".join(str(m.get("content") or "") for m in body.get("messages") or [])
    return max(1.0, len(text) / 4)


# The provider endpoints the stub plays: (method, path, the _Stub handler).
ROUTES = (
    ("POST", "/v1/chat/completions", "handle"),
    ("POST", "/chat/completions", "handle"),
    ("POST", "/v1/files", "upload"),
    ("GET", "/v1/files/{file_id}/content", "file_content"),
    ("POST", "/v1/batches", "create_batch"),
    ("GET", "/v1/batches", "list_batches"),
    ("GET", "/v1/batches/{batch_id}", "get_batch"),
    ("POST", "/v1/batches/{batch_id}/cancel", "cancel_batch"),
    ("POST", "/v1/messages/batches", "anthropic_create"),
    ("GET", "/v1/messages/batches", "anthropic_list"),
    ("GET", "/v1/messages/batches/{batch_id}", "anthropic_get"),
    ("GET", "/v1/messages/batches/{batch_id}/results", "anthropic_results"),
    ("POST", "/v1/messages/batches/{batch_id}/cancel", "cancel_batch"),
)


def make_app(
    default_content: str,
    script: deque[tuple[Any, ...]],
    requests: list[dict[str, object]],
    limits: RateLimits | None = None,
    batches: Batches | None = None,
    cache: PromptCache | None = None,
    seen_headers: list[dict[str, str]] | None = None,
) -> Any:
    from aiohttp import web

    stub = _Stub(default_content, script, requests, limits, batches, cache, seen_headers)
    app = web.Application(client_max_size=256 * 1024 * 1024)
    for method, path, handler in ROUTES:
        app.router.add_route(method, path, getattr(stub, handler))
    return app


class _Stub:
    """The stub's state and its handlers (chat completions, OpenAI's files and batches,
    Anthropic's message batches)."""

    def __init__(
        self,
        default_content: str,
        script: deque[tuple[Any, ...]],
        requests: list[dict[str, object]],
        limits: RateLimits | None,
        batches: Batches | None,
        cache: PromptCache | None,
        seen_headers: list[dict[str, str]] | None,
    ) -> None:
        from aiohttp import web

        self.web = web
        self.default_content = default_content
        self.script = script
        self.requests = requests
        self.limits = limits
        self.book = batches if batches is not None else Batches()
        self.cache = cache
        self.seen_headers = seen_headers
        self.request_base: dict[str, str] = {}

    def next_answer(self) -> tuple[Any, ...]:
        return self.script.popleft() if self.script else (200, self.default_content)

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if self.seen_headers is not None:  # what the client sent, for tests of headers and credentials
            seen = {name.lower(): value for name, value in request.headers.items()}
            self.seen_headers.append({**seen, ":path": request.path, ":query": request.query_string})
        if self.limits is not None:
            tokens = _prompt_tokens(body) + 7
            wait = self.limits.admit(tokens)
            if wait > 0:
                headers = (
                    {
                        **self.limits.header_values(),
                        "retry-after-ms": f"{wait * 1000:.0f}",
                        "retry-after": str(math.ceil(wait)),
                    }
                    if self.limits.headers
                    else {}
                )
                return self.web.json_response(
                    {
                        "error": {
                            "message": "Rate limit reached for requests",
                            "type": "requests",
                            "code": "rate_limit_exceeded",
                        }
                    },
                    status=429,
                    headers=headers,
                )
            if self.limits.delay_s:
                await asyncio.sleep(self.limits.delay_s)
            answer = _completion(body.get("model", "stub"), self.default_content, prompt_tokens=round(tokens) - 7)
            response = self.web.json_response(answer, headers=self.limits.header_values())
            # Counted once written to the socket: an answer still being built is not one a
            # client could have received (the kill -9 bench counts these).
            try:
                await response.prepare(request)
                await response.write_eof()
            except ConnectionError:  # the client went away (a killed run): nothing was served
                return response
            self.limits.served(tokens)
            return response
        entry = self.script.popleft() if self.script else (200, self.default_content)
        status, content = entry[0], entry[1]
        extra = {str(k): str(v) for k, v in (entry[2] if len(entry) > 2 else {}).items()}  # scripted headers
        # A scripted answer's usage: "x-stub-completion-tokens" (not sent) is its completion tokens.
        answered = int(extra.pop("x-stub-completion-tokens", 7))
        # A provider stops at the request's max_tokens and says so ("length"): so does the stub.
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        cut = isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit < answered
        answered = int(limit) if cut else answered
        # ... and "x-stub-prompt-tokens" / "x-stub-cached-tokens" its prompt tokens and those read from a cache
        asked = int(extra.pop("x-stub-prompt-tokens", 11))
        cached: Any = extra.pop("x-stub-cached-tokens", None)
        if self.cache is not None and status == 200:  # a provider's prompt cache: the prompt's own tokens
            asked, cached = self.cache.tokens(body)
        if status != 200:
            # "{api_key}" in an error is replaced by the key the client sent, as providers
            # do ("Incorrect API key provided: sk-..."): for tests that no secret leaks.
            key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            message = str(content).replace("{api_key}", key)
            return self.web.json_response(
                {"error": {"message": message, "type": "stub_error", "code": status}}, status=status, headers=extra
            )
        return self.web.json_response(
            _completion(
                body.get("model", "stub"),
                content,
                prompt_tokens=asked,
                completion_tokens=answered,
                cached_tokens=int(cached) if cached is not None else None,
                finish_reason="length" if cut else "stop",
            ),
            headers=extra,
        )

    def openai_batch(self, batch: dict[str, Any]) -> dict[str, object]:
        state = self.book.state(batch)
        total = len(batch["requests"])
        out: dict[str, object] = {
            "id": batch["id"],
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "status": state,
            "input_file_id": batch["input_file_id"],
            "created_at": int(batch["created"]),
            "metadata": batch["metadata"],
            "request_counts": {"total": total, "completed": 0, "failed": 0},
            "output_file_id": None,
            "error_file_id": None,
            "errors": None,
        }
        if state == "failed":
            out["errors"] = {"data": [{"code": "invalid_request", "message": "the input file could not be read"}]}
        if state in ("completed", "expired", "cancelled"):
            results = self.book.settle(batch, self.next_answer)
            ok = sum(1 for _, status, _, _ in results if status == 200)
            out["request_counts"] = {"total": total, "completed": ok, "failed": len(results) - ok}
            if ok:
                out["output_file_id"] = f"out_{batch['id']}"
            if len(results) > ok:
                out["error_file_id"] = f"err_{batch['id']}"
        return out

    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        field = form["file"]
        data = field.file.read() if hasattr(field, "file") else bytes(str(field), "utf-8")
        file_id = f"file_{len(self.book.files) + 1}"
        self.book.files[file_id] = data
        return self.web.json_response(
            {"id": file_id, "object": "file", "purpose": form.get("purpose"), "bytes": len(data)}
        )

    async def create_batch(self, request: web.Request) -> web.Response:
        body = await request.json()
        data = self.book.files.get(body.get("input_file_id", ""))
        if data is None:
            return self.web.json_response({"error": {"message": "no such file"}}, status=400)
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        self.requests.extend(line["body"] for line in lines)
        batch = self.book.create("openai", lines, body.get("metadata"), body["input_file_id"])
        if self.book.create_delay_s:
            await asyncio.sleep(self.book.create_delay_s)
        return self.web.json_response(self.openai_batch(batch))

    async def get_batch(self, request: web.Request) -> web.Response:
        self.book.n_polled += 1
        batch = self.book.batches.get(request.match_info["batch_id"])
        if batch is None:
            return self.web.json_response({"error": {"message": "no such batch"}}, status=404)
        return self.web.json_response(self.openai_batch(batch))

    async def list_batches(self, request: web.Request) -> web.Response:
        data = [self.openai_batch(b) for b in reversed(self.book.batches.values()) if b["protocol"] == "openai"]
        return self.web.json_response({"object": "list", "data": data, "has_more": False})

    async def cancel_batch(self, request: web.Request) -> web.Response:
        batch = self.book.batches.get(request.match_info["batch_id"])
        if batch is None:
            return self.web.json_response({"error": {"message": "no such batch"}}, status=404)
        if self.book.state(batch) not in ("completed", "expired", "failed"):
            batch["cancelled"] = True
            self.book.n_cancelled += 1
        if batch["protocol"] == "anthropic":
            return self.web.json_response(self.anthropic_batch(batch))
        return self.web.json_response(self.openai_batch(batch))

    async def file_content(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        kind, _, batch_id = file_id.partition("_")
        batch = self.book.batches.get(batch_id)
        if batch is None or kind not in ("out", "err"):
            return self.web.json_response({"error": {"message": "no such file"}}, status=404)
        lines = []
        for custom_id, status, content, line in self.book.settle(batch, self.next_answer):
            if (status == 200) != (kind == "out"):
                continue
            body = line["body"]
            answer = (
                _completion(body.get("model", "stub"), content, round(_prompt_tokens(body)))
                if status == 200
                else {"error": {"message": str(content), "type": "stub_error"}}
            )
            lines.append(
                json.dumps(
                    {
                        "id": f"r_{custom_id[:8]}",
                        "custom_id": custom_id,
                        "error": None,
                        "response": {"status_code": status, "body": answer},
                    }
                )
            )
        return self.web.Response(text="\n".join(lines) + "\n", content_type="application/jsonl")

    def anthropic_batch(self, batch: dict[str, Any]) -> dict[str, object]:
        state = self.book.state(batch)
        total = len(batch["requests"])
        ended = state in ("completed", "expired", "cancelled", "failed")
        counts = {"processing": 0 if ended else total, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if ended:
            results = self.book.settle(batch, self.next_answer)
            counts["succeeded"] = sum(1 for _, status, _, _ in results if status == 200)
            counts["errored"] = len(results) - counts["succeeded"]
            missing = total - len(results)
            counts["canceled" if batch["cancelled"] else "expired"] = missing
        base = str(self.request_base.get("url", ""))
        from datetime import UTC, datetime

        created = datetime.fromtimestamp(batch["created"], UTC).isoformat().replace("+00:00", "Z")
        return {
            "id": batch["id"],
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "created_at": created,
            "request_counts": counts,
            "cancel_initiated_at": "now" if batch["cancelled"] else None,
            "results_url": f"{base}/v1/messages/batches/{batch['id']}/results" if ended else None,
        }

    async def anthropic_create(self, request: web.Request) -> web.Response:
        self.request_base["url"] = f"{request.scheme}://{request.host}"
        body = await request.json()
        lines = body.get("requests") or []
        self.requests.extend(line["params"] for line in lines)
        batch = self.book.create("anthropic", lines, None)
        if self.book.create_delay_s:
            await asyncio.sleep(self.book.create_delay_s)
        return self.web.json_response(self.anthropic_batch(batch))

    async def anthropic_get(self, request: web.Request) -> web.Response:
        self.request_base["url"] = f"{request.scheme}://{request.host}"
        self.book.n_polled += 1
        batch = self.book.batches.get(request.match_info["batch_id"])
        if batch is None:
            return self.web.json_response({"type": "error", "error": {"type": "not_found_error"}}, status=404)
        return self.web.json_response(self.anthropic_batch(batch))

    async def anthropic_list(self, request: web.Request) -> web.Response:
        """Anthropic's list: newest first, ``limit`` a page, ``after_id`` for the next page."""
        self.request_base["url"] = f"{request.scheme}://{request.host}"
        mine = [b for b in reversed(self.book.batches.values()) if b["protocol"] == "anthropic"]
        after = request.query.get("after_id")
        if after:
            ids = [b["id"] for b in mine]
            mine = mine[ids.index(after) + 1 :] if after in ids else []
        limit = int(request.query.get("limit") or 20)
        page = [self.anthropic_batch(b) for b in mine[:limit]]
        return self.web.json_response(
            {
                "data": page,
                "has_more": len(mine) > limit,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
            }
        )

    async def anthropic_results(self, request: web.Request) -> web.Response:
        batch = self.book.batches.get(request.match_info["batch_id"])
        if batch is None:
            return self.web.json_response({"type": "error", "error": {"type": "not_found_error"}}, status=404)
        lines = []
        answered = set()
        for custom_id, status, content, line in self.book.settle(batch, self.next_answer):
            answered.add(custom_id)
            params = line["params"]
            if status == 200:
                text = content if isinstance(content, str) else json.dumps(content)
                usage = {"input_tokens": round(_prompt_tokens(params)), "output_tokens": 7}
                message = {
                    "id": f"msg_{custom_id[:8]}",
                    "type": "message",
                    "role": "assistant",
                    "model": params.get("model"),
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "usage": usage,
                }
                result: dict[str, object] = {"type": "succeeded", "message": message}
            else:
                kind = "api_error" if status >= 500 else "invalid_request_error"
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": kind, "message": str(content)}},
                }
            lines.append(json.dumps({"custom_id": custom_id, "result": result}))
        for line in batch["requests"]:
            if line["custom_id"] not in answered:
                kind = "canceled" if batch["cancelled"] else "expired"
                lines.append(json.dumps({"custom_id": line["custom_id"], "result": {"type": kind}}))
        return self.web.Response(text="\n".join(lines) + "\n", content_type="application/binary")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class StubServer:
    """The stub in a background thread; use as a context manager."""

    def __init__(
        self,
        default_content: str = "{}",
        port: int | None = None,
        limits: RateLimits | None = None,
        batches: Batches | None = None,
        cache: PromptCache | None = None,
    ) -> None:
        self.default_content = default_content
        self.cache = cache
        self.limits = limits
        self.batches = batches if batches is not None else Batches()
        self.port = port or free_port()
        self.script: deque[tuple[Any, ...]] = deque()
        self.requests: list[dict[str, object]] = []
        self.headers: list[dict[str, str]] = []  # each chat request's headers (names in lower case), in order
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
        runner = web.AppRunner(
            make_app(
                self.default_content, self.script, self.requests, self.limits, self.batches, self.cache, self.headers
            ),
            access_log=None,
        )
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
    parser.add_argument("--batch-delay", type=float, default=0.2, help="seconds until a batch ends")
    args = parser.parse_args()
    app = make_app(args.content, deque(), [], batches=Batches(delay_s=args.batch_delay))
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
