"""Read tabular files (CSV, JSONL, Parquet) as rows with their line numbers.

Errors name the file, the row (1-based data row; for CSV/JSONL also the line)
and the field, and say how to fix it.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, SupportsFloat, SupportsIndex

from jurybench.errors import JurybenchError

# A row read from a file or received: column -> value, as read (checked where it is used).
Row = dict[str, object]
FORMATS = ("csv", "jsonl", "parquet")


def as_float(value: object) -> float:
    """``float(value)`` for what float takes (text, numbers); TypeError for anything else. A
    whole number too large for a float (a JSON file's ``10**400``) is infinite, with its sign,
    as the text ``1e400`` is: the caller's finiteness check refuses both alike."""
    try:
        if isinstance(value, int | float | str):  # the common case, without the protocol checks' cost
            return float(value)
        if isinstance(value, SupportsFloat | SupportsIndex):  # numpy and Decimal numbers
            return float(value)
    except OverflowError:
        return -math.inf if value < 0 else math.inf  # type: ignore[operator]
    raise TypeError(f"not a number: {type(value).__name__}")


_PLAIN_NUMBER = None


def plain_number(value: object) -> float:
    """A number as a file or a form gives it: a number, or text written with ASCII digits
    (``3``, ``-1.5``, ``2e3``). Python's ``float`` also reads other scripts' digits (the
    Devanagari ``३`` as 3) and ``_`` separators; a label or a judgment is refused for them
    (ValueError), the same in every importer. TypeError for anything else."""
    import re

    global _PLAIN_NUMBER
    if isinstance(value, bool):
        raise TypeError("not a number: bool")
    if isinstance(value, str):
        if _PLAIN_NUMBER is None:
            _PLAIN_NUMBER = re.compile(
                r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*|\s*[+-]?(inf|infinity|nan)\s*", re.ASCII | re.IGNORECASE
            )
        if not _PLAIN_NUMBER.fullmatch(value):
            raise ValueError(f"not a number written with ASCII digits: {value!r}")
    return as_float(value)


def file_format(path: Path, explicit: str | None = None) -> str:
    fmt = explicit or {
        ".csv": "csv",
        ".jsonl": "jsonl",
        ".ndjson": "jsonl",
        ".parquet": "parquet",
    }.get(path.suffix.lower())
    if fmt not in FORMATS:
        raise JurybenchError(
            f"{path}: cannot tell the file format from '{path.suffix}'.",
            hint="Use .csv, .jsonl or .parquet, or pass --format csv|jsonl|parquet.",
        )
    return fmt


def iter_rows(path: str | Path, fmt: str | None = None) -> Iterator[tuple[int, Row]]:
    """As :func:`read_rows`, one row at a time from the file (for imports of any size): the
    same errors, found as the rows are read."""
    path = Path(path)
    if not path.exists():
        raise JurybenchError(f"{path}: no such file.")
    kind = file_format(path, fmt)
    if kind == "parquet":
        yield from _iter_parquet(path)
        return
    with path.open("r", encoding="utf-8-sig", newline="") as handle:
        try:
            if kind == "csv":
                yield from _iter_csv(path, handle)
            else:
                yield from _iter_jsonl(path, handle)
        except UnicodeDecodeError:
            _decode(path, path.read_bytes())  # the line and byte, from the file itself
            raise


def _iter_parquet(path: Path) -> Iterator[tuple[int, Row]]:
    import pyarrow.parquet as pq

    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=10_000)
        number = 0
        for batch in batches:
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except JurybenchError:
        raise
    except Exception as exc:
        raise JurybenchError(f"{path}: not a readable Parquet file ({exc}).") from None


def read_rows(path: str | Path, fmt: str | None = None) -> list[tuple[int, Row]]:
    """Rows as (line number, mapping); line numbers count the header line for CSV."""
    path = Path(path)
    if not path.exists():
        raise JurybenchError(f"{path}: no such file.")
    kind = file_format(path, fmt)
    if kind == "parquet":
        return _read_parquet(path)
    raw = path.read_bytes()
    text = _decode(path, raw)
    if kind == "csv":
        return _read_csv(path, text)
    return _read_jsonl(path, text)


