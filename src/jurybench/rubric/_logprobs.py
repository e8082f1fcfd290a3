"""Expected scores from token log probabilities (G-Eval's weighting; AlpacaEval's preference).

A provider that returns ``logprobs`` gives, for every generated token, the token's own log
probability and the ``top_logprobs`` alternatives the model weighed at that position. Where a
JSON answer writes a dimension's value (``"clarity": 4`` or ``"verdict": "B"``), the alternatives
at the value's first token say how likely each other value was. This module turns them into a
distribution over the scale's points and its expectation.

Rules (documented in docs/statistics.md, checked by hand-worked tests):
- The value's first token is the token that holds its first character (after the opening quote
  for a string). Whatever that token holds before the value (a space, a quote, ``":``) must
  begin an alternative for the alternative to count; it is then removed.
- An alternative that holds a whole value followed by something else (``4,`` or ``A"``) is that
  value. One that holds only the start of a value is followed where the model actually went on
  (the chosen token): the next position's alternatives split its probability (``-`` then ``2``
  on a -3..3 scale; ``1`` then ``0`` on 1..10). An alternative that was not chosen and could
  still go on is taken to end where it stands (``1`` on 1..10 counts as 1), since the model's
  continuation after it is unknown.
- Alternatives that are no value of the scale are dropped; the distribution is renormalised
  over the scale's points and ``coverage`` says how much probability the points held before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jurybench.rubric._model import AnyRubric


@dataclass(frozen=True)
class Token:
    """One generated token: its text, log probability and the alternatives at its position."""

    text: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Distribution:
    """A dimension's probabilities over its values, their expectation and the mass they held."""

    probabilities: dict[str, float]  # value (as written: "4", "-2", "A") -> probability, sums to 1
    expected: float
    coverage: float  # probability the scale's values held among the alternatives, before renormalising

    def as_json(self) -> dict[str, object]:
        return {"p": self.probabilities, "coverage": round(self.coverage, 6)}


def tokens_from_logprobs(logprobs: object) -> list[Token] | None:
    """Read the OpenAI shape (``choice.logprobs.content``: token, logprob, top_logprobs), as a
    dict or as litellm's objects. None when there is nothing to read."""
    if logprobs is None:
        return None
    content = logprobs.get("content") if isinstance(logprobs, dict) else getattr(logprobs, "content", None)
    if not content:
        return None
    tokens = []
    for entry in content:
        text = _field(entry, "token")
        logprob = _field(entry, "logprob")
        if not isinstance(text, str) or not isinstance(logprob, int | float):
            return None
        top = []
        for alt in _field(entry, "top_logprobs") or []:
            alt_text, alt_lp = _field(alt, "token"), _field(alt, "logprob")
            if isinstance(alt_text, str) and isinstance(alt_lp, int | float) and math.isfinite(alt_lp):
                top.append((alt_text, float(alt_lp)))
        tokens.append(Token(text, float(logprob), tuple(top)))
    return tokens


def _field(entry: object, name: str) -> Any:
    return entry.get(name) if isinstance(entry, dict) else getattr(entry, name, None)


def dimension_values(rubric: AnyRubric) -> dict[str, dict[str, float]]:
    """Per JSON key, its values as written and the score each stands for (none for a kind
    answered in text)."""
    return rubric.answer_values() if rubric.answers_in_json else {}


def expected_scores(rubric: AnyRubric, text: str, tokens: Sequence[Token]) -> dict[str, Distribution] | None:
    """Per dimension (criterion, category, or ``preference`` for a verdict), the distribution of
    its value read from the tokens. None when the tokens do not spell ``text`` or no value is found."""
    keys = dimension_values(rubric)
    if not keys or "".join(t.text for t in tokens) != text:
        return None
    starts = []
    position = 0
    for token in tokens:
        starts.append(position)
        position += len(token.text)
    out: dict[str, Distribution] = {}
    for key, values in keys.items():
        where = _value_start(text, key)
        if where is None:
            continue
        index = max(i for i, s in enumerate(starts) if s <= where)
        dist = _distribution(tokens, index, where - starts[index], values)
        if dist is not None:
            out[rubric.dimension_of_key(key)] = dist
    return out or None


def _value_start(text: str, key: str) -> int | None:
    """Where the value of ``"key":`` starts (after a string's opening quote); the last such key
    wins, as in the JSON object that parsing keeps."""
    found = None
    for match in re.finditer(r'"' + re.escape(key) + r'"\s*:\s*("?)', text):
        found = match.end()
    return found


_NUMBER = re.compile(r"-?\d*")
_WORD = re.compile(r"[A-Za-z]*")


def _after_lead(alternative: str, lead: str) -> str | None:
    """An alternative at the value's first position without what the chosen token held ahead of
    the value; white space before a value is no part of it either way (`` 4`` and ``4``)."""
    if alternative.startswith(lead):
        return alternative[len(lead) :].lstrip()
    if alternative.lstrip().startswith(lead.lstrip()):
        return alternative.lstrip()[len(lead.lstrip()) :].lstrip()
    return None


def _distribution(tokens: Sequence[Token], index: int, offset: int, values: dict[str, float]) -> Distribution | None:
    numeric = all(_NUMBER.fullmatch(v) for v in values)
    body = _NUMBER if numeric else _WORD
    chosen = tokens[index]
    before = chosen.text[:offset]  # what the first token holds ahead of the value
    mass: dict[str, float] = {}

    def spread(i: int, prefix: str, probability: float, lead: str) -> None:
        alternatives = tokens[i].top or ((tokens[i].text, tokens[i].logprob),)
        following = body.match(tokens[i + 1].text) if i + 1 < len(tokens) else None
        next_continues = following is not None and following.group(0) != ""
        for alt_text, logprob in alternatives:
            rest = _after_lead(alt_text, lead) if not prefix else alt_text
            if rest is None:
                continue
            held = body.match(rest)
            part = held.group(0) if held else ""
            written = prefix + part
            p = probability * math.exp(logprob)
            ends = len(part) < len(rest)  # something other than the value follows in this token
            could_go_on = any(v.startswith(written) and v != written for v in values)
            if not ends and alt_text == tokens[i].text and could_go_on and next_continues:
                spread(i + 1, written, p, "")
            elif written in values:
                mass[written] = mass.get(written, 0.0) + p

    spread(index, "", 1.0, before)
    total = sum(mass.values())
    if total <= 0:
        return None
    probabilities = {v: mass[v] / total for v in values if v in mass}
    expected = sum(values[v] * p for v, p in probabilities.items())
    return Distribution(probabilities, expected, min(total, 1.0))
