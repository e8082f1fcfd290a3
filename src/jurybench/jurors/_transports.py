"""Jurors behind one interface: litellm (any provider), fake (tests) and replay (recordings).

Every backend answers ``complete(messages, slot)`` with a :class:`Completion`
holding the raw text; the engine does caching, retries, parsing and storage
the same way for all of them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from jurybench.errors import JurybenchError
from jurybench.jurors._endpoint_limits import Signals, endpoint_key, endpoint_limiter, read_headers
from jurybench.jurors._spec import (
    ANSWERING,
    EXTRA_PREFIX,
    OPERATIONAL,
    READING,
    JurorSpec,
    is_secret_param,
)
from jurybench.rubric import (
    AnyRubric,
    ClassificationRubric,
    InventoryRubric,
    PairwiseRubric,
    PointwiseRubric,
    PreferenceRubric,
)

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Slot:
    """Which request this is: the subject, the order it was shown in, the sample index."""

    subject_id: str
    order: str  # "AB", "BA", or "" for pointwise
    sample_index: int
    presentation: str | None = None  # questionnaires: the order and rotation the prompt states (JSON)
    language: str | None = None  # the subject's language (the response language, for generation)


@dataclass
class Completion:
    text: str
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    refusal: str | None = None  # the provider's own refusal signal (e.g. OpenAI's message.refusal)
    signals: Signals | None = None  # what the answer's headers said about the endpoint's limits


class TransientError(Exception):
    """Worth retrying: rate limit, server error, timeout, dropped connection."""


class RateLimited(TransientError):
    """A 429: never a failure of the call; the endpoint pauses and the call goes again."""

    def __init__(self, message: str, signals: Signals | None = None) -> None:
        super().__init__(message)
        self.signals = signals


class PermanentError(Exception):
    """Retrying will not help for this request: bad request, no recording, context too long."""


class JurorUnusable(PermanentError):
    """Retrying will not help for any request of this juror: bad or missing credentials,
    access denied, unknown model, nothing listening at the endpoint. The engine stops
    calling the juror; ``advice`` says what to set."""

    def __init__(self, message: str, advice: str) -> None:
        super().__init__(message)
        self.advice = advice


class Backend(Protocol):
    async def complete(self, messages: Messages, slot: Slot) -> Completion: ...


def import_litellm() -> Any:
    """Import litellm lazily, never letting it fetch its price table from the network."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class LiteLLMBackend:
    """Any litellm model string (openai/..., anthropic/..., ollama/..., hosted_vllm/...)."""

    def __init__(self, spec: JurorSpec, rubric: AnyRubric) -> None:
        self.litellm = import_litellm()
        self.spec = spec
        self.kwargs: dict[str, Any] = {
            k.removeprefix(EXTRA_PREFIX): v for k, v in spec.params.items() if k not in READING
        }
        for key in ("api_base", "api_key"):
            if key in spec.options:
                self.kwargs[key] = spec.options[key]
        for key, value in spec.options.items():  # other credentials: headers, extra.<key-like name>
            if key != "api_key" and is_secret_param(key):
                self.kwargs[key.removeprefix(EXTRA_PREFIX)] = value
        self.kwargs["timeout"] = float(spec.option("timeout", 60))
        secret = spec.options.get("api_key") or os.environ.get(f"{spec.provider.upper()}_API_KEY")
        self.endpoint = endpoint_limiter(
            endpoint_key(spec.provider, spec.options.get("api_base"), secret), int(spec.option("concurrency", 256))
        )
        self.kwargs["max_retries"] = 0  # the engine retries, with backoff and jitter
        fmt = spec.params.get("response_format", "auto")
        wants_json = fmt == "json_object" or (fmt == "auto" and self._supports_json(spec.model))
        generating = getattr(rubric, "kind", None) == "generation"
        if not spec.params.get("verdicts") and fmt != "none" and wants_json and not generating:
            self.kwargs["response_format"] = {"type": "json_object"}
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
        try:
            params = self.litellm.get_supported_openai_params(model=model) or []
        except Exception:
            return False
        return "response_format" in params

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        start = time.perf_counter()
        try:
            response = await self.litellm.acompletion(model=self.spec.model, messages=messages, **self.kwargs)
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
            headers = next((getattr(e, "litellm_response_headers", None) for e in chain
                            if getattr(e, "litellm_response_headers", None)), None)  # fmt: skip
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
            cost_usd=float(cost) if cost is not None else None,  # 0.0 is a real (free) cost
            latency_ms=(time.perf_counter() - start) * 1000,
        )

    async def complete_with_instructor(
        self, messages: Messages, slot: Slot, retries: int
    ) -> tuple[Completion, dict[str, Any] | None, str | None, int]:
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