def _decode(path: Path, raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise JurybenchError(
            f"{path} line {line}: bytes that are not valid UTF-8 (at byte {exc.start}).",
            hint="Re-save the file as UTF-8.",
        ) from None
    return text.removeprefix("\ufeff")


def _read_csv(path: Path, text: str) -> list[tuple[int, Row]]:
    return list(_iter_csv(path, io.StringIO(text, newline="")))


def _iter_csv(path: Path, handle: IO[str]) -> Iterator[tuple[int, Row]]:
    # strict: a quote that never closes, or text after a closing quote, is an error
    # instead of silently swallowing the following rows into one field.
    reader = csv.DictReader(handle, strict=True)
    try:
        fieldnames = reader.fieldnames
    except csv.Error as exc:
        raise _csv_error(path, 1, exc) from None
    if not fieldnames:
        raise JurybenchError(f"{path}: the file is empty; a header row is needed.")
    while True:
        start = reader.line_num + 1  # the line this record starts on
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise _csv_error(path, start, exc) from None
        extra = row.pop(None, None)
        if extra:
            raise JurybenchError(
                f"{path} line {reader.line_num}: more fields than the header has.",
                hint="Quote values that contain commas.",
            )
        yield reader.line_num, {k: (v if v != "" else None) for k, v in row.items()}


def _csv_error(path: Path, line: int, exc: csv.Error) -> JurybenchError:
    message = str(exc)
    if "unexpected end of data" in message:
        return JurybenchError(
            f"{path} line {line}: a quoted field opened here never closes (it would swallow every row after it).",
            hint='Close the quote, or double quotes inside a quoted value ("").',
        )
    if "expected after" in message:
        return JurybenchError(
            f"{path} line {line}: text after a closing quote ({message}).",
            hint='Quote the whole value and double the quotes inside it, e.g. "say ""hi"" now".',
        )
    return JurybenchError(f"{path} line {line}: malformed CSV ({message}).", hint="Check the quoting on that line.")


def _read_jsonl(path: Path, text: str) -> list[tuple[int, Row]]:
    return list(_iter_jsonl(path, text.splitlines()))


def _iter_jsonl(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, Row]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JurybenchError(
                f"{path} line {number}: not valid JSON ({exc.msg}).",
                hint="Each line must be one JSON object.",
            ) from None
        if not isinstance(value, dict):
            raise JurybenchError(f"{path} line {number}: expected a JSON object per line.")
        yield number, value


def _read_parquet(path: Path) -> list[tuple[int, Row]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:
        raise JurybenchError(f"{path}: not a readable Parquet file ({exc}).") from None
    return [(i + 1, row) for i, row in enumerate(table.to_pylist())]


def require_columns(path: Path, rows: list[tuple[int, Row]], required: tuple[str, ...]) -> None:
    """Columns every row must be able to have (JSONL rows may omit a key: that row fails later)."""
    if not rows:
        raise JurybenchError(f"{path}: no data rows.", hint="The file has a header but no rows.")
    present: set[str] = set()
    for _, row in rows:
        present |= set(row)
    missing = [c for c in required if c not in present]
    if missing:
        raise JurybenchError(
            f"{path}: missing column(s) {', '.join(missing)}.",
            hint=f"The file needs {', '.join(required)}; it has {', '.join(sorted(present))}.",
        )


# An empty response: nothing but white space and zero-width characters (one rule everywhere: the
# items' ``empty`` flag is computed in SQL with this pattern, and is_blank in Python).
BLANK_PATTERN = r"[\s\x{200B}\x{200C}\x{200D}\x{2060}\x{FEFF}]"
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"


def is_blank(text: str) -> bool:
    """Nothing but white space and zero-width characters (an empty response)."""
    return not text.translate({ord(c): None for c in _ZERO_WIDTH}).strip()


def response_field(path: Path, number: int, row: Row) -> str:
    """A response, which may be empty (an empty generation is an outcome to judge): an empty CSV
    cell is the empty text; a JSON null, or no value at all, is an error."""
    value = row.get("response")
    if value is None and path.suffix.lower() == ".csv" and "response" in row:
        return ""
    if value is None:
        raise JurybenchError(
            f"{path} row {number}, field 'response': missing value.",
            hint="Every row needs a 'response'; an empty generation is the empty text (\"\" in JSON), not null.",
        )
    if not isinstance(value, str):
        raise JurybenchError(
            f"{path} row {number}, field 'response': expected text, got {type(value).__name__}.",
            hint="Make 'response' a string.",
        )
    return value


def text_field(path: Path, number: int, row: Row, field: str, *, required: bool, ids: bool = True) -> str | None:
    """A text field; whole numbers pass as text where they may be ids (``ids``), never for texts."""
    value = row.get(field)
    if value is None or (isinstance(value, str) and value.strip() == ""):
        if required:
            raise JurybenchError(
                f"{path} row {number}, field '{field}': missing value.",
                hint=f"Every row needs a non-empty '{field}'.",
            )
        return None
    if isinstance(value, bool) or not isinstance(value, str | int) or (not ids and not isinstance(value, str)):
        raise JurybenchError(
            f"{path} row {number}, field '{field}': expected text, got {type(value).__name__}.",
            hint=f"Make '{field}' a string.",
        )
    return str(value)
