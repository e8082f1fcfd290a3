"""What a transport returns and raises: an answer (Completion), the slot it answers, and the errors the engine reads."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol

from jurybench.jurors._endpoint_limits import Signals
from jurybench.rubric import Token

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
    logprobs: list[Token] | None = None  # per generated token, when the juror asked for them (scores=expected)
    cached_tokens: int | None = None  # prompt tokens the provider read from its prompt cache (billed lower)
    cache_write_tokens: int | None = None  # prompt tokens written to the cache (Anthropic bills them higher)


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
