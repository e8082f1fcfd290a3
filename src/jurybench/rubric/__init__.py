"""Rubrics: load and validate YAML, render prompts per language, build response schemas."""

from jurybench.rubric._load import AnyRubric, load_rubric, parse_rubric, resolve_rubric_path
from jurybench.rubric._model import (
    Category,
    Criterion,
    PairwiseRubric,
    PointwiseRubric,
    PreferenceRubric,
    Scale,
    Template,
    VerdictRule,
    is_pairwise,
)
from jurybench.rubric._render import render_pairwise, render_pointwise
from jurybench.rubric._schema import answer_format, response_model

__all__ = [
    "AnyRubric",
    "Category",
    "Criterion",
    "PairwiseRubric",
    "PointwiseRubric",
    "PreferenceRubric",
    "Scale",
    "Template",
    "VerdictRule",
    "answer_format",
    "is_pairwise",
    "load_rubric",
    "parse_rubric",
    "render_pairwise",
    "render_pointwise",
    "resolve_rubric_path",
    "response_model",
]
