"""The litellm juror kind: any model string litellm routes (openai/..., anthropic/...,
ollama/..., a local OpenAI-compatible server), with the structured output each provider
enforces where it can, its rate-limit headers read, and its errors classified for the engine.
"""

from __future__ import annotations

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
    import_litellm,
)
from jurybench.jurors._endpoint_limits import endpoint_key, endpoint_limiter, read_headers
from jurybench.jurors._price_map import is_local
from jurybench.jurors._spec import (
    EXTRA_PREFIX,
    READING,
    JurorSpec,
    is_secret_param,
)
from jurybench.rubric import (
    AnyRubric,
    answer_schema,
    tokens_from_logprobs,
)

if TYPE_CHECKING:
    from jurybench.rubric import AnyRubric

# Alternatives asked for per token with scores=expected (OpenAI allows 0-20).
DEFAULT_TOP_LOGPROBS = 20
STRUCTURED_MODES = ("auto", "schema", "json", "instructor")
REQUEST_FORMATS = ("auto", "json_object", "json_schema", "none")


def structured_mode(spec: JurorSpec, rubric: AnyRubric, litellm: Any | None) -> str:
    """How a juror's answer is structured, as stored with each call: ``schema`` (the provider
    enforces the rubric's JSON schema), ``json`` (JSON mode or the prompt; jurybench validates),
    ``instructor``, or ``text`` (verdict rules, classification, questionnaires, generation).
    ``auto`` is ``schema`` where litellm says the provider supports a response schema, else
    ``json``; offline jurors (litellm None) answer in ``json``."""
    if spec.params.get("verdicts") or not rubric.answers_in_json:
        return "text"
    chosen = str(spec.params.get("structured", "auto"))
    if chosen != "auto":
        return chosen
    if litellm is None or spec.params.get("response_format") in ("none", "json_object"):
        return "json"
    try:
        return "schema" if litellm.supports_response_schema(model=spec.model) else "json"
    except Exception:
        return "json"


def _response_format(spec: JurorSpec, rubric: AnyRubric, mode: str, supports_json: bool) -> dict[str, object] | None:
    """The request's ``response_format`` for the juror's structured mode and the chosen shape."""
    shape = str(spec.params.get("response_format", "auto"))
    if mode not in ("schema", "json") or shape == "none":
        return None
    if mode == "schema":
        # a server the user runs compiles the schema to a grammar: the scale's points as an enum
        schema = answer_schema(rubric, enumerate_points=self_hosted(spec))
        if shape == "json_object":  # llama.cpp's server (and others) read a schema inside json_object
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
    if shape == "json_object" or (shape == "auto" and supports_json):
        return {"type": "json_object"}
    return None


def _client_side(exc: BaseException) -> bool:
    """A TypeError or ValueError raised in this process while building a request (a header
    given as text, a parameter of the wrong type): not the provider's failure. An answer that
    could not be decoded (JSON, text) is the provider's, and stays retryable."""

    return isinstance(exc, TypeError | ValueError) and not isinstance(exc, json.JSONDecodeError | UnicodeError)


def _userinfo_as_header(kwargs: dict[str, Any]) -> None:
    """An api_base with user-info (``http://user:password@host/v1``) is sent as the URL without it
    and an HTTP Basic ``Authorization`` header (unless the juror gives that header itself): the
    asynchronous transport does not read credentials from the URL."""
    import base64
    from urllib.parse import unquote, urlsplit, urlunsplit

    base = kwargs.get("api_base")
    if not isinstance(base, str) or "@" not in base:
        return
    parts = urlsplit(base)
    if parts.username is None:
        return
    host = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    kwargs["api_base"] = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    headers = dict(kwargs.get("extra_headers") or {})
    if not any(name.lower() == "authorization" for name in headers):
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    kwargs["extra_headers"] = headers


# Providers litellm sends through the OpenAI client (a ``client=`` it is given is used): the
# client's default query parameters land on every request, after the path.
QUERY_BY_CLIENT = frozenset({"openai", "lm_studio"})


