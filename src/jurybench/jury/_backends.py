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
from jurybench.jury._juror import JurorSpec
from jurybench.rubric import AnyRubric, PairwiseRubric, PointwiseRubric, PreferenceRubric

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Slot:
    """Which request this is: the subject, the order it was shown in, the sample index."""

    subject_id: str
    order: str  # "AB", "BA", or "" for pointwise
    sample_index: int


@dataclass
class Completion:
    text: str
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None


class TransientError(Exception):
    """Worth retrying: rate limit, server error, timeout, dropped connection."""


class PermanentError(Exception):
    """Retrying will not help: bad credentials, unknown model, bad request, no recording."""


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
            k: v for k, v in spec.params.items() if k not in ("verdicts", "structured", "response_format")
        }
        for key in ("api_base", "api_key"):
            if key in spec.options:
                self.kwargs[key] = spec.options[key]
        self.kwargs["timeout"] = float(spec.option("timeout", 60))
        self.kwargs["max_retries"] = 0  # the engine retries, with backoff and jitter
        fmt = spec.params.get("response_format", "auto")
        wants_json = fmt == "json_object" or (fmt == "auto" and self._supports_json(spec.model))
        if not spec.params.get("verdicts") and fmt != "none" and wants_json:
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
        except self._transient as exc:
            raise TransientError(_first_line(exc)) from None
        except TimeoutError:
            raise TransientError("request timed out") from None
        except Exception as exc:
            status = getattr(exc, "status_code", None)
            if isinstance(status, int) and (status >= 500 or status == 429):
                raise TransientError(_first_line(exc)) from None
            raise PermanentError(_first_line(exc)) from None
        return self._completion(response, start)

    def _completion(self, response: Any, start: float) -> Completion:
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = hidden.get("response_cost")
        return Completion(
            text=choice.message.content or "",
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
        except self._transient as exc:
            raise TransientError(_first_line(exc)) from None
        except Exception as exc:
            last = getattr(exc, "last_completion", None)
            if last is None:
                raise PermanentError(_first_line(exc)) from None
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
        self.calls: dict[Slot, int] = defaultdict(int)

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        if self.latency:
            await asyncio.sleep(self.latency)
        queue = self._queues.get(self.name)
        if queue:
            return Completion(text=queue.popleft(), finish_reason="stop", prompt_tokens=0, completion_tokens=0)
        attempt = self.calls[slot]
        self.calls[slot] += 1
        rng = random.Random(_seed_of(self.name, self.seed, slot, messages[-1]["content"], attempt))
        if rng.random() < self.error_rate:
            raise TransientError("fake transient error (error_rate)")
        roll = rng.random()
        if roll < self.refusal_rate:
            text = "I'm sorry, but I can't help with judging this."
        elif roll < self.refusal_rate + self.invalid_rate:
            text = "Both are fine, hard to say."
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


class ReplayBackend:
    """Serves recorded raw completions (table ``recordings``) for ``replay/<source>``."""

    def __init__(self, spec: JurorSpec, recordings: dict[tuple[str, str, int], tuple[str, str | None]]) -> None:
        self.source = spec.model.split("/", 1)[1]
        self.recordings = recordings

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        found = self.recordings.get((slot.subject_id, slot.order, slot.sample_index))
        if found is None:
            raise PermanentError(
                f"replay/{self.source} has no recording for {slot.subject_id} "
                f"order {slot.order or '-'} sample {slot.sample_index}"
            )
        text, finish = found
        return Completion(text=text, finish_reason=finish, latency_ms=0.0)


def _seed_of(*parts: Any) -> int:
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def make_backend(spec: JurorSpec, rubric: AnyRubric, con: Any) -> Backend:
    """The backend for a juror; unknown providers and sources are user errors."""
    if spec.model.startswith("fake/"):
        return FakeBackend(spec, rubric)
    if spec.model.startswith("replay/"):
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
    check_litellm_model(spec.model)
    return LiteLLMBackend(spec, rubric)


def check_litellm_model(model: str) -> None:
    """Refuse model strings litellm cannot route, naming the fix."""
    litellm = import_litellm()
    try:
        litellm.get_llm_provider(model=model)
    except Exception:
        raise JurybenchError(
            f"unknown juror model '{model}': litellm cannot tell its provider.",
            hint="Use provider/model, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
            "ollama/llama3, hosted_vllm/<name>; or fake/<name>, replay/<source>.",
        ) from None
