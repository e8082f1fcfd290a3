"""Provider batch APIs: many requests in one submission, answered within a day at about half
the synchronous price.

Two protocols are spoken, over plain HTTP (httpx):

* **OpenAI** files + batches (``POST /files`` a JSONL of requests, ``POST /batches``,
  ``GET /batches/{id}``, ``GET /files/{id}/content``, ``POST /batches/{id}/cancel``). OpenAI
  and OpenAI-compatible servers that implement it (vLLM, a LiteLLM proxy) use it.
* **Anthropic** Message Batches (``POST /messages/batches`` with the requests inline,
  ``GET /messages/batches/{id}``, its ``results_url``, ``POST .../cancel``).

litellm 1.106 has batch helpers, but for Anthropic it can only *retrieve* a batch (creating
one and reading its results are not covered), and its OpenAI path adds nothing the four
requests above need; one small client for both keeps one behaviour for errors, retries and
secrets. Each request's ``custom_id`` is its call key, so results are matched to calls
whatever order they come back in.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurybench.jurors._completion import Completion, JurorUnusable, PermanentError, TransientError
from jurybench.jurors._spec import JurorSpec
from jurybench.rubric import tokens_from_logprobs

# Per-batch limits the providers publish: OpenAI 50,000 requests and 200 MB per input file;
# Anthropic 100,000 requests or 256 MB per batch. A little is kept back on bytes.
LIMITS = {"openai": (50_000, 190 * 1024 * 1024), "anthropic": (100_000, 240 * 1024 * 1024)}
DEFAULT_BASE = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com/v1"}
# Normalised batch states. Terminal ones have results to collect (or none to wait for).
TERMINAL = frozenset({"completed", "expired", "failed", "cancelled"})
STATES = ("submitting", "validating", "in_progress", "finalizing", "cancelling", *sorted(TERMINAL))


@dataclass
class BatchStatus:
    status: str  # one of STATES
    counts: dict[str, int] = field(default_factory=dict)  # total, completed, failed
    output: str | None = None  # where the results are: a file id (OpenAI) or a URL (Anthropic)
    errors: str | None = None  # OpenAI's error file id
    message: str | None = None  # why a batch failed


@dataclass
class Result:
    """One request's answer in a batch: a completion, or an error (retryable or not)."""

    call_key: str
    completion: Completion | None = None
    error: str | None = None
    retryable: bool = False


def protocol_of(spec: JurorSpec) -> str | None:
    """The batch protocol a juror's endpoint speaks, or None when it has none."""
    chosen = spec.options.get("batch_api")
    if chosen:
        return str(chosen)
    return spec.provider if spec.provider in LIMITS else None


def check_batch_juror(spec: JurorSpec) -> None:
    """A one-line error for a juror that cannot go through a batch API."""
    from jurybench.errors import JurybenchError

    chosen = spec.options.get("batch_api")
    if chosen is not None and chosen not in LIMITS:
        raise JurybenchError(
            f"juror '{spec.display_name}': batch_api={chosen!r} is not a batch protocol.",
            hint="Valid: openai, anthropic.",
        )
    if spec.params.get("structured") == "instructor" and protocol_of(spec):
        raise JurybenchError(
            f"juror '{spec.display_name}': structured=instructor makes its own re-asks and cannot go through a "
            "batch API.",
            hint="Use structured=json (the default) with --batch.",
        )


def model_name(spec: JurorSpec) -> str:
    return spec.model.split("/", 1)[1] if "/" in spec.model else spec.model


