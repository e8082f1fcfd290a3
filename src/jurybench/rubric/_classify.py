"""Closed label sets: normalising an answer and matching it to exactly one label.

Normalisation (documented in docs/rubrics.md): Unicode NFKC, case folding, surrounding
whitespace, quotes and final punctuation removed, inner whitespace collapsed to one
space, and one leading "label:"/"answer:" prefix dropped. The normalised answer must
equal the normalised name of a label in the item's language, one of its aliases in
that language, or its canonical name. Anything else (an unknown word, two labels,
a sentence) matches no label and is invalid: nothing is guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from jurybench.rubric._labels import normalise_label
from jurybench.rubric._model import ClassificationRubric, kind_behaviour


def label_index(rubric: ClassificationRubric, language: str | None) -> dict[str, str]:
    """Normalised accepted answer -> canonical label, for one language."""
    index: dict[str, str] = {}
    for label in rubric.labels:
        index[normalise_label(label.name)] = label.name
        if language:
            index[normalise_label(label.shown(language))] = label.name
            for alias in label.aliases.get(language, []):
                index[normalise_label(alias)] = label.name
    return index


@dataclass(frozen=True)
class LabelMatch:
    label: str | None
    reason: str | None  # why the answer matches no label
    as_written: bool = False  # the answer was an accepted form exactly, before normalisation


def accepted_forms(rubric: ClassificationRubric, language: str | None) -> set[str]:
    """The answers that name a label as they are, before any normalisation."""
    forms = {label.name for label in rubric.labels}
    if language:
        for label in rubric.labels:
            forms.add(label.shown(language))
            forms.update(label.aliases.get(language, []))
    return forms


def match_label(rubric: ClassificationRubric, text: str, language: str | None) -> LabelMatch:
    """The canonical label an answer names, or the reason it names none."""
    answer = text
    if rubric.answer == "json":
        from jurybench.rubric._json import extract_json

        try:
            data = extract_json(text)
        except ValueError as exc:
            return LabelMatch(None, str(exc))
        if not isinstance(data, dict) or not isinstance(data.get("label"), str):
            return LabelMatch(None, 'label: the JSON object needs a string "label"')
        answer = data["label"]
    key = normalise_label(answer)
    if not key:
        return LabelMatch(None, "empty answer")
    found = label_index(rubric, language).get(key)
    if found is None:
        shown = json.dumps(answer.strip()[:60], ensure_ascii=False)
        return LabelMatch(None, f"label: {shown} is not one of the {len(rubric.labels)} labels")
    return LabelMatch(found, None, answer.strip() in accepted_forms(rubric, language))


@kind_behaviour("classification", "gold")
def gold_label(rubric: ClassificationRubric, value: str | None, language: str | None) -> str | None:
    """An item's gold label (its reference) as a canonical name; None when it has none or names no label."""
    if value is None or not str(value).strip():
        return None
    return label_index(rubric, language).get(normalise_label(str(value)))


def labels_block(rubric: ClassificationRubric, language: str | None) -> str:
    return "\n".join(f"- {label.shown(language or rubric.default_language)}" for label in rubric.labels)


def classification_answer_format(rubric: ClassificationRubric) -> str:
    if rubric.answer == "json":
        return 'Reply with a single JSON object and nothing else: {"label": "<one label from the list>"}'
    return "Reply with exactly one label from the list, written as it is shown, and nothing else."
