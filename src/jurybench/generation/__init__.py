"""Responses generated under paired treatments, through the judge engine's machinery.

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

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