class BatchClient:
    """One endpoint's batch API (``protocol`` openai or anthropic) with the juror's key."""

    def __init__(self, protocol: str, api_base: str | None, api_key: str | None) -> None:
        self.protocol = protocol
        self.base = (api_base or DEFAULT_BASE[protocol]).rstrip("/")
        self.api_key = api_key
        self._client: Any = None

    @classmethod
    def for_juror(cls, spec: JurorSpec) -> BatchClient:
        protocol = protocol_of(spec)
        assert protocol is not None
        key = spec.options.get("api_key") or os.environ.get(f"{spec.provider.upper()}_API_KEY")
        return cls(protocol, spec.options.get("api_base"), key)

    @property
    def limits(self) -> tuple[int, int]:
        return LIMITS[self.protocol]

    def _headers(self) -> dict[str, str]:
        if self.protocol == "anthropic":
            return {"x-api-key": self.api_key or "", "anthropic-version": "2023-06-01"}
        return {"authorization": f"Bearer {self.api_key or ''}"}

    async def _request(self, method: str, path: str, **kwargs: object) -> Any:
        """One HTTP request; errors classified as the engine's transient / permanent / unusable."""
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(120.0, connect=10.0))
        url = path if path.startswith("http") else f"{self.base}{path}"
        try:
            response = await self._client.request(method, url, headers=self._headers(), **kwargs)
        except httpx.ConnectError as exc:
            raise JurorUnusable(
                f"no batch API reachable at {self.base} ({exc})", "check the juror's api_base"
            ) from None
        except httpx.TransportError as exc:
            raise TransientError(f"batch API: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 400:
            text = _error_text(response)
            if response.status_code in (401, 403):
                raise JurorUnusable(f"batch API refused the key ({text})", "check the juror's API key")
            if response.status_code == 404 and method == "POST" and path in ("/files", "/batches", "/messages/batches"):
                raise JurorUnusable(f"{self.base} has no batch API ({text})", "run without --batch")
            if response.status_code == 429 or response.status_code >= 500:
                raise TransientError(f"batch API {response.status_code}: {text}")
            raise PermanentError(f"batch API {response.status_code}: {text}")
        return response

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # -- the protocol ------------------------------------------------------------------
    def request_line(self, call_key: str, body: dict[str, object]) -> dict[str, object]:
        """One request as the batch file (OpenAI) or the request list (Anthropic) holds it."""
        if self.protocol == "anthropic":
            return {"custom_id": call_key, "params": body}
        return {"custom_id": call_key, "method": "POST", "url": "/v1/chat/completions", "body": body}

    async def submit(self, lines: Sequence[dict[str, object]], local_id: str) -> tuple[str, str | None]:
        """Send one batch; the provider's batch id and the uploaded file's id (OpenAI)."""
        if self.protocol == "anthropic":
            response = await self._request("POST", "/messages/batches", json={"requests": list(lines)})
            return str(response.json()["id"]), None
        payload = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        upload = await self._request(
            "POST", "/files", data={"purpose": "batch"}, files={"file": (f"{local_id}.jsonl", payload)}
        )
        file_id = str(upload.json()["id"])
        created = await self._request(
            "POST",
            "/batches",
            json={
                "input_file_id": file_id,
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
                "metadata": {"jurybench_batch": local_id},
            },
        )
        return str(created.json()["id"]), file_id

    async def find(
        self, local_id: str, since: float, *, keys: Sequence[str] = (), claimed: Collection[str] = ()
    ) -> str | None:
        """A batch this store asked for but never heard back about (the process died between
        the provider's accepting it and the store's recording that). OpenAI's batches carry our
        id in their metadata; Anthropic's carry none, so there it is the batch created since the
        row was written with as many requests as ``keys``, not ``claimed`` by another row of
        the store, and, once ended, whose results are exactly ``keys`` (the custom ids)."""
        if self.protocol == "anthropic":
            return await self._find_anthropic(since, keys, claimed)
        after: str | None = None
        for _ in range(20):  # newest first, 100 a page; only batches made since the row was written
            params: dict[str, object] = {"limit": 100, **({"after": after} if after else {})}
            page = (await self._request("GET", "/batches", params=params)).json()
            for batch in page.get("data") or []:
                if (batch.get("metadata") or {}).get("jurybench_batch") == local_id:
                    return str(batch["id"])
                if float(batch.get("created_at") or 0) < since - 60:
                    return None
            if not page.get("has_more") or not page.get("data"):
                return None
            after = page["data"][-1]["id"]
        return None

    async def _find_anthropic(self, since: float, keys: Sequence[str], claimed: Collection[str]) -> str | None:
        from datetime import datetime

        wanted = set(keys)
        after: str | None = None
        candidates: list[tuple[float, str, bool]] = []
        for _ in range(20):  # newest first; only batches made since the row was written
            params: dict[str, object] = {"limit": 100, **({"after_id": after} if after else {})}
            page = (await self._request("GET", "/messages/batches", params=params)).json()
            old = False
            for batch in page.get("data") or []:
                try:
                    created = datetime.fromisoformat(str(batch.get("created_at")).replace("Z", "+00:00")).timestamp()
                except ValueError:
                    continue
                if created < since - 60:
                    old = True
                    break
                counts = batch.get("request_counts") or {}
                size = sum(int(v or 0) for v in counts.values() if isinstance(v, int | float))
                if batch.get("id") not in claimed and size == len(wanted):
                    candidates.append((created, str(batch["id"]), batch.get("processing_status") == "ended"))
            if old or not page.get("has_more") or not page.get("data"):
                break
            after = page.get("last_id") or page["data"][-1]["id"]
        for _, batch_id, ended in sorted(candidates):  # the earliest after the row was written first
            if not ended:
                return batch_id
            text = (await self._request("GET", f"/messages/batches/{batch_id}/results")).text
            if {line.get("custom_id") for line in _lines(text)} == wanted:
                return batch_id
        return None

    async def status(self, batch_id: str) -> BatchStatus:
        if self.protocol == "anthropic":
            data = (await self._request("GET", f"/messages/batches/{batch_id}")).json()
            counts = data.get("request_counts") or {}
            state = {"in_progress": "in_progress", "canceling": "cancelling", "ended": "completed"}.get(
                data.get("processing_status"), "in_progress"
            )
            if state == "completed" and data.get("cancel_initiated_at"):
                state = "cancelled"
            done = counts.get("succeeded", 0)
            failed = sum(counts.get(k, 0) for k in ("errored", "canceled", "expired"))
            total = done + failed + counts.get("processing", 0)
            return BatchStatus(state, {"total": total, "completed": done, "failed": failed}, data.get("results_url"))
        data = (await self._request("GET", f"/batches/{batch_id}")).json()
        counts = data.get("request_counts") or {}
        message = None
        errors = data.get("errors") or {}
        if isinstance(errors, dict) and errors.get("data"):
            message = "; ".join(str(e.get("message")) for e in errors["data"][:3])
        state = data.get("status") if data.get("status") in STATES else "in_progress"
        return BatchStatus(
            state,
            {k: int(counts.get(k) or 0) for k in ("total", "completed", "failed")},
            data.get("output_file_id"),
            data.get("error_file_id"),
            message,
        )

    async def results(self, status: BatchStatus, cost: object) -> list[Result]:
        """Every result the batch has (output and error files), with ``cost(completion)`` as the
        price of each answer."""
        out: list[Result] = []
        sources = [s for s in (status.output, status.errors) if s]
        for source in sources:
            path = source if self.protocol == "anthropic" else f"/files/{source}/content"
            text = (await self._request("GET", path)).text
            for line in _lines(text):
                out.append(self.read_line(line, cost))
        return out

    def read_line(self, line: dict[str, object], cost: object) -> Result:
        """One output line as its call's result; a line the protocol does not describe (no
        object body, a choice that is null, token counts as text, a status that is not a
        number) is that call's error with the reason, so the batch's other answers are kept."""
        key = str(line.get("custom_id"))
        try:
            result = self._result(line, cost)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            return Result(key, error=f"batch answer unreadable ({type(exc).__name__}: {str(exc)[:200]})")
        return result

    def _result(self, line: dict[str, Any], cost: Any) -> Result:
        key = str(line.get("custom_id"))
        if self.protocol == "anthropic":
            result = line.get("result") or {}
            kind = result.get("type")
            if kind == "succeeded":
                message = result.get("message") or {}
                text = "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")
                usage = message.get("usage") or {}
                completion = Completion(
                    text=text,
                    finish_reason=_anthropic_finish(message.get("stop_reason")),
                    prompt_tokens=_count(usage.get("input_tokens")),
                    cached_tokens=_count(usage.get("cache_read_input_tokens")),
                    cache_write_tokens=_count(usage.get("cache_creation_input_tokens")),
                    completion_tokens=_count(usage.get("output_tokens")),
                )
                completion.cost_usd = cost(completion)
                return Result(key, completion)
            if kind == "errored":
                error = (result.get("error") or {}).get("error") or result.get("error") or {}
                kind_of = str(error.get("type", ""))
                return Result(
                    key,
                    error=f"batch request failed: {error.get('message', kind_of)}",
                    retryable=kind_of in ("api_error", "overloaded_error", "rate_limit_error"),
                )
            return Result(key, error=f"batch request {kind}", retryable=True)  # canceled, expired
        response = line.get("response") or {}
        body = response.get("body") or {}
        if line.get("error") or int(response.get("status_code") or 0) != 200:
            error = line.get("error") or body.get("error") or {}
            code = int(response.get("status_code") or 0)
            return Result(
                key,
                error=f"batch request failed: {error.get('message') or error.get('code') or code}",
                retryable=code == 429 or code >= 500 or code == 0,
            )
        choice = (body.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        usage = body.get("usage") or {}
        completion = Completion(
            text=message.get("content") or "",
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=_count(usage.get("prompt_tokens")),
            cached_tokens=_count((usage.get("prompt_tokens_details") or {}).get("cached_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            refusal=message.get("refusal") or None,
            logprobs=tokens_from_logprobs(choice.get("logprobs")),
        )
        if not isinstance(completion.text, str):
            raise TypeError(f"the answer's content is {type(completion.text).__name__}, not text")
        completion.cost_usd = cost(completion)
        return Result(key, completion)

    async def cancel(self, batch_id: str) -> BatchStatus:
        path = f"/messages/batches/{batch_id}/cancel" if self.protocol == "anthropic" else f"/batches/{batch_id}/cancel"
        await self._request("POST", path)
        return await self.status(batch_id)


def request_body(
    protocol: str, spec: JurorSpec, messages: list[dict[str, str]], kwargs: dict[str, Any]
) -> dict[str, object]:
    """The request's body: the model, the conversation and the juror's answer-changing settings
    (``kwargs`` as the synchronous path would send them, without transport settings)."""
    params = {k: v for k, v in kwargs.items() if k not in ("api_base", "api_key", "timeout", "max_retries")}
    if protocol == "anthropic":
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        body: dict[str, object] = {
            "model": model_name(spec),
            "max_tokens": int(params.pop("max_tokens", 1024)),
            "messages": [m for m in messages if m["role"] != "system"],
        }
        if system:
            body["system"] = system
        params.pop("response_format", None)  # Anthropic has none: the prompt asks for JSON
        params.pop("seed", None)
        return {**body, **params}
    return {"model": model_name(spec), "messages": messages, **params}


def split(
    lines: Sequence[tuple[str, dict[str, object]]], max_requests: int, max_bytes: int
) -> Iterator[list[tuple[str, dict[str, object]]]]:
    """Requests in submission-sized parts: at most ``max_requests`` each and ``max_bytes`` of JSON."""
    part: list[tuple[str, dict[str, object]]] = []
    size = 0
    for item in lines:
        n = len(json.dumps(item[1], ensure_ascii=False).encode()) + 1
        if part and (len(part) >= max_requests or size + n > max_bytes):
            yield part
            part, size = [], 0
        part.append(item)
        size += n
    if part:
        yield part


def _count(value: object) -> int | None:
    """A token count as a provider states it: a whole number or nothing."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    raise ValueError(f"token count {value!r} is not a whole number")


def _lines(text: str) -> Iterator[dict[str, object]]:
    for raw in text.splitlines():
        raw = raw.strip()
        if raw:
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(line, dict) and line.get("custom_id") is not None:
                yield line  # a line with no object or no custom_id names no call: its call is re-asked


def _anthropic_finish(reason: str | None) -> str | None:
    return {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "refusal": "content_filter"}.get(
        reason or "", reason
    )


def _error_text(response: Any) -> str:
    try:
        data = response.json()
    except ValueError:
        return str(response.text)[:200]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or error)[:300]
    return str(data)[:300]
