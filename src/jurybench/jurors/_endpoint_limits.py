"""Rate limits that adapt: one limiter per provider endpoint and key, shared by every juror,
run and service job of the process that calls it.

What a provider says is read first. OpenAI-style ``x-ratelimit-limit|remaining|reset-
requests|tokens`` and Anthropic's ``anthropic-ratelimit-*`` give the budget left and how fast
it comes back, so requests are paced to it; ``retry-after-ms`` / ``Retry-After`` on a 429
pause the whole endpoint for that long. Where a provider says nothing, the number of
requests in flight adapts (additive increase on success, halving on a 429, at most once
per pause). A 429 is never a failed call: the engine waits and asks again until the
call's deadline (``--give-up-after``).

The limiter is used from several event loops (the service runs each job in its own
thread), so its state sits behind a thread lock and waiters sleep on their own loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import hashlib
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# Limits are per minute unless the provider says otherwise (OpenAI, Anthropic, Together).
_MINUTE = 60.0
# Clamps on what headers say (README, "Rate limits"): a provider's numbers are trusted only
# within these, so no header can pause a run for ever or let it storm the endpoint.
MAX_RETRY_AFTER_S = 120.0  # a longer Retry-After (1e9, inf, a date far ahead) waits this long
MIN_RETRY_AFTER_S = 0.05  # a shorter one (0, negative) backs off as if none had been given
MAX_PACE_WAIT_S = 60.0  # the longest one wait for a budget to refill
MIN_RATE_PER_S = 1.0 / _MINUTE  # a stated limit below one a minute (0, 1e-9) cannot be right: not said
UNKNOWN_REFILL_S = 2.0  # a budget reported with no limit and no reset is forgotten after this long


class LimiterTimeout(Exception):
    """The endpoint would not admit a request before the call's deadline (--give-up-after)."""


class LimiterStopped(Exception):
    """The run was asked to stop while a request waited for its endpoint."""


_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?")


def parse_duration(text: str | None, *, now: float | None = None) -> float | None:
    """Seconds in a reset or retry header: ``1.5``, ``20ms``, ``6m0s``, ``1h2m3.5s``, an RFC 3339
    time (Anthropic) or an HTTP date (Retry-After)."""
    if text is None:
        return None
    value = str(text).strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        pass
    else:
        return None if math.isnan(number) else max(0.0, number)
    match = _DURATION.fullmatch(value)
    if match and any(match.groups()):
        h, m, s, ms = (float(g) if g else 0.0 for g in match.groups())
        return h * 3600 + m * 60 + s + ms / 1000
    wall = time.time() if now is None else now
    with contextlib.suppress(ValueError, TypeError):
        from datetime import datetime

        return max(0.0, datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() - wall)
    with contextlib.suppress(ValueError, TypeError, IndexError):
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - wall)
    return None


@dataclass(frozen=True)
class Signals:
    """What one answer's headers say about the endpoint's limits (None: not said)."""

    retry_after: float | None = None
    limit_requests: float | None = None
    remaining_requests: float | None = None
    reset_requests: float | None = None
    limit_tokens: float | None = None
    remaining_tokens: float | None = None
    reset_tokens: float | None = None

    @property
    def any(self) -> bool:
        return any(v is not None for v in self.__dict__.values())


def read_headers(headers: Mapping[str, object] | None) -> Signals:
    """Signals from response headers (litellm prefixes passed-through ones with ``llm_provider-``)."""
    if not headers:
        return Signals()
    h: dict[str, str] = {}
    for key, value in dict(headers).items():
        name = str(key).lower().removeprefix("llm_provider-")
        h.setdefault(name, str(value))

    def number(*names: str) -> float | None:
        """A count a header states: finite and not negative (-1e9 reads as 0), else not said."""
        for name in names:
            raw = h.get(name)  # most answers say few of these: no exception per header not sent
            if raw is None:
                continue
            try:
                value = float(raw)
            except ValueError:
                continue
            if math.isfinite(value):
                return max(0.0, value)
        return None

    retry = None
    if "retry-after-ms" in h:
        with contextlib.suppress(ValueError):
            ms = float(h["retry-after-ms"])
            retry = None if math.isnan(ms) else max(0.0, ms / 1000)
    if retry is None:
        retry = parse_duration(h.get("retry-after"))
    if retry is not None:
        retry = min(retry, MAX_RETRY_AFTER_S)
    return Signals(
        retry_after=retry,
        limit_requests=number("x-ratelimit-limit-requests", "anthropic-ratelimit-requests-limit"),
        remaining_requests=number("x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining"),
        reset_requests=parse_duration(
            h.get("x-ratelimit-reset-requests") or h.get("anthropic-ratelimit-requests-reset")
        ),
        limit_tokens=number(
            "x-ratelimit-limit-tokens", "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-input-tokens-limit"
        ),
        remaining_tokens=number(
            "x-ratelimit-remaining-tokens",
            "anthropic-ratelimit-tokens-remaining",
            "anthropic-ratelimit-input-tokens-remaining",
        ),
        reset_tokens=parse_duration(h.get("x-ratelimit-reset-tokens") or h.get("anthropic-ratelimit-tokens-reset")),
    )


