"""A juror's own pace: the rpm/tpm caps given on the juror (the endpoint's limits are in _endpoint_limits)."""

from __future__ import annotations

import asyncio
import math
import time


class JurorPace:
    """A juror's own caps: requests spaced to at most ``rpm`` a minute and tokens to at most
    ``tpm`` (None: no cap). Provider limits are the endpoint limiter's (jury/_limits.py)."""

    def __init__(self, rpm: float | None, tpm: float | None = None) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self.seconds_per_token = 60.0 / tpm if tpm else 0.0
        self.next_at = 0.0
        self.next_token_at = 0.0

    @property
    def capped(self) -> bool:
        return bool(self.interval or self.seconds_per_token)

    def reserve(self, tokens: float = 0.0, *, within_s: float = math.inf) -> float:
        """Take this request's turn under the caps: the seconds to wait for it. LimiterTimeout
        (and no turn taken) when that is more than ``within_s`` (what is left of the call's
        --give-up-after). The one schedule every worker of a Ray run shares (engine/_ray.py)."""
        now = time.monotonic()
        delay = max(self.next_at - now, self.next_token_at - now if tokens else 0.0)
        if delay > 0 and delay > within_s:
            from jurybench.jurors._endpoint_limits import LimiterTimeout

            raise LimiterTimeout(f"the juror's own rpm/tpm cap would hold it for {delay:.3g} s")
        self.next_at = max(now, self.next_at) + self.interval
        if self.seconds_per_token and tokens:
            self.next_token_at = max(now, self.next_token_at) + tokens * self.seconds_per_token
        return max(delay, 0.0)

    async def wait(self, tokens: float = 0.0, *, deadline: float = math.inf) -> None:
        """Wait for this request's turn under the caps; LimiterTimeout (and no turn taken) when
        that would pass ``deadline`` (time.monotonic(): the call's --give-up-after)."""
        if not self.capped:
            return
        delay = self.reserve(tokens, within_s=deadline - time.monotonic())
        if delay > 0:
            await asyncio.sleep(delay)