class FakeBackend:
    """A juror for tests and demos: queued answers first, then rule-based ones.

    Rule-based answers are deterministic in (juror name, seed, subject, order,
    sample): valid JSON for the rubric, with optional rates of invalid answers,
    refusals and transient errors, and an optional first-position bias.
    """

    _queues: ClassVar[dict[str, deque[str]]] = defaultdict(deque)

    @classmethod
    def enqueue(cls, name: str, *answers: str) -> None:
        """Queue raw answers for the fake juror ``fake/<name>``, served in order."""
        cls._queues[name].extend(answers)

    @classmethod
    def clear(cls) -> None:
        cls._queues.clear()

    def __init__(self, spec: JurorSpec, rubric: AnyRubric) -> None:
        self.name = spec.model.split("/", 1)[1] if "/" in spec.model else spec.model
        self.spec = spec
        self.rubric = rubric
        p = spec.params
        self.invalid_rate = float(p.get("invalid_rate", 0.0))
        self.refusal_rate = float(p.get("refusal_rate", 0.0))
        self.error_rate = float(p.get("error_rate", 0.0))
        self.position_bias = float(p.get("position_bias", 0.0))
        self.latency = float(p.get("latency_ms", 0.0)) / 1000
        self.seed = p.get("seed", 0)
        # Sampling settings change a real juror's answers, so they change the fake's too.
        self.sampling = tuple((k, p[k]) for k in ("temperature", "top_p", "max_tokens") if k in p)
        self.calls: dict[Slot, int] = {}
        self.generating = getattr(rubric, "kind", None) == "generation"  # a generation spec, not a rubric

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        if self.latency:
            await asyncio.sleep(self.latency)
        queue = self._queues.get(self.name)
        if queue:
            return Completion(text=queue.popleft(), finish_reason="stop", prompt_tokens=0, completion_tokens=0)
        # Only a slot that will be asked again (after an error, a refusal or an invalid answer)
        # keeps its attempt count: a long run does not hold one entry per call.
        attempt = self.calls.pop(slot, 0)
        rng = random.Random(_seed_of(self.name, self.seed, slot, messages[-1]["content"], attempt, *self.sampling))
        if rng.random() < self.error_rate:
            self.calls[slot] = attempt + 1
            raise TransientError("fake transient error (error_rate)")
        roll = rng.random()
        if roll < self.refusal_rate + self.invalid_rate:
            self.calls[slot] = attempt + 1
        if roll < self.refusal_rate:
            text = "I'm sorry, but I can't help with judging this."
        elif roll < self.refusal_rate + self.invalid_rate:
            text = "" if self.generating else "Both are fine, hard to say."
        elif self.generating:
            text = f"Fake response {rng.randint(0, 10**6)} to: {messages[-1]['content'][:60]}"
        elif isinstance(self.rubric, ClassificationRubric):
            text = rng.choice(self.rubric.labels).shown(self.rubric.default_language)
        elif isinstance(self.rubric, InventoryRubric):
            points = self.rubric.scale.points
            text = "\n".join(f"{n}. {rng.randint(1, points)}" for n in range(1, len(self.rubric.items) + 1))
        else:
            text = json.dumps(self._answer(rng, slot))
        return Completion(
            text=text,
            finish_reason="stop",
            prompt_tokens=sum(len(m["content"]) for m in messages) // 4,
            completion_tokens=len(text) // 4,
        )

    def _answer(self, rng: random.Random, slot: Slot) -> dict[str, Any]:
        rubric = self.rubric
        bias = self.position_bias
        if isinstance(rubric, PointwiseRubric):
            answer: dict[str, Any] = {c.name: rng.randint(c.scale.min, c.scale.max) for c in rubric.criteria}
        elif isinstance(rubric, PairwiseRubric):
            answer = {}
            for c in rubric.categories:
                value = round(rng.gauss(0, 1) + bias)
                answer[c.name] = max(-rubric.k, min(rubric.k, value))
        else:
            assert isinstance(rubric, PreferenceRubric)
            first = rng.random() < 0.5 + bias / 2
            tie = rubric.allow_tie and rng.random() < 0.1
            answer = {"verdict": "tie" if tie else ("A" if first else "B")}
        if rubric.rationale:
            answer["rationale"] = "fake juror"
        return answer