class _Bucket:
    """A provider budget (requests or tokens) as the provider last reported it, refilled at its
    per-minute rate, less what was sent since."""

    def __init__(self) -> None:
        self.rate = 0.0  # per second; 0: unknown
        self.remaining = math.inf
        # How much can be spent at once: the most ever reported left (a provider that smooths
        # its per-minute limit holds back far less than the minute's worth).
        self.capacity = math.inf
        self.updated = 0.0
        self.spent = 0.0  # sent since the last report
        self.expires = math.inf  # when the last report stops holding (a reset, or no rate to refill it)
        # Answers that came while a report with no rate said nothing was left: after a few, its
        # "0 left" is not believed (until a 429 says the provider really refuses).
        self.empty_answers = 0
        self.distrusted = False

    EMPTY_ANSWERS_TRUSTED = 3

    def answered_while_empty(self, remaining: float | None) -> None:
        """An answer (not a 429) that reports ``remaining``: a report of nothing left, with no
        plausible rate to refill it, contradicted by the answers themselves."""
        if remaining is None or remaining >= 1 or self.rate > 0:
            self.empty_answers = 0
            return
        self.empty_answers += 1
        if self.empty_answers >= self.EMPTY_ANSWERS_TRUSTED:
            self.distrusted = True
            self.remaining, self.spent, self.expires = math.inf, 0.0, math.inf

    def refused(self) -> None:
        """A 429: the provider's reports are believed again."""
        self.distrusted = False
        self.empty_answers = 0

    def observe(
        self, limit: float | None, remaining: float | None, at: float, spent_since: float, reset: float | None = None
    ) -> None:
        """A report made at about ``at`` (older ones than the last are ignored); ``spent_since``:
        what was sent after it; ``reset``: seconds until the budget is whole again."""
        if limit is not None and limit / _MINUTE >= MIN_RATE_PER_S:
            self.rate = limit / _MINUTE
        # A limit below one a minute (0, 1e-9) cannot be right: not said (the provider's answers
        # show what it allows; pacing to it held a run to one request a minute).
        if remaining is None or (self.distrusted and remaining < 1):
            return
        self.capacity = max(1.0, remaining, 0.0 if self.capacity == math.inf else self.capacity)
        if at >= self.updated:
            self.remaining, self.updated, self.spent = remaining, at, spent_since
            if self.rate > 0:  # refilled at the stated rate
                self.expires = math.inf
            else:  # nothing says how it refills but a reset, if given: trust it that long, then probe
                self.expires = at + min(reset if reset is not None else UNKNOWN_REFILL_S, MAX_PACE_WAIT_S)

    def available(self, now: float) -> float:
        if self.remaining == math.inf:
            return math.inf
        if now >= self.expires:  # the report no longer holds: forgotten (a 429 or a new report says more)
            self.remaining, self.spent, self.expires = math.inf, 0.0, math.inf
            return math.inf
        refill = self.rate * max(0.0, now - self.updated)
        return min(self.capacity, self.remaining + refill) - self.spent

    def wait_for(self, amount: float, now: float) -> float:
        """Seconds until ``amount`` is available (0: now), at most until the report expires and
        never more than MAX_PACE_WAIT_S."""
        short = amount - self.available(now)
        if short <= 0:
            return 0.0
        wait = short / self.rate if self.rate > 0 else UNKNOWN_REFILL_S
        return min(wait, max(0.0, self.expires - now), MAX_PACE_WAIT_S) or MIN_RETRY_AFTER_S


