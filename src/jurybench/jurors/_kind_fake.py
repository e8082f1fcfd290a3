"""The fake juror kind (``fake/<name>``): deterministic rule-based answers for tests and demos,
or answers queued by a test."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections import defaultdict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from jurybench.jurors._completion import (
    Backend,
    Completion,
    Messages,
    Slot,
    TransientError,
)
from jurybench.jurors._kinds import JurorKind
from jurybench.jurors._simulated import check_seeds
from jurybench.jurors._spec import (
    FAKE_KNOBS,
    READING,
    SAMPLING,
    JurorSpec,
)
from jurybench.rubric import (
    AnyRubric,
    ClassificationRubric,
    InventoryRubric,
    PairwiseRubric,
    PointwiseRubric,
    PreferenceRubric,
    Token,
    by_kind,
    dimension_values,
)

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.rubric import AnyRubric


class FakeBackend(Backend):
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
        self.generating = rubric.generates  # a generation spec, not a rubric

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
        else:
            text = self._answer(rng)
        expected = self.spec.params.get("scores") == "expected" and not self.generating
        return Completion(
            text=text,
            finish_reason="stop",
            prompt_tokens=sum(len(m["content"]) for m in messages) // 4,
            completion_tokens=len(text) // 4,
            logprobs=fake_logprobs(self.rubric, text, rng) if expected and text.startswith("{") else None,
        )

    def _answer(self, rng: random.Random) -> str:
        """A random answer of the rubric's kind (its JSON, with the rationale it asks for; or its text)."""
        own = by_kind(_FAKE_ANSWERS, self.rubric)
        answer = own(self.rubric, rng, self.position_bias) if own is not None else _fake_from_values(self.rubric, rng)
        if not self.rubric.answers_in_json:
            return str(answer)
        assert isinstance(answer, dict)
        if self.rubric.rationale:
            answer["rationale"] = "fake juror"
        return json.dumps(answer)


# What a fake juror answers, per rubric kind: scores drawn uniformly (pointwise), around the
# position bias (pairwise), a verdict leaning to the first-shown response by the bias
# (preference), a label, or a questionnaire's numbered lines. A new kind adds its own.
def _fake_pointwise(rubric: PointwiseRubric, rng: random.Random, bias: float) -> dict[str, object]:
    return {c.name: rng.randint(c.scale.min, c.scale.max) for c in rubric.criteria}


def _fake_pairwise(rubric: PairwiseRubric, rng: random.Random, bias: float) -> dict[str, object]:
    return {c.name: max(-rubric.k, min(rubric.k, round(rng.gauss(0, 1) + bias))) for c in rubric.categories}


def _fake_preference(rubric: PreferenceRubric, rng: random.Random, bias: float) -> dict[str, object]:
    first = rng.random() < 0.5 + bias / 2
    tie = rubric.allow_tie and rng.random() < 0.1
    return {"verdict": "tie" if tie else ("A" if first else "B")}


def _fake_label(rubric: ClassificationRubric, rng: random.Random, bias: float) -> str:
    return rng.choice(rubric.labels).shown(rubric.default_language)


def _fake_questionnaire(rubric: InventoryRubric, rng: random.Random, bias: float) -> str:
    return "\n".join(f"{n}. {rng.randint(1, rubric.scale.points)}" for n in range(1, len(rubric.items) + 1))


def _fake_from_values(rubric: AnyRubric, rng: random.Random) -> dict[str, object]:
    """A kind of a plug-in's: each key of its JSON answer one of its values, drawn uniformly
    (an integer written as a JSON number)."""
    answer: dict[str, object] = {}
    for key, values in rubric.answer_values().items():
        text = rng.choice(sorted(values))
        answer[key] = int(text) if text.lstrip("-").isdigit() else text
    return answer


_FAKE_ANSWERS: dict[str, Callable[[Any, random.Random, float], dict[str, object] | str]] = {
    "pointwise": _fake_pointwise,
    "pairwise": _fake_pairwise,
    "preference": _fake_preference,
    "classification": _fake_label,
    "inventory": _fake_questionnaire,
}


def fake_logprobs(rubric: AnyRubric, text: str, rng: random.Random) -> list[Token]:
    """Tokens for a fake JSON answer as a provider would send them with ``logprobs``: each value
    its own token (a space before it, as tokenisers often do), with the chosen value at 0.5-0.9
    and the rest of the probability on the neighbouring values."""
    import math
    import re

    tokens: list[Token] = []
    position = 0
    for key, values in dimension_values(rubric).items():
        match = re.search(r'"' + re.escape(key) + r'": "?([^",}]+)', text)
        if match is None:
            continue
        start, end = match.span(1)
        if start > position:
            tokens.append(Token(text[position:start], 0.0))
        chosen = match.group(1)
        written = list(values)
        at = written.index(chosen)
        neighbours = [
            v for v in (written[at - 1] if at else None, written[at + 1] if at + 1 < len(written) else None) if v
        ]
        p = rng.uniform(0.5, 0.9)
        top = [(chosen, math.log(p))] + [(v, math.log((1 - p) / len(neighbours))) for v in neighbours]
        tokens.append(Token(chosen, math.log(p), tuple(top)))
        position = end
    if position < len(text):
        tokens.append(Token(text[position:], 0.0))
    return tokens


def _seed_of(*parts: object) -> int:
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def make_fake(spec: JurorSpec, rubric: AnyRubric, con: Connection, subject_ids: list[str] | None) -> Backend:
    return FakeBackend(spec, rubric)


KIND = JurorKind(
    "fake",
    make_fake,
    "deterministic rule-based answers for tests and demos",
    parameters=READING | SAMPLING | FAKE_KNOBS,
    offline=True,
    check=check_seeds,
)
