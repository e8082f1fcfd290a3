"""Configuration precedence: command-line flag, then ``JURYBENCH_*`` environment, then defaults."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DB = "jurybench.duckdb"
DEFAULT_DATA = "../shared/datasets"


def db_path(flag: str | Path | None = None) -> Path:
    """The judgment store: ``--db``, else ``JURYBENCH_DB``, else ``./jurybench.duckdb``."""
    return Path(flag or os.environ.get("JURYBENCH_DB") or DEFAULT_DB)


def lock_wait_s() -> float:
    """Seconds to wait for a store another process holds: ``JURYBENCH_WAIT``, else 10."""
    try:
        return float(os.environ.get("JURYBENCH_WAIT") or 10)
    except ValueError:
        return 10.0


def data_path(flag: str | Path | None = None) -> Path:
    """Reference datasets: ``--data``, else ``JURYBENCH_DATA``, else ``../shared/datasets``."""
    return Path(flag or os.environ.get("JURYBENCH_DATA") or DEFAULT_DATA)


def project_root() -> Path:
    """The folder holding ``rubrics/`` and ``calibration/`` (``JURYBENCH_HOME`` or the cwd)."""
    return Path(os.environ.get("JURYBENCH_HOME") or Path.cwd())


def shipped_rubrics() -> Path:
    """The rubrics shipped inside the package (package data, so a plain ``pip install`` has them)."""
    from importlib.resources import files

    return Path(str(files("jurybench") / "rubrics"))


def shipped_juries() -> Path:
    """The jury files shipped with the package (./juries links to them in the repository)."""
    from importlib import resources

    return Path(str(resources.files("jurybench") / "juries"))


def rubric_dirs() -> list[Path]:
    """Where rubric names are looked up: the project's ``rubrics/``, then the shipped ones."""
    dirs = [project_root() / "rubrics"]
    shipped = shipped_rubrics()
    if shipped.resolve() not in {d.resolve() for d in dirs}:
        dirs.append(shipped)
    return dirs