class EndpointLimiter:
    """Pacing and concurrency for one provider endpoint and key."""

    START = 8.0  # requests in flight before anything is known

    def __init__(self, key: str, max_concurrency: int = 256) -> None:
        self.key = key
        self.max_concurrency = max(1, max_concurrency)
        self.window = min(self.START, float(self.max_concurrency))
        self.in_flight = 0
        self.paused_until = 0.0
        self.last_decrease = 0.0
        self.requests = _Bucket()
        self.tokens = _Bucket()
        self.tokens_per_request = 0.0  # running mean of tokens a request used
        self.token_ratio = 1.0  # prompt tokens reported / estimated from the text
        self.completion_tokens = 0.0  # running mean of answer tokens
        self.n_answers = 0
        self.n_rate_limited = 0
        self.n_requests = 0
        self._lock = threading.Lock()
        self._waiters: dict[asyncio.AbstractEventLoop, asyncio.Event] = {}
        self._sent: deque[tuple[float, float]] = deque()  # (time, tokens) of recent requests
        self._waiting = 0  # requests waiting for a slot (any loop)

    # -- admission -----------------------------------------------------------------------------
    def _delay(self, tokens: float, now: float) -> float:
        """0 when a request may start now, else how long to wait (inf: wait for a slot)."""
        if now < self.paused_until:
            return self.paused_until - now
        if self.in_flight >= max(1, math.floor(self.window)):
            return math.inf
        return self._budget_wait(tokens, now)

    def _budget_wait(self, tokens: float, at: float) -> float:
        """Seconds from ``at`` until both budgets, as last reported, have room for one request of
        ``tokens`` (0: room now)."""
        wait = self.requests.wait_for(1.0, at)
        if tokens > 0 and self.tokens.remaining != math.inf:
            wait = max(wait, self.tokens.wait_for(min(tokens, self.tokens.capacity), at))
        return wait

    def _expected(self, tokens: float) -> float:
        """A request's tokens: the caller's estimate from its text, corrected by what answers
        really used (the running mean of a request's use when the caller has none)."""
        return tokens * self.token_ratio + self.completion_tokens if tokens else self.tokens_per_request

    async def acquire(
        self, tokens: float = 0.0, *, deadline: float = math.inf, stop: Callable[[], bool] | None = None
    ) -> float:
        """Wait until a request may start; ``tokens`` is its expected use (0: unknown). Returns
        the start time, which ``done`` and ``rate_limited`` take back. Raises LimiterTimeout
        when the wait would pass ``deadline`` (time.monotonic()) and LimiterStopped as soon as
        ``stop()`` says so (checked at least every quarter second)."""
        loop = asyncio.get_running_loop()
        expected = self._expected(tokens)
        while True:
            with self._lock:
                now = time.monotonic()
                delay = self._delay(expected, now)
                if delay <= 0:
                    self.in_flight += 1
                    self._count_sent(now, expected, now)
                    return now
                event = self._waiters.setdefault(loop, asyncio.Event())
            if stop is not None and stop():
                raise LimiterStopped()
            if now + (0.0 if math.isinf(delay) else delay) > deadline or now >= deadline:
                raise LimiterTimeout(f"the endpoint would not admit a request for {delay:.3g} s")
            if math.isinf(delay):
                with self._lock:
                    event.clear()
                    self._waiting += 1
                try:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(event.wait(), 0.25)
                finally:
                    with self._lock:
                        self._waiting -= 1
            else:
                await asyncio.sleep(min(delay, 0.25))

    def reserve(self, tokens: float = 0.0, *, within_s: float = math.inf) -> tuple[float, float]:
        """A turn on the endpoint's rate, taken without a place in flight (the cluster's keeper
        paces every worker's requests with it): (seconds until the request may start, the time it
        starts, which ``done`` and ``rate_limited`` take back). Each turn counts as sent, so the
        next one waits behind it: the turns form a schedule at the rate the provider states.
        LimiterTimeout, and no turn, when the wait is longer than ``within_s``."""
        with self._lock:
            now = time.monotonic()
            expected = self._expected(tokens)
            # After a pause the schedule starts where the pause ends (not all at its end)
            start = max(now, self.paused_until)
            wait = self._budget_wait(expected, start) + start - now
            if wait > within_s:
                raise LimiterTimeout(f"the endpoint would not admit a request for {wait:.3g} s")
            at = now + wait
            self._count_sent(at, expected, now)
            return wait, at

    def _count_sent(self, at: float, expected: float, now: float) -> None:
        """A request admitted to start at ``at`` (under the lock): spent from both budgets and
        remembered for the next report (the last ten seconds' requests are kept)."""
        self.n_requests += 1
        self.requests.spent += 1
        self.tokens.spent += expected
        self._sent.append((at, expected))
        while self._sent and self._sent[0][0] < now - 10:
            self._sent.popleft()

    def _wake(self) -> None:
        """Wake requests waiting for a slot, on whichever loop they wait (cheap when none does)."""
        if not self._waiting:
            return
        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        for loop, event in list(self._waiters.items()):
            if loop.is_closed():
                self._waiters.pop(loop, None)
            elif loop is current:
                event.set()
            else:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(event.set)

    # -- feedback ------------------------------------------------------------------------------
    def done(
        self,
        signals: Signals | None,
        *,
        started: float,
        tokens_used: int | None = None,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        prompt_estimate: float = 0.0,
    ) -> None:
        """A request ended with an answer (or an error that is not a rate limit); with its token
        use and the caller's estimate of the prompt, the next estimates learn."""
        with self._lock:
            now = time.monotonic()
            self.in_flight = max(0, self.in_flight - 1)
            if signals is not None:
                self.requests.answered_while_empty(signals.remaining_requests)
                self.tokens.answered_while_empty(signals.remaining_tokens)
            self._observe(signals, started, now)
            if tokens_used:
                self.n_answers += 1
                step = 1.0 / min(self.n_answers, 50)
                self.tokens_per_request += (tokens_used - self.tokens_per_request) * step
                if prompt_estimate:
                    ratio = max(0.1, (prompt_tokens or tokens_used) / prompt_estimate)
                    self.token_ratio += (ratio - self.token_ratio) * step
                if completion_tokens is not None:
                    self.completion_tokens += (completion_tokens - self.completion_tokens) * step
            if self.window < self.max_concurrency:  # additive increase: about +1 per window of answers
                self.window = min(float(self.max_concurrency), self.window + 1.0 / max(1.0, self.window))
                if not self.n_rate_limited:  # nothing pushed back yet: grow faster
                    self.window = min(float(self.max_concurrency), self.window + 1.0)
        self._wake()

    def rate_limited(self, signals: Signals | None, *, started: float, attempt: int) -> float:
        """A 429: pause the endpoint and halve what is in flight; returns how long this caller
        waits before asking again."""
        with self._lock:
            now = time.monotonic()
            self.in_flight = max(0, self.in_flight - 1)
            self.n_rate_limited += 1
            self.requests.refused()
            self.tokens.refused()
            # Refused, so not counted by the provider: out of what was sent.
            for i, (t, k) in enumerate(self._sent):
                if t == started:
                    del self._sent[i]
                    if t > self.requests.updated:
                        self.requests.spent = max(0.0, self.requests.spent - 1)
                        self.tokens.spent = max(0.0, self.tokens.spent - k)
                    break
            self._observe(signals, started, now)
            retry = signals.retry_after if signals is not None else None
            if retry is None or retry < MIN_RETRY_AFTER_S:  # none, 0 or negative: back off ourselves
                retry = min(30.0, 0.5 * 2 ** min(attempt, 6))
            retry = min(retry, MAX_RETRY_AFTER_S)
            if now - self.last_decrease > max(retry, 0.5):
                self.window = max(1.0, self.window / 2)
                self.last_decrease = now
            self.paused_until = max(self.paused_until, now + retry)
            wait = self.paused_until - now
        self._wake()
        return wait

    # A provider makes its report a moment before the answer arrives. Erring on the safe side
    # both ways, the budget refills from the arrival on, and requests sent in the moment
    # before it (which the report may not include) count as spent.
    REPORT_LEAD_S = 0.05

    def _observe(self, signals: Signals | None, started: float, now: float) -> None:
        if signals is None or not signals.any:
            return
        since = max(started, now - self.REPORT_LEAD_S)
        sent = []
        for t, k in reversed(self._sent):  # newest first: only the last moment's requests are read
            if t <= since:
                break
            sent.append((t, k))
        self.requests.observe(
            signals.limit_requests, signals.remaining_requests, now, float(len(sent)), signals.reset_requests
        )
        self.tokens.observe(
            signals.limit_tokens, signals.remaining_tokens, now, sum(k for _, k in sent), signals.reset_tokens
        )


_registry: dict[str, EndpointLimiter] = {}
_registry_lock = threading.Lock()


def estimate_tokens(messages: list[dict[str, Any]]) -> float:
    """A prompt's tokens from its text (about four characters a token), before any answer says better."""
    return max(1.0, sum(len(str(m.get("content") or "")) for m in messages) / 4)


def endpoint_key(provider: str, api_base: str | None, api_key: str | None) -> str:
    """Provider, endpoint and a hash of the key: jurors that share all three share a limit."""
    digest = hashlib.sha256((api_key or "").encode()).hexdigest()[:12]
    return f"{provider}|{api_base or ''}|{digest}"


def endpoint_limiter(key: str, max_concurrency: int) -> EndpointLimiter:
    """The process's limiter for an endpoint (created on first use)."""
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = _registry[key] = EndpointLimiter(key, max_concurrency)
        else:
            limiter.max_concurrency = max(limiter.max_concurrency, max_concurrency)
        return limiter


def reset_limiters() -> None:
    """Forget every endpoint's state (tests)."""
    with _registry_lock:
        _registry.clear()