def _query_as_client(kwargs: dict[str, Any], provider: str) -> None:
    """An api_base with query parameters (``http://host/v1?api_key=K``): litellm appends the
    endpoint's path to api_base, which put the path inside the query (``/v1?api_key=K/chat/
    completions``, every call failing). The URL goes without its query, and the parameters go on
    every request's URL where the server reads them (an OpenAI client's default query), for the
    providers litellm sends through that client; for the others, one line naming the way out."""
    from urllib.parse import parse_qsl, urlsplit, urlunsplit

    base = kwargs.get("api_base")
    if not isinstance(base, str) or "?" not in base:
        return
    parts = urlsplit(base)
    if not parts.query:
        return
    if provider not in QUERY_BY_CLIENT:
        from jurybench.errors import JurybenchError

        raise JurybenchError(
            f"juror {provider}/...: an api_base with query parameters works with the openai/ provider only "
            f"(litellm sends {provider}/ requests to api_base + the endpoint's path, which would land in the query).",
            hint="Name an OpenAI-compatible server as openai/<model>, or give the key as api_key= or a header.",
        )
    from openai import AsyncOpenAI

    plain = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    kwargs["api_base"] = plain
    kwargs["client"] = AsyncOpenAI(
        base_url=plain,
        api_key=str(kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY") or "none"),
        default_query=dict(parse_qsl(parts.query, keep_blank_values=True)),
        default_headers=dict(kwargs.get("extra_headers") or {}),
        max_retries=0,
    )


def self_hosted(spec: JurorSpec) -> bool:
    """A server the user runs (an ``api_base`` that is not a hosted provider's own API): it may
    take sampling parameters of its own, such as llama.cpp's ``repeat_penalty``."""
    from urllib.parse import urlsplit

    base = spec.options.get("api_base")
    if not isinstance(base, str) or not base:
        return spec.provider in ("ollama", "ollama_chat", "hosted_vllm", "llamafile", "lm_studio")
    host = (urlsplit(base).hostname or "").lower()
    return not host.endswith(("openai.com", "anthropic.com", "googleapis.com", "azure.com", "mistral.ai"))


class LiteLLMBackend(Backend):
    """Any litellm model string (openai/..., anthropic/..., ollama/..., hosted_vllm/...)."""

    own_timeout = True  # litellm keeps the juror's timeout itself: the engine does not wrap its calls
    drives_instructor = True

    def __init__(self, spec: JurorSpec, rubric: AnyRubric) -> None:
        self.litellm = import_litellm()
        self.spec = spec
        self.kwargs: dict[str, object] = {
            k.removeprefix(EXTRA_PREFIX): v for k, v in spec.params.items() if k not in READING
        }
        for key in ("api_base", "api_key"):
            if key in spec.options:
                self.kwargs[key] = spec.options[key]
        for key, value in spec.options.items():  # other credentials: headers, extra.<key-like name>
            if key != "api_key" and is_secret_param(key):
                self.kwargs[key.removeprefix(EXTRA_PREFIX)] = value
        _userinfo_as_header(self.kwargs)
        _query_as_client(self.kwargs, spec.provider)
        self.kwargs["timeout"] = float(spec.option("timeout", 60))
        secret = spec.options.get("api_key") or os.environ.get(f"{spec.provider.upper()}_API_KEY")
        self.endpoint = endpoint_limiter(
            endpoint_key(spec.provider, spec.options.get("api_base"), secret), int(spec.option("concurrency", 256))
        )
        self.kwargs["max_retries"] = 0  # the engine retries, with backoff and jitter
        self.mode = structured_mode(spec, rubric, self.litellm)
        request_format = _response_format(spec, rubric, self.mode, self._supports_json(spec.model))
        if request_format is not None:
            self.kwargs["response_format"] = request_format
        self.local = is_local(spec)  # a server on this machine: its answers cost nothing billed
        # Anthropic caches only a marked prefix: the system prompt, which every call of a run shares
        self.mark_cache = spec.option("prompt_cache", "auto") != "off" and spec.provider == "anthropic"
        self.wants_logprobs = spec.params.get("scores") == "expected" and self.mode in ("schema", "json")
        if self.wants_logprobs and self._supports("logprobs"):
            self.kwargs["logprobs"] = True
            self.kwargs.setdefault("top_logprobs", DEFAULT_TOP_LOGPROBS)
            if self_hosted(spec):
                # llama.cpp's servers (and Ollama) sample with a repetition penalty (1.1 by default)
                # but report the model's probabilities before it: in a JSON answer of several scores
                # the digits already written are penalised, so the score written could differ from
                # the most probable one. Without the penalty the two agree (README, "Judging with a local model").
                self.kwargs.setdefault("repeat_penalty", 1.0)
        self._transient = tuple(
            getattr(self.litellm, name)
            for name in (
                "RateLimitError",
                "Timeout",
                "APIConnectionError",
                "InternalServerError",
                "ServiceUnavailableError",
            )
            if hasattr(self.litellm, name)
        )
        self.rubric = rubric

    def _supports_json(self, model: str) -> bool:
        """Whether litellm knows the provider to accept ``response_format`` (offline lookup)."""
        return self._supports("response_format")

    def _supports(self, param: str) -> bool:
        try:
            params = self.litellm.get_supported_openai_params(model=self.spec.model) or []
        except Exception:
            return False
        return param in params

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        start = time.perf_counter()
        sent: Any = cache_marked(messages) if self.mark_cache else messages
        try:
            response = await self.litellm.acompletion(model=self.spec.model, messages=sent, **self.kwargs)
        except TimeoutError:
            raise TransientError("request timed out") from None
        except Exception as exc:
            raise self.classify(exc) from None
        return self._completion(response, start)

    def classify(self, exc: BaseException) -> Exception:
        """A litellm exception as TransientError, PermanentError or JurorUnusable.

        litellm wraps some permanent conditions in retryable types (a refused
        connection and missing credentials both arrive as InternalServerError), so
        the cause chain is read before the type.
        """
        chain = _cause_chain(exc)
        texts = " ".join(str(e) for e in chain)
        status = getattr(exc, "status_code", None)
        env = self._key_variable()
        if any(isinstance(e, ConnectionRefusedError) for e in chain):
            where = self.spec.options.get("api_base") or "the provider's endpoint"
            return JurorUnusable(
                f"connection refused at {where}",
                "start the server, or fix the juror's api_base",
            )
        if "Missing credentials" in texts or "api_key client option must be set" in texts:
            return JurorUnusable("no API key", f"set {env} or pass api_key=... in the juror")
        names = {type(e).__name__ for e in chain}
        if "insufficient_quota" in texts:  # a 429 that waiting does not cure
            return JurorUnusable(f"quota exhausted ({_first_line(exc)})", "check the account's plan and billing")
        if status == 429 or "RateLimitError" in names:
            headers = next(
                (
                    getattr(e, "litellm_response_headers", None)
                    for e in chain
                    if getattr(e, "litellm_response_headers", None)
                ),
                None,
            )
            return RateLimited(_first_line(exc), read_headers(headers))
        if status == 401 or "AuthenticationError" in names:
            return JurorUnusable(f"authentication failed ({_first_line(exc)})", f"check {env} or the juror's api_key")
        if status == 403 or "PermissionDeniedError" in names:
            return JurorUnusable(f"access denied ({_first_line(exc)})", "check the key's permissions for this model")
        if status == 404 or "NotFoundError" in names:
            return JurorUnusable(
                f"the provider does not know model '{self.spec.model}' ({_first_line(exc)})",
                "check the model name (provider/model)",
            )
        local = next((e for e in chain if _client_side(e)), None)
        if local is not None:  # raised before any provider answered: asking again gives the same
            return PermanentError(f"a client-side error, not retried ({type(local).__name__}: {_first_line(local)})")
        if isinstance(exc, self._transient) or (isinstance(status, int) and (status >= 500 or status == 429)):
            return TransientError(_first_line(exc))
        return PermanentError(_first_line(exc))

    def _key_variable(self) -> str:
        try:
            missing = self.litellm.validate_environment(model=self.spec.model).get("missing_keys") or []
        except Exception:
            missing = []
        keys = [k for k in missing if "KEY" in k or "TOKEN" in k]
        if keys:
            return " / ".join(keys)
        return f"{self.spec.provider.upper()}_API_KEY"

    def _completion(self, response: Any, start: float) -> Completion:
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = hidden.get("response_cost")
        # OpenAI's refusal field; litellm passes it on as an attribute or among provider_specific_fields.
        extra = getattr(choice.message, "provider_specific_fields", None) or {}
        refusal = getattr(choice.message, "refusal", None) or extra.get("refusal")
        return Completion(
            text=choice.message.content or "",
            refusal=refusal if isinstance(refusal, str) and refusal else None,
            signals=read_headers(hidden.get("additional_headers")),
            finish_reason=choice.finish_reason,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            cost_usd=0.0 if self.local else float(cost) if cost is not None else None,  # 0.0 is a real (free) cost
            latency_ms=(time.perf_counter() - start) * 1000,
            logprobs=tokens_from_logprobs(getattr(choice, "logprobs", None)),
            cached_tokens=_count_of(getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)),
            cache_write_tokens=_count_of(getattr(usage, "cache_creation_input_tokens", None)),
        )

    async def complete_with_instructor(
        self, messages: Messages, slot: Slot, retries: int
    ) -> tuple[Completion, dict[str, object] | None, str | None, int]:
        """Structured output through instructor (JSON mode) for providers where it helps.

        Returns the completion, the validated answer (or None), the failure
        reason and the number of attempts.
        """
        import instructor

        from jurybench.rubric import response_model

        client: Any = instructor.from_litellm(self.litellm.acompletion, mode=instructor.Mode.JSON)
        # instructor owns max_retries (its re-asks); the engine still retries transport errors.
        kwargs = {k: v for k, v in self.kwargs.items() if k not in ("response_format", "max_retries")}
        start = time.perf_counter()
        try:
            answer, raw = await client.chat.completions.create_with_completion(
                model=self.spec.model,
                messages=messages,
                response_model=response_model(self.rubric),
                max_retries=retries,  # re-asks after the first attempt
                **kwargs,
            )
        except Exception as exc:
            last = getattr(exc, "last_completion", None)
            if last is None:
                raise self.classify(exc) from None
            attempts = int(getattr(exc, "n_attempts", retries + 1))
            return self._completion(last, start), None, _first_line(exc), attempts
        return self._completion(raw, start), answer.model_dump(), None, 1


def _count_of(value: object) -> int | None:
    """A token count the provider reported, or None (absent, or not a count)."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def cache_marked(messages: Messages) -> list[dict[str, object]]:
    """The messages with the system prompt (the part every call of a run shares) marked for
    providers that cache only what is marked (Anthropic's ``cache_control``); others are as given."""
    out: list[dict[str, object]] = []
    for k, message in enumerate(messages):
        if k == 0 and message.get("role") == "system" and isinstance(message.get("content"), str):
            block = {"type": "text", "text": message["content"], "cache_control": {"type": "ephemeral"}}
            out.append({"role": "system", "content": [block]})
        else:
            out.append(dict(message))
    return out


def _cause_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 20:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
