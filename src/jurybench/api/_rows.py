"""Data given in memory (a DataFrame, a list of dicts) as the numbered rows the importers read,
with the name their errors use; a path as it is."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from jurybench.store import Row


class NamedRows(list[Mapping[str, object]]):
    """Rows (mappings of column to value) with the name errors call them by: the HTTP body's
    ``labels`` are 'labels row 3' in an error, as a file's rows are '<file> row 3'."""

    def __init__(self, rows: Iterable[Mapping[str, object]], source: str) -> None:
        super().__init__(rows)
        self.source = source


def rows_of(data: object, what: str) -> tuple[list[tuple[int, Row]], str] | str | Path:
    """In-memory data as numbered rows (1 = the first row) and the name errors use for it; a
    path as it is (read by the file importers, which number rows as the file does)."""
    if isinstance(data, str | Path):
        return data
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # a DataFrame
        records = data.to_dict(orient="records")
        source = "DataFrame"
    elif isinstance(data, Iterable) and not isinstance(data, Mapping | bytes):
        records = list(data)
        source = data.source if isinstance(data, NamedRows) else "rows"
    else:
        raise JurybenchError(
            f"{what}: expected a DataFrame, a list of dicts or a file path, got {type(data).__name__}."
        )
    rows = []
    for number, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            raise JurybenchError(
                f"{source} row {number}: expected a mapping of column to value, got {type(record).__name__}."
            )
        rows.append((number, {str(k): _clean(v) for k, v in record.items()}))
    if not rows:
        raise JurybenchError(f"{source}: no data rows.", hint=f"Pass at least one {what} row.")
    return rows, source


def _clean(value: object) -> object:
    """Missing values (None, NaN, pandas NA) as None, numpy scalars as Python ones; the rest as given."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return _clean(item())
    return value


def expect(name: str, value: object, kind: type | tuple[type, ...], *, none: bool = True) -> None:
    """A Python argument of the right type, or one line saying which and what it got."""
    if value is None and none:
        return
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):  # True is no count
        names = " or ".join(k.__name__ for k in kinds)
        raise JurybenchError(
            f"{name}: expected {names}{' or None' if none else ''}, got {type(value).__name__} ({value!r:.60})."
        )
