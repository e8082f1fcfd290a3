"""Rubrics: load and validate YAML, render prompts per language, build response schemas."""

from jurybench.rubric._classify import gold_label, match_label, normalise_label
from jurybench.rubric._inventory import Presentation, parse_inventory, presentation
from jurybench.rubric._load import load_rubric, parse_rubric, resolve_rubric_path
from jurybench.rubric._model import (
    AnyRubric,
    Category,
    ClassificationRubric,
    Criterion,
    InventoryRubric,
    PairwiseRubric,
    PointwiseRubric,
    PreferenceRubric,
    Scale,
    Template,
    VerdictRule,
    is_pairwise,
)
from jurybench.rubric._render import render_classification, render_inventory, render_pairwise, render_pointwise
from jurybench.rubric._schema import answer_format, response_model

__all__ = [
    "AnyRubric",
    "Category",
    "ClassificationRubric",
    "Criterion",
    "InventoryRubric",
    "PairwiseRubric",
    "PointwiseRubric",
    "PreferenceRubric",
    "Presentation",
    "Scale",
    "Template",
    "VerdictRule",
    "answer_format",
    "gold_label",
    "is_pairwise",
    "load_rubric",
    "match_label",
    "normalise_label",
    "parse_inventory",
    "parse_rubric",
    "presentation",
    "render_classification",
    "render_inventory",
    "render_pairwise",
    "render_pointwise",
    "resolve_rubric_path",
    "response_model",
]
