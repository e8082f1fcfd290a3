"""Responses generated under paired treatments, through the judge engine's machinery.

Internal: the names below are this stage's interface to the other stages (the order in
docs/architecture.md), not a public API; see "What is public" there."""

from jurybench.generation._run import (
    GenerationReport,
    Prompt,
    generate,
    generators_of,
    load_prompts,
    prompts_from_rows,
    refusal_table,
)
from jurybench.generation._spec import GenerationSpec, load_spec_file

__all__ = [
    "GenerationReport",
    "GenerationSpec",
    "Prompt",
    "generate",
    "generators_of",
    "load_prompts",
    "load_spec_file",
    "prompts_from_rows",
    "refusal_table",
]
