"""What the readers share: reading a JSON document or JSON lines as records, with one-line
errors that name the file, the record and the field."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError


def records(path: Path, *, expect: str = "list") -> list[tuple[int, Any]]:
    """A .json document's records (a list, or the list under a key chosen by the reader) or a
    JSON-lines file's lines, numbered from 1 (lines: the line number)."""
    if not path.exists():
        raise JurybenchError(f"{path}: no such file.")
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        out = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                out.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise JurybenchError(f"{path} line {number}: not JSON ({exc.msg}).") from None
        return out
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JurybenchError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}).") from None
    if expect == "list":
        if not isinstance(data, list):
            raise JurybenchError(f"{path}: expected a JSON list of records, found a {type(data).__name__}.")
        return list(enumerate(data, start=1))
    return [(1, data)]


def field(
    path: Path, number: int, record: Any, name: str, *, required: bool = True, kind: type | tuple[type, ...] = str
) -> Any:
    """``record[name]``, checked: present (when required) and of ``kind``."""
    where = f"{path} record {number}"
    if not isinstance(record, dict):
        raise JurybenchError(f"{where}: expected an object, found {type(record).__name__}.")
    value = record.get(name)
    if value is None:
        if required:
            raise JurybenchError(f"{where}, field '{name}': missing.", hint="Is this file in the format named?")
        return None
    if isinstance(value, bool) and kind is not bool:
        raise JurybenchError(f"{where}, field '{name}': expected {_kind_name(kind)}, found true/false.")
    if not isinstance(value, kind):
        raise JurybenchError(f"{where}, field '{name}': expected {_kind_name(kind)}, found {type(value).__name__}.")
    if isinstance(value, float) and not math.isfinite(value):
        return None if not required else _bad(where, name, value)
    return value


def _bad(where: str, name: str, value: object) -> None:
    raise JurybenchError(f"{where}, field '{name}': {value!r} is not a number.")


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {
        str: "text",
        int: "a whole number",
        float: "a number",
        list: "a list",
        dict: "an object",
        bool: "true/false",
    }
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def short_hash(*parts: object) -> str:
    """A stable 12-hex id part from texts (an instruction's hash names its items)."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:12]


def between(text: str, start: str, end: str) -> str | None:
    """The text between the last ``start`` and the ``end`` after it, stripped; None if absent."""
    at = text.rfind(start)
    if at < 0:
        return None
    rest = text[at + len(start) :]
    stop = rest.find(end)
    return rest[:stop].strip() if stop >= 0 else None


def content_text(value: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of content parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            str(p.get("text", "")) if isinstance(p, dict) else str(p)
            for p in value
            if not isinstance(p, dict) or p.get("type", "text") == "text"
        )
    return "" if value is None else json.dumps(value, sort_keys=True)


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one (an optional section left out)."""
    return value if isinstance(value, dict) else {}
