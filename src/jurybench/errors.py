"""The one user-facing error type.

Every problem a user can fix (bad input, a missing file, an unknown model) is
raised as :class:`JurybenchError` with a single line saying what is wrong and
how to fix it. The CLI prints that line without a traceback and exits 2.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")


class JurybenchError(Exception):
    """A problem the user can fix; ``str(err)`` is one line naming where and how."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(f"{message} {hint}".strip() if hint else message)


class NotFound(JurybenchError):
    """What was asked for (a run, a job, a result) is not in the store (HTTP 404)."""


def brief(value: object, limit: int = 60) -> str:
    """``repr(value)`` for a one-line message, cut to ``limit`` characters (a 401-digit number,
    a page of text pasted into a field) with how long it was."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text)} characters)"


def where(path: object, *, row: int | None = None, field: str | None = None) -> str:
    """Format a location prefix such as ``items.csv row 4, field 'item_id':``."""
    parts = [str(path)]
    if row is not None:
        parts.append(f"row {row}")
    text = " ".join(parts)
    if field is not None:
        text += f", field '{field}'"
    return text + ":"


class ResourceError(JurybenchError):
    """The machine ran short (DuckDB's memory, the disk): stored work is kept, the same
    command runs again once there is more. Exit code 1."""

    exit_code = 1


class CutShort(JurybenchError):
    """A run cut short by what it runs on, not by its input: the Ray cluster it spread its calls
    over lost its workers or its head. Every answer received is kept and the same command resumes
    once the cluster is back. Exit code 5."""

    exit_code = 5


def resource_problem(exc: BaseException) -> str | None:
    """The one line for an exception that means the machine ran short, else None."""
    first = (str(exc).strip().splitlines() or [""])[0]
    name = type(exc).__name__
    if name == "OutOfMemoryException":
        return (
            f"DuckDB ran out of memory ({first}). Stored work is kept; raise DuckDB's limit "
            "(JURYBENCH_DUCKDB_MEMORY=1GB, or 'default' for 80 % of RAM) or free memory, then run the same "
            "command again."
        )
    if name == "IOException" and "space" in first.lower():
        return f"the disk is full ({first}). Stored work is kept; free space and run the same command again."
    return None


def user_facing(function: Callable[_P, _T]) -> Callable[_P, _T]:
    """A public function of the Python face: a machine running short (DuckDB's out of memory, a
    full disk) reaches the caller as :class:`ResourceError`, jurybench's own error type, never as
    a raw library exception."""

    @functools.wraps(function)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return function(*args, **kwargs)
        except JurybenchError:
            raise
        except Exception as exc:
            problem = resource_problem(exc)
            if problem is None:
                raise
            raise ResourceError(problem) from exc

    return wrapper
