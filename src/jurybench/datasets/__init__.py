"""First-class imports of public reference datasets, read at run time from the data folder.

Internal: the names below are this stage's interface to the other stages (the order in
docs/architecture.md), not a public API; see "What is public" there."""

from jurybench.datasets.hanna import import_hanna
from jurybench.datasets.llmbar import import_llmbar

__all__ = ["import_hanna", "import_llmbar"]
