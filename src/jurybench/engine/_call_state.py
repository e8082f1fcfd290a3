"""One call's way from its first request to a stored row, the same for every transport.

A call may take several requests: retries after transport errors (the engine's policy) and
re-asks after an answer that could not be used (the rubric's). :class:`CallState` holds what
the call has sent, used and paid so far and turns each answer into either a settled outcome or
the next messages to send. The synchronous path (one request at a time), a provider's batch
API (many requests in one file) and offline jurors all feed it answers alike, so parsing,
validation, refusal detection and the stored row never depend on how the answer arrived.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from jurybench.jurors import Completion, structured_mode
from jurybench.redact import redact
from jurybench.rubric import AnyRubric, Outcome, Presentation, expected_scores, outcome_from_answer, parse_answer

REASK = "Your previous answer could not be used ({reason}). Reply again with only the answer, in the format described above."


def backoff_s(options: Any, failures: int, rng: Any) -> float:
    """Seconds to wait after the ``failures``-th transient failure: exponential from
    ``retry_base_s`` up to ``retry_max_s``, plus as much again of jitter at most."""
    delay = min(options.retry_max_s, options.retry_base_s * 2 ** (failures - 1))
    return float(delay + rng.uniform(0, delay))


def default_reasks(rubric: AnyRubric, offline_recording: bool) -> int:
    """Re-asks after an unusable answer unless the juror says: as many as the kind asks (none
    where invalid answers are measured: labels, questionnaires, generation); recordings cannot be
    re-asked."""
    return 0 if offline_recording else rubric.reasks


@dataclass
class CallState:
    task: Any  # engine._plan.Task
    rubric: AnyRubric
    parse_retries: int
    mode: str | None = None  # how the answer is structured (schema, json, instructor, text): stored with the call
    messages: list[dict[str, str]] = field(default_factory=list)
    attempts: int = 0  # every request made: retries after errors and re-asks included
    reasks: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int | None = None  # prompt tokens read from the provider's cache, where it said
    tokens_cache_written: int | None = None
    cost: float | None = None
    latency_ms: float = 0.0
    completion: Completion | None = None
    outcome: Outcome | None = None
    status: str = "error"
    reason: str | None = None
    settled: bool = False

    def __post_init__(self) -> None:
        if not self.messages:
            self.messages = list(self.task.messages)
        if self.mode is None:  # offline jurors: JSON answers validated here, or text
            self.mode = structured_mode(self.task.juror, self.rubric, None)

    def answered(self, completion: Completion) -> bool:
        """Take an answer: True when the call is settled, False when ``messages`` now hold a
        re-ask to send next."""
        self._take(completion)
        task = self.task
        outcome = parse_answer(
            self.rubric,
            completion.text,
            completion.finish_reason,
            task.juror.params.get("verdicts"),
            language=task.language,
            shown=Presentation.from_json(task.presentation)
            if task.presentation and self.rubric.presented_per_call
            else None,
            signal=completion.refusal,
        )
        if outcome.status == "valid" and task.juror.params.get("scores") == "expected" and completion.logprobs:
            # Token probabilities, where the provider sent them; without them the discrete score
            # stands alone (expected NULL) and the run says so once per juror.
            found = expected_scores(self.rubric, completion.text, completion.logprobs)
            if found:
                outcome = dataclasses.replace(outcome, distributions=found)
        self.reasks += outcome.status == "invalid"
        if outcome.status == "invalid" and self.reasks <= self.parse_retries:
            self.messages = [
                *self.messages,
                {"role": "assistant", "content": completion.text},
                {"role": "user", "content": REASK.format(reason=outcome.reason)},
            ]
            return False
        self._settle(outcome)
        return True

    def structured(self, completion: Completion, answer: dict[str, object] | None, failure: str | None) -> None:
        """An answer validated by instructor (which made its own re-asks): settles the call."""
        self._take(completion)
        outcome = (
            outcome_from_answer(self.rubric, answer) if answer is not None else Outcome("invalid", None, None, failure)
        )
        self._settle(outcome)

    def _take(self, completion: Completion) -> None:
        """What an answer used and cost, added to the call's totals."""
        self.completion = completion
        self.tokens_in += completion.prompt_tokens or 0
        self.tokens_out += completion.completion_tokens or 0
        if completion.cached_tokens is not None:
            self.tokens_cached = (self.tokens_cached or 0) + completion.cached_tokens
        if completion.cache_write_tokens is not None:
            self.tokens_cache_written = (self.tokens_cache_written or 0) + completion.cache_write_tokens
        self.latency_ms += completion.latency_ms or 0.0
        if completion.cost_usd is not None:
            self.cost = (self.cost or 0.0) + completion.cost_usd

    def _settle(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.status = "ok" if outcome.status == "valid" else outcome.status
        self.reason = outcome.reason
        self.settled = True

    def failed(self, reason: str) -> None:
        """The call ends in error (the last answer, if any, is kept as its raw text)."""
        self.status, self.reason, self.outcome, self.settled = "error", reason, None, True

    def row(self) -> tuple[dict[str, Any], Outcome | None]:
        """The ``calls`` row (run_id filled in by the engine) and the outcome to store as judgments."""
        task, completion, answered = self.task, self.completion, self.completion is not None
        call = {
            "call_key": task.call_key,
            "rubric_hash": self.rubric.content_hash,
            "juror_key": task.juror.key,
            "subject_kind": "pair" if task.order else ("unit" if self.rubric.generates else "item"),
            "subject_id": task.subject_id,
            "presented_order": task.order or None,
            "sample_index": task.sample_index,
            "messages": json.dumps(self.messages, ensure_ascii=False),
            "response_text": completion.text if completion else None,
            "finish_reason": completion.finish_reason if completion else None,
            "status": self.status,
            "reason": redact(self.reason) if self.reason else self.reason,  # providers may repeat the key
            "attempts": self.attempts,
            "prompt_tokens": self.tokens_in if answered else None,
            "completion_tokens": self.tokens_out if answered else None,
            "cost_usd": self.cost,
            "latency_ms": self.latency_ms if answered else None,
            "run_id": None,
            "presentation": task.presentation,
            "structured": self.mode,
            "cached_tokens": self.tokens_cached if answered else None,
            "cache_write_tokens": self.tokens_cache_written if answered else None,
        }
        return call, (self.outcome if self.status != "error" else None)
