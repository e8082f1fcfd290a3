"""The jury as a definition: its jurors, weights, rule, quorum and ties; jury files.

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from jurybench.jury._jury import (
    Jury,
    RunJuror,
    as_jury,
    jurors_of_run,
    jury_from_mapping,
    jury_rule,
    load_jury_file,
    register_jury,
    with_samples,
)

__all__ = [
    "Jury",
    "RunJuror",
    "as_jury",
    "jurors_of_run",
    "jury_from_mapping",
    "jury_rule",
    "load_jury_file",
    "register_jury",
    "with_samples",
]