class SimBackend:
    """A simulated juror with known truth (``sim/<name>``): see :mod:`jurybench.jurors._simulated`."""

    def __init__(self, spec: JurorSpec, rubric: AnyRubric, con: Any, subject_ids: list[str] | None = None) -> None:
        from jurybench.jurors._simulated import SimJuror, load_sim_subjects

        self.juror = SimJuror(spec, rubric)
        self.items, self.pairs = load_sim_subjects(con, subject_ids)
        self.calls: dict[Slot, int] = {}

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        attempt = self.calls.pop(slot, 0)  # kept only for a slot that will be asked again
        juror = self.juror
        rng = juror.rng(slot.subject_id, slot.order, slot.sample_index, attempt)
        roll = rng.random()
        if roll < juror.refusal_rate + juror.invalid_rate:
            self.calls[slot] = attempt + 1
        if roll < juror.refusal_rate:
            text = "I'm sorry, but I can't judge this."
        elif roll < juror.refusal_rate + juror.invalid_rate:
            text = "Both have merits; it is hard to say."
        elif slot.order:
            a, b = (self.items[i] for i in self.pairs[slot.subject_id])
            first, second = (a, b) if slot.order == "AB" else (b, a)
            text = json.dumps(juror.pairwise(first, second, rng))
        elif isinstance(juror.rubric, ClassificationRubric):
            text = juror.classify(self.items[slot.subject_id], rng)
        elif isinstance(juror.rubric, InventoryRubric):
            assert slot.presentation is not None
            text = juror.questionnaire(self.items[slot.subject_id], slot.presentation, rng)
        else:
            text = json.dumps(juror.pointwise(self.items[slot.subject_id], rng))
        return Completion(text=text, finish_reason="stop", prompt_tokens=0, completion_tokens=0, latency_ms=0.0)


class ReplayBackend:
    """Serves recorded raw completions (table ``recordings``) for ``replay/<source>``."""

    def __init__(self, spec: JurorSpec, recordings: dict[tuple[str, str, int], tuple[str, str | None]]) -> None:
        self.source = spec.model.split("/", 1)[1]
        self.recordings = recordings

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        found = self.recordings.get((slot.subject_id, slot.order, slot.sample_index))
        if found is None:
            # The subject, order and sample are in the call row; the reason stays the same
            # for every missing recording so that failures group in the summary.
            raise PermanentError(f"replay/{self.source} has no recording for this subject, order and sample")
        text, finish = found
        return Completion(text=text, finish_reason=finish, latency_ms=0.0)


def _seed_of(*parts: Any) -> int:
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


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


def make_backend(spec: JurorSpec, rubric: AnyRubric, con: Any, subject_ids: list[str] | None = None) -> Backend:
    """The transport for a juror, as its kind builds it (jurors/_kinds.py); unknown sources are
    user errors. ``subject_ids`` (the run's items or pairs) lets a simulated juror read only
    what it will judge."""
    from jurybench.jurors._kinds import kind_of

    return kind_of(spec.model).make(spec, rubric, con, subject_ids)  # type: ignore[no-any-return]


def make_fake(spec: JurorSpec, rubric: AnyRubric, con: Any, subject_ids: list[str] | None) -> Backend:
    return FakeBackend(spec, rubric)


def make_sim(spec: JurorSpec, rubric: AnyRubric, con: Any, subject_ids: list[str] | None) -> Backend:
    if getattr(rubric, "kind", None) == "generation":
        from jurybench.jurors._simulated import SimGeneratorBackend

        return SimGeneratorBackend(spec, rubric)
    return SimBackend(spec, rubric, con, subject_ids)


def make_replay(spec: JurorSpec, rubric: AnyRubric, con: Any, subject_ids: list[str] | None) -> Backend:
    source = spec.model.split("/", 1)[1]
    rows = con.execute(
        "SELECT subject_id, presented_order, sample_index, response_text, finish_reason "
        "FROM recordings WHERE source = ?",
        [source],
    ).fetchall()
    if not rows:
        known = [r[0] for r in con.execute("SELECT DISTINCT source FROM recordings ORDER BY 1").fetchall()]
        raise JurybenchError(
            f"juror '{spec.model}': no recordings named '{source}' in the store.",
            hint=f"Known sources: {', '.join(known) or 'none (import recordings first)'}.",
        )
    return ReplayBackend(spec, {(r[0], r[1], r[2]): (r[3], r[4]) for r in rows})


def make_litellm(spec: JurorSpec, rubric: AnyRubric, con: Any, subject_ids: list[str] | None) -> Backend:
    return LiteLLMBackend(spec, rubric)  # its model string and parameters were checked by check_juror


