"""Render a rubric's template for one item (pointwise) or one pair in one order (pairwise)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.rubric._inventory import Presentation
from jurybench.rubric._model import (
    ITEM_RENDER,
    PAIR_RENDER,
    PLACEHOLDER_RE,
    AnyRubric,
    ClassificationRubric,
    InventoryRubric,
    kind_behaviour,
)
from jurybench.rubric._schema import answer_format

Messages = list[dict[str, str]]


def criteria_block(rubric: AnyRubric) -> str:
    """The rubric's criteria or categories as prompt text (made once per rubric)."""
    parts = rubric.prompt_parts
    if "criteria" not in parts:
        parts["criteria"] = rubric.criteria_text()
    return parts["criteria"]


def _answer_format(rubric: AnyRubric) -> str:
    """The JSON answer's instructions (made once per rubric)."""
    parts = rubric.prompt_parts
    if "answer_format" not in parts:
        parts["answer_format"] = answer_format(rubric)
    return parts["answer_format"]


# One pass over the template: "{{" and "}}" are the template's own escapes, "{name}" a
# placeholder. Values are inserted as they are and never scanned again, so item text
# reaches the juror byte for byte, braces included.
_TOKEN_RE = re.compile(r"\{\{|\}\}|" + PLACEHOLDER_RE.pattern)


