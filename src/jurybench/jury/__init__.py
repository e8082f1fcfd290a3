"""The jury as a definition: its jurors, weights, rule, quorum and ties; jury files.

Internal: the names below are this stage's interface to the other stages (the order in
docs/architecture.md), not a public API; see "What is public" there."""

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
