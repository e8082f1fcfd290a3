"""A lean transport for endpoints that speak the OpenAI chat API (OpenAI, vLLM, llama.cpp's
server, Ollama's /v1, ``hosted_vllm/``, ``openai/`` with an ``api_base``): one request is one
JSON body posted over a connection pool the process shares per endpoint (aiohttp), and one JSON
answer read as plain dicts. What litellm's transport does around a call stays the same, because
it is inherited: the juror's parameters, the structured mode and its ``response_format``, log
probabilities, the endpoint's limiter fed by the answer's rate-limit headers, and the errors
classified for the engine. Only the request and its parsing are new, and the price is read from
litellm's offline price map once, not per call.

Chosen by default wherever it applies (``transport=auto``; ``JURYBENCH_TRANSPORT`` changes
the default), or per juror: ``transport=litellm`` keeps litellm's path, ``transport=openai``
asks for this one and is refused in one line where it does not apply (another provider,
instructor, ``hosted_vllm/`` without an ``api_base``) rather than sent a way it was not asked for."""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import TYPE_CHECKING, Any

from jurybench.jurors._completion import (
    Backend,
    Completion,
    JurorUnusable,
    Messages,
    PermanentError,
    RateLimited,
    Slot,
    TransientError,
)
from jurybench.jurors._endpoint_limits import read_headers
from jurybench.jurors._kind_litellm import LiteLLMBackend, cache_marked
from jurybench.jurors._kinds import JurorKind
from jurybench.rubric import tokens_from_logprobs

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.jurors._spec import JurorSpec
    from jurybench.rubric import AnyRubric

LEAN_PROVIDERS = frozenset({"openai", "hosted_vllm"})
TRANSPORTS = ("litellm", "openai", "auto")
# Request fields the OpenAI chat API names; any other parameter goes in the body as it is
# (a server's own sampling options, such as llama.cpp's repeat_penalty).
_NOT_SENT = frozenset({"api_base", "api_key", "timeout", "max_retries", "extra_headers", "headers", "client"})
DEFAULT_BASE = "https://api.openai.com/v1"


def lean_endpoint(spec: JurorSpec) -> tuple[str, str]:
    """The endpoint's base URL (without user-info or query) and its query: the juror's
    ``api_base``, else (openai/) ``OPENAI_BASE_URL`` or ``OPENAI_API_BASE``, else OpenAI's API."""
    from urllib.parse import urlsplit, urlunsplit

    given = spec.options.get("api_base")
    if not given and spec.provider == "openai":
        given = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    parts = urlsplit(str(given or DEFAULT_BASE))
    host = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", "")), parts.query


def transport_of(spec: JurorSpec) -> str:
    """The juror's transport: ``transport=`` litellm, openai (refused where the endpoint does not
    speak the OpenAI chat API, or with instructor) or auto (openai where it applies, else
    litellm); unsaid, ``JURYBENCH_TRANSPORT`` or auto."""
    import os

    from jurybench.errors import JurybenchError

    chosen = str(spec.option("transport", os.environ.get("JURYBENCH_TRANSPORT") or "auto")).strip().lower()
    if chosen not in TRANSPORTS:
        raise JurybenchError(
            f"juror '{spec.display_name}': transport={chosen!r} is not a transport.",
            hint="transport=auto (the default: openai where it applies), litellm or openai (OpenAI-compatible endpoints).",
        )
    # hosted_vllm/ has no endpoint of its own: litellm's transport reads it from its environment
    has_endpoint = spec.provider == "openai" or bool(spec.options.get("api_base"))
    fits = spec.provider in LEAN_PROVIDERS and spec.params.get("structured") != "instructor" and has_endpoint
    if chosen == "auto":
        return "openai" if fits else "litellm"
    if chosen == "openai" and not fits:
        if spec.provider in LEAN_PROVIDERS and not has_endpoint:
            raise JurybenchError(
                f"juror '{spec.display_name}': transport=openai needs the server's api_base.",
                hint="Add api_base=http://HOST:PORT/v1 to the juror, or drop transport=.",
            )
        if spec.provider not in LEAN_PROVIDERS:
            raise JurybenchError(
                f"juror '{spec.display_name}': transport=openai speaks the OpenAI chat API, which "
                f"{spec.provider}/ does not.",
                hint="Name the endpoint as openai/<model>,api_base=... or hosted_vllm/<model>, or drop transport=.",
            )
        raise JurybenchError(
            f"juror '{spec.display_name}': structured=instructor goes through litellm.",
            hint="Drop transport=openai, or use structured=schema or json.",
        )
    return chosen


