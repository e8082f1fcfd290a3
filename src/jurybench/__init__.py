"""jurybench: LLM-as-judge evaluation with juries, calibration and a DuckDB judgment store.

The Python API (docs/python.md)::

    import jurybench as jb

    with jb.open("study.duckdb") as store:
        store.import_items(frame, dataset="stories")
        run = jb.score(store, rubric="story-quality", jury=["sim/a", "sim/b"])
        run.results()                       # the jury's scores as a DataFrame
        jb.stats.friedman(store, run.run_id)

Everything named here is the public API; modules and names with a leading underscore are not.
Heavy dependencies (litellm, pandas, scipy) load only when a function needs them, so
``import jurybench`` is quick.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from jurybench import stats
    from jurybench.api import (
        Calibration,
        CheckResult,
        JurorSpec,
        Jury,
        Rubric,
        Run,
        Store,
        agreement,
        align,
        apply_calibration,
        ascore,
        calibrate,
        check,
        classification_answers,
        export_mlflow,
        export_otel,
        generate,
        load_rubric,
        open,
        parse_juror,
        preference_report,
        score,
        select_jury,
    )


def _version() -> str:
    """The installed package's version (pyproject.toml), read from its metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jurybench")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


if TYPE_CHECKING:
    __version__: str

# A literal list, so type checkers see each name as exported (``mypy --strict`` in users' code).
__all__ = [
    "Calibration",
    "CheckResult",
    "JurorSpec",
    "Jury",
    "JurybenchError",
    "Rubric",
    "Run",
    "Store",
    "__version__",
    "agreement",
    "align",
    "apply_calibration",
    "ascore",
    "calibrate",
    "check",
    "classification_answers",
    "export_mlflow",
    "export_otel",
    "generate",
    "load_rubric",
    "open",
    "parse_juror",
    "preference_report",
    "score",
    "select_jury",
    "stats",
]
_API = tuple(n for n in __all__ if n not in ("JurybenchError", "__version__", "stats"))


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read from the package's metadata when asked (not at every CLI start)
        value: Any = _version()
    elif name in _API:
        value = getattr(importlib.import_module("jurybench.api"), name)
    elif name == "stats":
        value = importlib.import_module("jurybench.stats")
    else:
        raise AttributeError(f"module 'jurybench' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
