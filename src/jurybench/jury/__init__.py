"""The jury as a definition: its jurors, weights, rule, quorum and ties; jury files."""

from jurybench.jury._jury import (
    Jury,
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
    "as_jury",
    "jurors_of_run",
    "jury_from_mapping",
    "jury_rule",
    "load_jury_file",
    "register_jury",
    "with_samples",
]