class _Pools:
    """One aiohttp session per (event loop, endpoint): connections are kept and shared by every
    juror of the endpoint in that loop; a new loop (a new run) makes new sessions."""

    def __init__(self) -> None:
        import weakref

        # a loop's sessions go with it (a finished run's loop is not kept alive by them)
        self.sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
            weakref.WeakKeyDictionary()
        )
        self.closers: set[asyncio.Task[None]] = set()  # held: the loop keeps only weak references

    def get(self, base: str, limit: int) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        mine = self.sessions.setdefault(loop, {})
        session = mine.get(base)
        if session is None or session.closed:
            connector = aiohttp.TCPConnector(limit=max(1, limit), ttl_dns_cache=300)
            session = mine[base] = aiohttp.ClientSession(connector=connector, json_serialize=json.dumps, trust_env=True)
            closer = loop.create_task(_close_at_the_end(session))
            self.closers.add(closer)
            closer.add_done_callback(self.closers.discard)
        return session


async def _close_at_the_end(session: Any) -> None:
    """Wait until the loop ends (``asyncio.run`` cancels what still runs), then close the session."""
    try:
        await asyncio.Event().wait()
    finally:
        await session.close()


_POOLS = _Pools()


class LeanOpenAIBackend(LiteLLMBackend):
    """litellm's juror, its request sent and read without litellm (see the module's docstring)."""

    drives_instructor = False

    def __init__(self, spec: JurorSpec, rubric: AnyRubric) -> None:
        from jurybench.jurors._price_map import listed_price

        super().__init__(spec, rubric)
        self.base, query = lean_endpoint(spec)
        self.url = self.base + "/chat/completions" + (f"?{query}" if query else "")  # query: where the server reads it
        self.model = spec.model.split("/", 1)[1] if "/" in spec.model else spec.model
        key = self.kwargs.get("api_key") or os.environ.get(f"{spec.provider.upper()}_API_KEY")
        given: Any = self.kwargs.get("extra_headers") or {}
        headers = {str(k): str(v) for k, v in dict(given).items()}
        if key and not any(k.lower() == "authorization" for k in headers):
            headers["Authorization"] = f"Bearer {key}"
        self.headers = headers
        self.body = {k: v for k, v in self.kwargs.items() if k not in _NOT_SENT}
        self.timeout_s = float(spec.option("timeout", 60))
        self.limit = int(spec.option("concurrency", 256))
        self.price = None if self.local else listed_price(spec)

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        import aiohttp

        start = time.perf_counter()
        sent: Any = cache_marked(messages) if self.mark_cache else messages
        session = _POOLS.get(self.base, self.limit)
        try:
            async with session.post(
                self.url,
                json={"model": self.model, "messages": sent, **self.body},
                headers=self.headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            ) as response:
                raw = await response.read()
                status, headers = response.status, response.headers
        except TimeoutError:
            raise TransientError("request timed out") from None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, ConnectionRefusedError):
                where = self.spec.options.get("api_base") or "the provider's endpoint"
                raise JurorUnusable(
                    f"connection refused at {where}", "start the server, or fix the juror's api_base"
                ) from None
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        except aiohttp.ClientError as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        if status >= 400:
            raise self._refused(status, raw, headers)
        try:
            answer = json.loads(raw)
            choice = answer["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise TransientError(f"an answer that is not a chat completion ({raw[:120]!r})") from None
        return self._read(answer, choice, message, headers, start)

    def _read(
        self, answer: dict[str, Any], choice: dict[str, Any], message: dict[str, Any], headers: Any, start: float
    ) -> Completion:
        usage = answer.get("usage") or {}
        prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        cached = _count((usage.get("prompt_tokens_details") or {}).get("cached_tokens"))
        refusal = message.get("refusal")
        return Completion(
            text=message.get("content") or "",
            refusal=refusal if isinstance(refusal, str) and refusal else None,
            signals=read_headers(headers),
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost_usd=0.0 if self.local else self._cost(prompt, completion, cached),
            latency_ms=(time.perf_counter() - start) * 1000,
            logprobs=tokens_from_logprobs(choice.get("logprobs")),
            cached_tokens=cached,
        )

    def _cost(self, prompt: int | None, completion: int | None, cached: int | None) -> float | None:
        """What litellm's price map says the call cost: prompt tokens (those read from the
        provider's cache at its cache price) and completion tokens; None for a model it does not price."""
        if self.price is None or prompt is None or completion is None:
            return None
        hit = min(cached or 0, prompt)
        read = self.price.input_cached if self.price.input_cached is not None else self.price.input
        return (prompt - hit) * self.price.input + hit * float(read) + completion * self.price.output

    def _refused(self, status: int, raw: bytes, headers: Any) -> Exception:
        """An HTTP error as the engine reads it, worded as litellm's transport words it (the
        OpenAI error's class name, then the provider's message): see :meth:`LiteLLMBackend.classify`."""
        detail = _error_text(raw)
        env = self._key_variable()
        said = f"{ERROR_NAMES.get(status, 'InternalServerError' if status >= 500 else 'APIStatusError')}: {detail}"
        if status == 429:
            if "insufficient_quota" in detail:
                return JurorUnusable(f"quota exhausted ({said})", "check the account's plan and billing")
            return RateLimited(said, read_headers(headers))
        if status == 401:
            return JurorUnusable(f"authentication failed ({said})", f"check {env} or the juror's api_key")
        if status == 403:
            return JurorUnusable(f"access denied ({said})", "check the key's permissions for this model")
        if status == 404:
            return JurorUnusable(
                f"the provider does not know model '{self.spec.model}' ({said})",
                "check the model name (provider/model)",
            )
        if status >= 500 or status in (408, 409):
            return TransientError(said)
        return PermanentError(said)


# The OpenAI client's error classes by status (what litellm's messages begin with).
ERROR_NAMES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    408: "Timeout",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    503: "ServiceUnavailableError",
}


def _count(value: object) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _error_text(raw: bytes) -> str:
    """The provider's error message (OpenAI's ``{"error": {"message": ...}}``), or the body's start."""
    text: object = None
    try:
        found = json.loads(raw)
    except ValueError:
        found = None
    if isinstance(found, dict):
        error = found.get("error")
        text = error.get("message") if isinstance(error, dict) else error
    if not isinstance(text, str) or not text.strip():
        text = raw[:200].decode("utf-8", "replace")
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else ""


def make_litellm(spec: JurorSpec, rubric: AnyRubric, con: Connection, subject_ids: list[str] | None) -> Backend:
    """The default kind's transport: litellm's, or the lean one for OpenAI-compatible endpoints
    (``transport=openai`` or ``auto``); the model string and parameters were checked by check_juror."""
    if transport_of(spec) == "openai":
        return LeanOpenAIBackend(spec, rubric)
    return LiteLLMBackend(spec, rubric)


# The default kind (any model string litellm routes) lives here, beside the transports it chooses between.
KIND = JurorKind("*", make_litellm, "any model string litellm routes (openai/..., ollama/...)")
