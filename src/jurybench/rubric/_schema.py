"""The response schema a juror must answer in, generated from the rubric."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from jurybench.rubric._logprobs import dimension_values
from jurybench.rubric._model import AnyRubric


class _Answer(BaseModel):
    # strict: a JSON integer is the only valid score (no true -> 1, "4" -> 4, 4.0 -> 4).
    model_config = ConfigDict(extra="ignore", strict=True)


_MODELS: dict[str, type[BaseModel]] = {}


def _build_response_model(rubric: AnyRubric) -> type[BaseModel]:
    if not rubric.answers_in_json:
        raise TypeError(f"{rubric.kind} rubrics are answered as text, not with a JSON schema")
    fields: dict[str, Any] = dict(rubric.answer_fields())
    if rubric.rationale:
        fields["rationale"] = (str | None, Field(default=None, description="one or two sentences"))
    model: type[BaseModel] = create_model(f"Answer_{rubric.content_hash[:12]}", __base__=_Answer, **fields)
    return model


def response_model(rubric: AnyRubric) -> type[BaseModel]:
    """A pydantic model with a constrained integer field per criterion or category (built once per rubric)."""
    model = _MODELS.get(rubric.content_hash)
    if model is None:
        model = _MODELS[rubric.content_hash] = _build_response_model(rubric)
    return model


def answer_schema(rubric: AnyRubric, *, enumerate_points: bool = False) -> dict[str, object]:
    """The rubric's answer as a strict JSON schema: every key required, no other key, integer
    bounds and the verdict's choices stated (a provider may not enforce them all; the answer is
    validated afterwards either way). ``enumerate_points``: a scale as the enum of its points
    instead of its bounds, which a grammar enforces (llama.cpp compiles ``enum`` to alternatives
    but ignores ``minimum`` and ``maximum``)."""
    properties: dict[str, object] = {}
    for key, values in dimension_values(rubric).items():
        if all(_is_integer(v) for v in values):
            points = [int(v) for v in values]
            properties[key] = (
                {"type": "integer", "enum": sorted(set(points))}
                if enumerate_points
                else {"type": "integer", "minimum": min(points), "maximum": max(points)}
            )
        else:
            properties[key] = {"type": "string", "enum": list(values)}
    if rubric.rationale:
        properties["rationale"] = {"type": ["string", "null"]}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _is_integer(text: str) -> bool:
    return text.lstrip("-").isdigit()


def answer_format(rubric: AnyRubric) -> str:
    """Instructions for the JSON answer, appended to the prompt unless it places them itself."""
    if not rubric.answers_in_json:
        raise TypeError(f"{rubric.kind} rubrics state their answer format themselves")
    lines, example = rubric.answer_lines()
    if rubric.rationale:
        lines.append('- "rationale": a short string')
        example["rationale"] = "..."
    return (
        "Reply with a single JSON object and nothing else, with these keys:\n"
        + "\n".join(lines)
        + "\nFor example: "
        + json.dumps(example)
    )
