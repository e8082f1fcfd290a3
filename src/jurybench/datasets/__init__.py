"""First-class imports of public reference datasets, read at run time from the data folder.

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from jurybench.datasets.hanna import import_hanna
from jurybench.datasets.llmbar import import_llmbar

__all__ = ["import_hanna", "import_llmbar"]