def fill_template(text: str, values: Mapping[str, object], meta: Mapping[str, object], subject: str) -> str:
    def sub(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        name = match.group(1)
        if name.startswith("meta."):
            key = name[5:]
            if key not in meta or meta[key] is None:
                raise JurybenchError(
                    f"{subject}: the rubric template uses {{{name}}} but the item has no metadata field '{key}'.",
                    hint="Add the column to the items file, or remove the placeholder.",
                )
            return str(meta[key])
        value = values.get(name)
        if name == "reference" and (value is None or not str(value).strip()):
            # A comparison with an empty reference is paid for and means nothing (a juror then
            # judges the response against nothing): refused, as a missing {meta.<field>} is.
            raise JurybenchError(
                f"{subject}: the rubric template uses {{reference}} but the item has no reference answer.",
                hint="Add a reference column to the items file, or judge only items that have one "
                "(--where \"reference IS NOT NULL AND reference <> ''\").",
            )
        return "" if value is None else str(value)

    return _TOKEN_RE.sub(sub, text)


def conversation_text(rubric: AnyRubric, subject: Mapping[str, Any], side: str) -> str | None:
    """The subject's (or a pair side's) conversation as the judge reads it: fitted to the juror's
    context where the engine fitted it (``fitted<side>``), else whole; None when no template uses it."""
    if not rubric.conversation_fields:
        return None
    fitted = subject.get(f"fitted{side}")
    if fitted is not None:
        return str(fitted)
    from jurybench.rubric._transcript import messages_of, render_transcript

    messages = messages_of(subject.get(f"conversation{side}"), subject.get("prompt"), subject.get(f"response{side}"))
    return render_transcript(messages)[0]


def render_pointwise(rubric: AnyRubric, item: Mapping[str, Any]) -> Messages:
    """Messages asking a juror to score one item on every criterion."""
    template = rubric.template_for(item.get("language"))
    values = {
        "prompt": item.get("prompt"),
        "response": item.get("response"),
        "conversation": conversation_text(rubric, item, ""),
        "reference": item.get("reference"),
        "language": item.get("language"),
        "model": item.get("model"),
        "criteria": criteria_block(rubric),
        "answer_format": _answer_format(rubric),
    }
    return _messages(template.system, template.user, values, item, f"item {item.get('item_id')}")


def render_classification(rubric: ClassificationRubric, item: Mapping[str, Any]) -> Messages:
    """Messages asking for one label of the rubric's closed set, shown in the item's language."""
    from jurybench.rubric._classify import classification_answer_format, labels_block

    template = rubric.template_for(item.get("language"))
    values = {
        "prompt": item.get("prompt"),
        "response": item.get("response"),
        "conversation": conversation_text(rubric, item, ""),
        "reference": None,  # the gold label is never shown to the classifier
        "language": item.get("language"),
        "labels": labels_block(rubric, item.get("language")),
        "answer_format": classification_answer_format(rubric),
    }
    return _messages(template.system, template.user, values, item, f"item {item.get('item_id')}", append=False)


def render_inventory(rubric: InventoryRubric, item: Mapping[str, Any], shown: Presentation) -> Messages:
    """The questionnaire for one item (a target to report on), in the presentation drawn for the call."""
    from jurybench.rubric._inventory import arm_of, inventory_answer_format, items_block, scale_block

    language = item.get("language") or rubric.default_language
    if language not in rubric.templates:
        language = rubric.default_language if rubric.language_fallback else language
    template = rubric.template_for(language)
    arm = arm_of(rubric, item.get("treatment"))
    values = {
        "prompt": item.get("prompt"),
        "response": item.get("response"),
        "language": language,
        "scale": scale_block(rubric, language, shown),
        "items": items_block(rubric, language, arm, shown),
        "answer_format": rubric.answer_instructions.get(language) or inventory_answer_format(rubric),
    }
    return _messages(template.system, template.user, values, item, f"item {item.get('item_id')}", append=False)


def render_pairwise(
    rubric: AnyRubric,
    pair: Mapping[str, Any],
    order: str,
) -> Messages:
    """Messages comparing a pair, with A shown first (order 'AB') or B first ('BA')."""
    first, second = ("a", "b") if order == "AB" else ("b", "a")
    values = {
        "prompt": pair.get("prompt"),
        "response_a": pair.get(f"response_{first}"),
        "response_b": pair.get(f"response_{second}"),
        "conversation_a": conversation_text(rubric, pair, f"_{first}"),
        "conversation_b": conversation_text(rubric, pair, f"_{second}"),
        "reference": pair.get("reference"),
        "language": pair.get("language"),
        "categories": criteria_block(rubric),
        "answer_format": _answer_format(rubric),
    }
    template = rubric.template_for(pair.get("language"))
    return _messages(template.system, template.user, values, pair, f"pair {pair.get('pair_id')}")


def _messages(
    system: str, user: str, values: Mapping[str, object], subject: Mapping[str, Any], label: str, append: bool = True
) -> Messages:
    """The filled-in messages; the JSON answer format is appended unless the template places it
    (classification and questionnaire templates that leave it out state the format themselves)."""
    meta = subject.get("metadata") or {}
    user_text = fill_template(user, values, meta, label)
    if append and "{answer_format}" not in user and "{answer_format}" not in system:
        user_text = user_text.rstrip() + "\n\n" + str(values["answer_format"])
    messages: Messages = []
    if system.strip():
        messages.append({"role": "system", "content": fill_template(system, values, meta, label)})
    messages.append({"role": "user", "content": user_text})
    return messages


# Each kind's renderer, as the kind's ``render`` method calls it (registered here: this module
# builds on _model, which cannot import it).
@kind_behaviour("pointwise", "render")
@kind_behaviour(ITEM_RENDER, "render")
def _pointwise(rubric: AnyRubric, subject: Mapping[str, object], order: str, key: str) -> tuple[Messages, None]:
    return render_pointwise(rubric, subject), None


@kind_behaviour("pairwise", "render")
@kind_behaviour("preference", "render")
@kind_behaviour(PAIR_RENDER, "render")
def _pairwise(rubric: AnyRubric, subject: Mapping[str, object], order: str, key: str) -> tuple[Messages, None]:
    return render_pairwise(rubric, subject, order), None


@kind_behaviour("classification", "render")
def _classification(
    rubric: ClassificationRubric, subject: Mapping[str, object], order: str, key: str
) -> tuple[Messages, None]:
    return render_classification(rubric, subject), None


@kind_behaviour("inventory", "render")
def _inventory(rubric: InventoryRubric, subject: Mapping[str, object], order: str, key: str) -> tuple[Messages, str]:
    """The questionnaire in the item order and scale rotation drawn from the call key."""
    from jurybench.rubric._inventory import presentation

    shown = presentation(rubric, key)
    return render_inventory(rubric, subject, shown), shown.as_json()
