"""Rubrics: load and validate YAML, render prompts per language, build response schemas.

Internal: the names below are this stage's interface to the other stages (the order in
docs/architecture.md), not a public API; see "What is public" there. The exception is rubric
kinds (``RubricKind``, ``register_kind``, ``unregister_kind``, ``rubric_kinds``; the
entry-point group ``jurybench.rubric_kinds``), an extension point (docs/extending.md)."""

from jurybench.rubric._answers import Outcome, outcome_from_answer, parse_answer
from jurybench.rubric._classify import gold_label, match_label
from jurybench.rubric._inventory import Presentation, parse_inventory, presentation
from jurybench.rubric._json import extract_json
from jurybench.rubric._kinds import ENTRY_POINT_GROUP, by_kind, kind_name, register_kind, rubric_kinds, unregister_kind
from jurybench.rubric._labels import normalise_label
from jurybench.rubric._load import (
    diff_rubrics,
    find_rubric,
    is_stored_name,
    line_of,
    load_rubric,
    parse_rubric,
    read_yaml,
    resolve_rubric_path,
    rubric_files,
    rubric_from_data,
    stored_rubric,
)
from jurybench.rubric._logprobs import Token, dimension_values, expected_scores, tokens_from_logprobs
from jurybench.rubric._model import (
    PLACEHOLDER_RE,
    AnyRubric,
    ClassificationRubric,
    ConversationRubric,
    Demonstration,
    InventoryRubric,
    KindTraits,
    LabelRefused,
    PairwiseRubric,
    PointwiseRubric,
    PreferenceRubric,
    Rubric,
    Template,
    is_pairwise,
)
from jurybench.rubric._model import _RubricBase as RubricKind
from jurybench.rubric._render import (
    fill_template,
    render_classification,
    render_inventory,
    render_pairwise,
    render_pointwise,
)
from jurybench.rubric._schema import answer_format, answer_schema, response_model
from jurybench.rubric._subjects import (
    load_subjects,
    refuse_single_responses,
    subject_ids,
    subject_rows,
    subject_slices,
    subject_table,
    with_conversations,
)
from jurybench.rubric._transcript import CHARS_PER_TOKEN, fitted_digest, messages_of, render_transcript

__all__ = [
    "CHARS_PER_TOKEN",
    "ENTRY_POINT_GROUP",
    "PLACEHOLDER_RE",
    "AnyRubric",
    "ClassificationRubric",
    "ConversationRubric",
    "Demonstration",
    "InventoryRubric",
    "KindTraits",
    "LabelRefused",
    "Outcome",
    "PairwiseRubric",
    "PointwiseRubric",
    "PreferenceRubric",
    "Presentation",
    "Rubric",
    "RubricKind",
    "Template",
    "Token",
    "answer_format",
    "answer_schema",
    "by_kind",
    "diff_rubrics",
    "dimension_values",
    "expected_scores",
    "extract_json",
    "fill_template",
    "find_rubric",
    "fitted_digest",
    "gold_label",
    "is_pairwise",
    "is_stored_name",
    "kind_name",
    "line_of",
    "load_rubric",
    "load_subjects",
    "match_label",
    "messages_of",
    "normalise_label",
    "outcome_from_answer",
    "parse_answer",
    "parse_inventory",
    "parse_rubric",
    "presentation",
    "read_yaml",
    "refuse_single_responses",
    "register_kind",
    "render_classification",
    "render_inventory",
    "render_pairwise",
    "render_pointwise",
    "render_transcript",
    "resolve_rubric_path",
    "response_model",
    "rubric_files",
    "rubric_from_data",
    "rubric_kinds",
    "stored_rubric",
    "subject_ids",
    "subject_rows",
    "subject_slices",
    "subject_table",
    "tokens_from_logprobs",
    "unregister_kind",
    "with_conversations",
]
