"""What a transport returns and raises: an answer (Completion), the slot it answers, and the errors the engine reads."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jurybench.jurors._endpoint_limits import Signals
from jurybench.rubric import Token

if TYPE_CHECKING:
    from jurybench.jurors._endpoint_limits import EndpointLimiter

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


class Backend:
    """A juror's transport, as its kind's ``make`` builds it: ``complete`` sends one request and
    says what came back. Everything else the engine reads of a transport is declared here with
    its default, so a transport that only answers (a plug-in's ``complete``) declares nothing
    more, and a subclass overrides what it has."""

    # How its answers are structured (schema, json, instructor, text), stored with each call;
    # None: not said.
    mode: str | None = None
    # Whether it keeps the juror's timeout itself (litellm's does); otherwise the engine does.
    own_timeout: bool = False
    # The limiter of the endpoint it shares with other jurors (rate limits read from the
    # provider's headers); None: the juror's own caps alone.
    endpoint: EndpointLimiter | None = None
    # Whether it validates through instructor (``structured=instructor``), asking again itself.
    drives_instructor: bool = False

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} does not say how it completes a call")

    async def complete_with_instructor(
        self, messages: Messages, slot: Slot, retries: int
    ) -> tuple[Completion, dict[str, object] | None, str | None, int]:
        """The completion, the validated answer (or None), the failure reason and the number of
        attempts, instructor asking again up to ``retries`` times (when ``drives_instructor``)."""
        raise NotImplementedError(f"{type(self).__name__} does not drive instructor")


class _Answering(Backend):
    """A plug-in's transport that is any object with ``complete`` (docs/extending.md); what it
    declares of Backend's attributes it keeps (a transport written before Backend was a class
    set ``own_timeout`` without subclassing)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        for name in ("mode", "own_timeout", "endpoint"):
            if hasattr(inner, name):
                setattr(self, name, getattr(inner, name))

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        found: Completion = await self.inner.complete(messages, slot)  # type: ignore[attr-defined]
        return found


def as_backend(made: object, prefix: str) -> Backend:
    """What a kind's ``make`` returned, as a :class:`Backend`: itself when it is one; any object
    with ``async complete(messages, slot)`` answers through it; anything else is refused."""
    from jurybench.errors import JurybenchError

    if isinstance(made, Backend):
        return made
    if callable(getattr(made, "complete", None)):
        return _Answering(made)
    raise JurybenchError(
        f"juror kind '{prefix}/': its make() returned {type(made).__name__}, not a transport.",
        hint="Return a jurybench.jurors.Backend (or any object with async complete(messages, slot)).",
    )


def import_litellm() -> Any:
    """Import litellm lazily, never letting it fetch its price table from the network."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm
