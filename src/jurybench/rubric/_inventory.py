"""Questionnaires (rubric kind ``inventory``): presentation (rotation, item order), rendering, parsing, scoring.

A *presentation* is drawn per call from the call's key, so a resumed run shows a call
the same questionnaire again and the cache stays valid:

- ``order``: the item ids in the order shown (shown position i + 1 -> item);
- ``rotation``: for numeral n (1-based), the index of the canonical label it stands for
  (identity when the rubric has ``rotation: false``).

An answer ``n. v`` (or JSON ``{"answers": {"n": v}}``) means: the item shown at position
n got numeral v. Numeral v is label ``rotation[v - 1]``, i.e. canonical score
``s = rotation[v - 1] + 1`` on the questionnaire's 1..P scale; it is rescaled to the
reference scale 1..R by ``1 + (s - 1) * (R - 1) / (P - 1)`` and, for a reverse-keyed item,
reversed as ``R + 1 - score``. A position with no answer, a numeral off the scale, or two
different answers for one position leaves that item invalid, with the reason.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jurybench.rubric._model import InventoryRubric

_LINE_RE = re.compile(r"^\s*(?:item\s*)?(\d{1,3})\s*[.):=\-]\s*(\S+)", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Presentation:
    order: tuple[str, ...]
    rotation: tuple[int, ...]

    def as_json(self) -> str:
        return json.dumps({"order": list(self.order), "rotation": list(self.rotation)})

    @classmethod
    def from_json(cls, text: str) -> Presentation:
        data = json.loads(text)
        return cls(tuple(data["order"]), tuple(int(i) for i in data["rotation"]))


def presentation(rubric: InventoryRubric, seed: str) -> Presentation:
    """The item order and scale rotation for one call, drawn from ``seed`` (the call key)."""
    rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    order = [i.id for i in rubric.items]
    if rubric.shuffle:
        rng.shuffle(order)
    rotation = list(range(rubric.scale.points))
    if rubric.rotation:
        rng.shuffle(rotation)
    return Presentation(tuple(order), tuple(rotation))


def fill_item(rubric: InventoryRubric, item_id: str, language: str, arm: str | None) -> str:
    """An item's statement in a language with the placeholders of the arm filled in."""
    from jurybench.errors import JurybenchError
    from jurybench.rubric._model import PLACEHOLDER_RE

    item = next(i for i in rubric.items if i.id == item_id)
    text = item.text[language]
    names = PLACEHOLDER_RE.findall(text)
    if not names:
        return text
    values = rubric.placeholders.get(language, {})
    if arm not in values:
        raise JurybenchError(
            f"rubric '{rubric.name}': item '{item_id}' needs the arm of treatment '{rubric.treatment_variable}', "
            f"and the item's arm is {arm!r}.",
            hint=f"Give items a treatment {rubric.treatment_variable}= one of {', '.join(sorted(values))}.",
        )
    filled = PLACEHOLDER_RE.sub(lambda m: values[arm][m.group(1)], text)
    return filled[:1].upper() + filled[1:]  # a statement opening with a pronoun starts a sentence


def scale_block(rubric: InventoryRubric, language: str, shown: Presentation) -> str:
    labels = rubric.scale.labels[language]
    return "\n".join(f"{n} = {labels[index]}" for n, index in enumerate(shown.rotation, start=1))


def items_block(rubric: InventoryRubric, language: str, arm: str | None, shown: Presentation) -> str:
    return "\n".join(
        f"{n}. {fill_item(rubric, item_id, language, arm)}" for n, item_id in enumerate(shown.order, start=1)
    )


def inventory_answer_format(rubric: InventoryRubric) -> str:
    return (
        f"Answer every statement on its own line as '<statement number>. <scale number>', "
        f"for example '1. {rubric.scale.points}', using only the numbers 1 to {rubric.scale.points}, "
        "and write nothing else."
    )


@dataclass(frozen=True)
class ItemAnswer:
    item: str
    position: int
    status: str  # valid | invalid
    raw: int | None  # the numeral answered
    label: str | None  # the label that numeral stood for (in the prompt's language)
    score: float | None  # canonical, rescaled, reverse-keyed
    reason: str | None


def score_numeral(rubric: InventoryRubric, item_id: str, numeral: int, shown: Presentation) -> float:
    """Numeral -> canonical score on the reference scale, reverse keying applied."""
    points, reference = rubric.scale.points, rubric.scale.reference
    canonical = shown.rotation[numeral - 1] + 1
    score = 1 + (canonical - 1) * (reference - 1) / (points - 1)
    reverse = next(i.reverse for i in rubric.items if i.id == item_id)
    return (reference + 1 - score) if reverse else score


def _pairs_from_text(text: str) -> list[tuple[int, str]]:
    from jurybench.rubric._json import extract_json

    try:
        data = extract_json(text)
    except ValueError:
        data = None
    if isinstance(data, Mapping):
        answers = data.get("answers", data)
        if isinstance(answers, Mapping):
            return [(int(k), json.dumps(v)) for k, v in answers.items() if str(k).strip().isdigit()]
        if isinstance(answers, list):
            return [(n, json.dumps(v)) for n, v in enumerate(answers, start=1)]
    return [(int(m.group(1)), m.group(2).rstrip(".,;")) for m in _LINE_RE.finditer(text)]


def parse_inventory(rubric: InventoryRubric, text: str, shown: Presentation, language: str) -> list[ItemAnswer]:
    """One answer per item (in rubric order); never guessed."""
    points = rubric.scale.points
    given: dict[int, set[str]] = {}
    for position, value in _pairs_from_text(text):
        given.setdefault(position, set()).add(value)
    labels = rubric.scale.labels[language]
    out = []
    position_of = {item_id: n for n, item_id in enumerate(shown.order, start=1)}
    for item in rubric.items:
        n = position_of[item.id]
        values = given.get(n)
        raw: int | None = None
        reason = None
        if not values:
            reason = f"statement {n}: no answer"
        elif len(values) > 1:
            reason = f"statement {n}: answered more than once ({', '.join(sorted(values))})"
        else:
            value = next(iter(values))
            if not re.fullmatch(r"\d+", value):
                reason = f"statement {n}: {value[:20]!r} is not a scale number"
            elif not 1 <= int(value) <= points:
                reason = f"statement {n}: {value} is outside the scale 1..{points}"
            else:
                raw = int(value)
        if raw is None:
            out.append(ItemAnswer(item.id, n, "invalid", None, None, None, reason))
            continue
        label = labels[shown.rotation[raw - 1]]
        out.append(ItemAnswer(item.id, n, "valid", raw, label, score_numeral(rubric, item.id, raw, shown), None))
    return out


def arm_of(rubric: InventoryRubric, treatment: Any) -> str | None:
    if not rubric.treatment_variable:
        return None
    if isinstance(treatment, str):
        treatment = json.loads(treatment) if treatment else {}
    value = (treatment or {}).get(rubric.treatment_variable)
    return None if value is None else str(value)
