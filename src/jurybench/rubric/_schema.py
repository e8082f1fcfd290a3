"""The response schema a juror must answer in, generated from the rubric."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from jurybench.rubric._logprobs import dimension_values
from jurybench.rubric._model import AnyRubric, PairwiseRubric, PointwiseRubric, PreferenceRubric


class _Answer(BaseModel):
    # strict: a JSON integer is the only valid score (no true -> 1, "4" -> 4, 4.0 -> 4).
    model_config = ConfigDict(extra="ignore", strict=True)


_MODELS: dict[str, type[BaseModel]] = {}


def _build_response_model(rubric: AnyRubric) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    if isinstance(rubric, PointwiseRubric):
        for c in rubric.criteria:
            fields[c.name] = (int, Field(ge=c.scale.min, le=c.scale.max, description=c.description))
    elif isinstance(rubric, PairwiseRubric):
        for cat in rubric.categories:
            fields[cat.name] = (
                int,
                Field(ge=-rubric.k, le=rubric.k, description=f"how much more {cat.name} in A"),
            )
    elif isinstance(rubric, PreferenceRubric):
        choices = ("A", "B", "tie") if rubric.allow_tie else ("A", "B")
        fields["verdict"] = (Literal[choices], Field(description="the better response"))
    else:
        raise TypeError(f"{rubric.kind} rubrics are answered as text, not with a JSON schema")
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


def answer_schema(rubric: AnyRubric) -> dict[str, Any]:
    """The rubric's answer as a strict JSON schema: every key required, no other key, integer
    bounds and the verdict's choices stated (a provider may not enforce them all; the answer is
    validated afterwards either way)."""
    properties: dict[str, Any] = {}
    for key, values in dimension_values(rubric).items():
        if isinstance(rubric, PreferenceRubric):
            properties[key] = {"type": "string", "enum": list(values)}
        else:
            points = [int(v) for v in values]
            properties[key] = {"type": "integer", "minimum": min(points), "maximum": max(points)}
    if rubric.rationale:
        properties["rationale"] = {"type": ["string", "null"]}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def answer_format(rubric: AnyRubric) -> str:
    """Instructions for the JSON answer, appended to the prompt unless it places them itself."""
    example: dict[str, Any] = {}
    if isinstance(rubric, PointwiseRubric):
        lines = [f'- "{c.name}": integer {c.scale.min}..{c.scale.max}' for c in rubric.criteria]
        example = {c.name: c.scale.min for c in rubric.criteria}
    elif isinstance(rubric, PairwiseRubric):
        lines = [f'- "{c.name}": integer -{rubric.k}..{rubric.k}' for c in rubric.categories]
        example = {c.name: 0 for c in rubric.categories}
    elif isinstance(rubric, PreferenceRubric):
        allowed = '"A", "B" or "tie"' if rubric.allow_tie else '"A" or "B"'
        lines = [f'- "verdict": {allowed}']
        example = {"verdict": "A"}
    else:
        raise TypeError(f"{rubric.kind} rubrics state their answer format themselves")
    if rubric.rationale:
        lines.append('- "rationale": a short string')
        example["rationale"] = "..."
    return (
        "Reply with a single JSON object and nothing else, with these keys:\n"
        + "\n".join(lines)
        + "\nFor example: "
        + json.dumps(example)
    )
