"""jurybench: LLM-as-judge evaluation with juries, calibration and a DuckDB judgment store.

The public API is re-exported here; heavy dependencies (litellm, pandas, scipy)
are imported only when the functions that need them run.
"""

from jurybench.errors import JurybenchError

__version__ = "0.1.0"

__all__ = ["JurybenchError", "__version__"]
