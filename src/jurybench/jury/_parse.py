"""Read a juror's raw answer into scores, or an explicit invalid / refusal record.

Nothing is coerced: an answer that does not validate against the rubric's
response schema is ``invalid`` with the reason; a refusal is ``refusal``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from jurybench.rubric import AnyRubric, PreferenceRubric, response_model

PREFERENCE_SCORE = {"A": 1, "B": -1, "tie": 0}

# Phrases that open a refusal. Checked only when the answer did not parse, so a
# valid verdict that mentions "I cannot" stays valid.
REFUSAL_RE = re.compile(
    r"^\W*(?:I(?:'m| am)? (?:sorry|afraid)|I (?:can(?:not|'t)|won't|will not|am unable|'m unable)"
    r"|As an AI|I must decline|Sorry, (?:but )?I)",
    re.IGNORECASE,
)
_FENCE_RE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


@dataclass(frozen=True)
class Outcome:
    status: str  # valid | invalid | refusal
    scores: dict[str, int] | None
    rationale: str | None
    reason: str | None


def _refusal_or_invalid(text: str, finish_reason: str | None, reason: str) -> Outcome:
    if finish_reason == "content_filter":
        return Outcome("refusal", None, None, "provider content filter")
    if REFUSAL_RE.search(text.strip()[:200]):
        return Outcome("refusal", None, None, "the juror declined to answer")
    return Outcome("invalid", None, None, reason)


def extract_json(text: str) -> Any:
    """The JSON object in an answer: the whole text, a fenced block, or the outermost braces."""
    stripped = text.strip()
    candidates = [stripped]
    fence = _FENCE_RE.search(stripped)
    if fence:
        candidates.append(fence.group(1))
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise ValueError("no JSON object found in the answer")


def parse_structured(rubric: AnyRubric, text: str, finish_reason: str | None = None) -> Outcome:
    """Validate a JSON answer against the rubric's response model."""
    if not text.strip():
        return _refusal_or_invalid(text, finish_reason, "empty answer")
    try:
        data = extract_json(text)
    except ValueError as exc:
        return _refusal_or_invalid(text, finish_reason, str(exc))
    try:
        answer = response_model(rubric).model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "answer"
        return Outcome("invalid", None, None, f"{field}: {err['msg']}")
    return _outcome_from_answer(rubric, answer.model_dump())


def _outcome_from_answer(rubric: AnyRubric, values: dict[str, Any]) -> Outcome:
    rationale = values.pop("rationale", None)
    if isinstance(rubric, PreferenceRubric):
        return Outcome("valid", {"preference": PREFERENCE_SCORE[values["verdict"]]}, rationale, None)
    return Outcome("valid", {k: int(v) for k, v in values.items()}, rationale, None)


def parse_with_rules(rubric: AnyRubric, rule_set: str, text: str, finish_reason: str | None) -> Outcome:
    """Free-text verdicts: the first rule (in order) whose pattern occurs decides."""
    assert isinstance(rubric, PreferenceRubric)
    stripped = text.strip()  # surrounding whitespace carries no meaning; anchors see the text
    for rule in rubric.verdict_rules[rule_set]:
        if re.search(rule.pattern, stripped):
            if rule.verdict == "tie" and not rubric.allow_tie:
                return Outcome("invalid", None, None, "a tie, which the rubric does not allow")
            return Outcome("valid", {"preference": PREFERENCE_SCORE[rule.verdict]}, None, None)
    return _refusal_or_invalid(text, finish_reason, f"no '{rule_set}' verdict rule matched")


def parse_answer(rubric: AnyRubric, text: str, finish_reason: str | None, verdict_rules: str | None) -> Outcome:
    if verdict_rules:
        return parse_with_rules(rubric, verdict_rules, text, finish_reason)
    return parse_structured(rubric, text, finish_reason)