def check_seeds(spec: JurorSpec, label: str) -> None:
    """A simulated or fake juror's seeds are whole numbers."""
    from jurybench.jurors._simulated import _seed

    for key in ("seed", "truth_seed"):
        _seed(spec.params, key, label)


def check_litellm_model(model: str) -> None:
    """Refuse model strings litellm cannot route, naming the fix."""
    litellm = import_litellm()
    try:
        litellm.get_llm_provider(model=model)
    except Exception:
        raise JurybenchError(
            f"unknown juror model '{model}': litellm cannot tell its provider.",
            hint="Use provider/model, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
            "ollama/llama3, hosted_vllm/<name>; or fake/<name>, sim/<name>, replay/<source>.",
        ) from None


# Provider parameters that would break one-answer-per-request parsing, with the way to get the same.
UNSUPPORTED = {
    "n": "use samples=N",
    "stream": "answers are read whole",
    "stream_options": "answers are read whole",
    "tools": "jurors answer in JSON or free text",
    "tool_choice": "jurors answer in JSON or free text",
    "functions": "jurors answer in JSON or free text",
    "function_call": "jurors answer in JSON or free text",
    "parallel_tool_calls": "jurors answer in JSON or free text",
    "max_retries": "use retries=N (the engine retries with backoff)",
}


def check_juror(spec: JurorSpec, *, need_key: bool = True) -> None:
    """Refuse misspelt or unsupported parameters and a missing API key before any call."""
    label = f"juror '{spec.display_name}'"
    from jurybench.jurors._kinds import kind_of

    kind = kind_of(spec.model)
    if kind.parameters is not None:  # a kind that says which parameters it takes
        allowed = kind.parameters
        for key in spec.params:
            if key.startswith(EXTRA_PREFIX):
                raise JurybenchError(
                    f"{label}: extra.<key> parameters are for litellm jurors; {kind.prefix}/ jurors take none.",
                    hint=f"Valid parameters here: {', '.join(sorted(allowed | set(OPERATIONAL)))}.",
                )
            if key in UNSUPPORTED and key not in allowed:
                raise JurybenchError(
                    f"{label}: parameter '{key}' is not supported by jurybench.",
                    hint=UNSUPPORTED[key][:1].upper() + UNSUPPORTED[key][1:] + ".",
                )
            if key not in allowed:
                _unknown(label, key, allowed)
        if kind.check is not None:
            kind.check(spec, label)
        return
    litellm = import_litellm()
    check_litellm_model(spec.model)
    try:
        provider_params = set(litellm.get_supported_openai_params(model=spec.model) or [])
    except Exception:
        provider_params = set()
    for key in spec.params:
        if key.startswith(EXTRA_PREFIX):
            if len(key) == len(EXTRA_PREFIX):
                raise JurybenchError(f"{label}: 'extra.' needs a parameter name, e.g. extra.repetition_penalty=1.1.")
            continue
        if key in UNSUPPORTED:
            raise JurybenchError(
                f"{label}: parameter '{key}' is not supported by jurybench.",
                hint=UNSUPPORTED[key][:1].upper() + UNSUPPORTED[key][1:] + ".",
            )
        if key in READING:
            continue
        if key not in provider_params:
            _unknown(label, key, (provider_params - set(UNSUPPORTED)) | READING, provider=spec.provider)
    if need_key and "api_key" not in spec.options:
        try:
            missing = litellm.validate_environment(model=spec.model).get("missing_keys") or []
        except Exception:
            missing = []
        keys = [k for k in missing if "KEY" in k or "TOKEN" in k]
        if keys:
            raise JurybenchError(
                f"{label}: no API key for {spec.provider}.",
                hint=f"Set {' or '.join(keys)} in the environment, or pass api_key=... in the juror.",
            )


def _unknown(label: str, key: str, allowed: frozenset[str] | set[str], provider: str | None = None) -> None:
    import difflib

    known = sorted(set(allowed) | set(OPERATIONAL))
    close = difflib.get_close_matches(key, [k for k in known + sorted(ANSWERING) if k != key], n=1)
    guess = f" (did you mean '{close[0]}'?)" if close else ""
    if key in ANSWERING and key not in allowed:  # a parameter of another kind of juror
        guess = " (it is not one of this kind of juror's parameters)"
    where = f" for provider '{provider}'" if provider else ""
    raise JurybenchError(
        f"{label}: unknown parameter '{key}'{guess}{where}.",
        hint=f"Valid: {', '.join(known)}"
        + ("; pass other provider parameters as extra.<key>=value." if provider else "."),
    )
