"""The one user-facing error type.

Every problem a user can fix (bad input, a missing file, an unknown model) is
raised as :class:`JurybenchError` with a single line saying what is wrong and
how to fix it. The CLI prints that line without a traceback and exits 2.
"""

from __future__ import annotations


class JurybenchError(Exception):
    """A problem the user can fix; ``str(err)`` is one line naming where and how."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(f"{message} {hint}".strip() if hint else message)


class NotFound(JurybenchError):
    """What was asked for (a run, a job, a result) is not in the store (HTTP 404)."""


def where(path: object, *, row: int | None = None, field: str | None = None) -> str:
    """Format a location prefix such as ``items.csv row 4, field 'item_id':``."""
    parts = [str(path)]
    if row is not None:
        parts.append(f"row {row}")
    text = " ".join(parts)
    if field is not None:
        text += f", field '{field}'"
    return text + ":"
