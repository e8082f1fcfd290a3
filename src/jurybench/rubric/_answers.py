"""Read a juror's raw answer into scores, or an explicit invalid / refusal record.

Nothing is coerced: an answer that does not validate against the rubric's
response schema is ``invalid`` with the reason; a refusal is ``refusal``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from jurybench.rubric._classify import match_label
from jurybench.rubric._inventory import Presentation, parse_inventory
from jurybench.rubric._json import extract_json
from jurybench.rubric._logprobs import Distribution
from jurybench.rubric._model import PREFERENCE_SCORE, AnyRubric, ClassificationRubric, InventoryRubric, PreferenceRubric
from jurybench.rubric._schema import response_model

# Phrases that open a refusal. Checked only when the answer did not parse, so a
# valid verdict that mentions "I cannot" stays valid.
REFUSAL_RE = re.compile(
    r"^\W*(?:I(?:'m| am)? (?:sorry|afraid)|I (?:can(?:not|'t)|won't|will not|am unable|'m unable)"
    r"|As an AI|I must decline|Sorry, (?:but )?I)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Detail:
    """One dimension's own outcome, when it can differ from the call's (questionnaire items)."""

    status: str
    reason: str | None = None
    raw: float | None = None  # the number the juror wrote (before rotation, rescaling, keying)
    label: str | None = None
    position: int | None = None  # where the item was shown (1-based)


@dataclass(frozen=True)
class Outcome:
    status: str  # valid | invalid | refusal
    scores: dict[str, object] | None
    rationale: str | None
    reason: str | None
    details: dict[str, Detail] | None = None
    # scores=expected: per dimension, the distribution read from the answer's token probabilities
    distributions: dict[str, Distribution] | None = None


def _refusal_or_invalid(text: str, finish_reason: str | None, reason: str) -> Outcome:
    if finish_reason == "content_filter":
        return Outcome("refusal", None, None, "provider content filter")
    if REFUSAL_RE.search(text.strip()[:200]):
        return Outcome("refusal", None, None, "the juror declined to answer")
    return Outcome("invalid", None, None, reason)


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
    return outcome_from_answer(rubric, answer.model_dump())


def outcome_from_answer(rubric: AnyRubric, values: dict[str, Any]) -> Outcome:
    rationale = values.pop("rationale", None)
    return Outcome("valid", rubric.scores_of(values), rationale, None)


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


def parse_classification(
    rubric: ClassificationRubric, text: str, finish_reason: str | None, language: str | None
) -> Outcome:
    found = match_label(rubric, text, language)
    if found.label is None:
        return _refusal_or_invalid(text, finish_reason, found.reason or "no label")
    return Outcome("valid", {"label": None}, None, None, {"label": Detail("valid", label=found.label)})


def parse_questionnaire(
    rubric: InventoryRubric, text: str, finish_reason: str | None, language: str | None, shown: Presentation
) -> Outcome:
    """Per item: valid with its canonical score, or invalid with the reason. The call is
    valid when at least one item is; with none, it is invalid (or a refusal)."""
    lang = language if language in rubric.templates else rubric.default_language
    answers = parse_inventory(rubric, text, shown, lang)
    if not any(a.status == "valid" for a in answers):
        return _refusal_or_invalid(text, finish_reason, "no statement answered with a scale number")
    details = {a.item: Detail(a.status, a.reason, a.raw, a.label, a.position) for a in answers}
    n_invalid = sum(a.status != "valid" for a in answers)
    reason = f"{n_invalid} of {len(answers)} statements without a valid answer" if n_invalid else None
    return Outcome("valid", {a.item: a.score for a in answers}, None, reason, details)


def parse_answer(
    rubric: AnyRubric,
    text: str,
    finish_reason: str | None,
    verdict_rules: str | None,
    *,
    language: str | None = None,
    shown: Presentation | None = None,
    signal: str | None = None,
) -> Outcome:
    if rubric.generates:
        # A generated response: a refusal (the provider's signal or the spec's patterns), empty, or valid.
        why = rubric.is_refusal(text, finish_reason, signal)  # type: ignore[attr-defined]
        if why:
            return Outcome("refusal", None, None, why)
        return Outcome("valid", None, None, None) if text.strip() else Outcome("invalid", None, None, "empty response")
    if isinstance(rubric, ClassificationRubric):
        return parse_classification(rubric, text, finish_reason, language)
    if isinstance(rubric, InventoryRubric):
        assert shown is not None, "a questionnaire answer is read against its presentation"
        return parse_questionnaire(rubric, text, finish_reason, language, shown)
    if verdict_rules:
        return parse_with_rules(rubric, verdict_rules, text, finish_reason)
    return parse_structured(rubric, text, finish_reason)
