"""First-class imports of public reference datasets, read at run time from the data folder."""

from jurybench.datasets.hanna import import_hanna
from jurybench.datasets.llmbar import import_llmbar

__all__ = ["import_hanna", "import_llmbar"]
