"""The toolkit of a judgment-format reader, built-in or a plug-in's (public, as
``jurybench.imports``): a released file's JSON document or JSON lines as numbered records, its
fields checked, with one-line errors that name the file, the record and the field; JSON parsed
with a depth limit and zip members read with a size limit, so a hostile file is refused in one
line rather than exhausting the process."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError

MAX_DEPTH = 64  # released judgment files nest a few levels; deeper is no such file (or a hostile one)
MAX_MEMBER_BYTES = 256 * 2**20  # one member of a zipped log, decompressed


def load_json(text: str | bytes, where: str) -> Any:
    """``json.loads`` of a released file's text, refused in one line when it is not UTF-8 JSON
    or nests deeper than MAX_DEPTH (Python's parser recurses: deeper than about a thousand
    levels it fails with RecursionError, and values nested that deep break what reads them)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise JurybenchError(f"{where}: not UTF-8 text (a UTF-16 file?).", hint="Save it as UTF-8.") from None
    try:
        data = json.loads(text)
    except RecursionError:
        data = None
        depth = MAX_DEPTH + 1
    else:
        depth = _depth(data)
    if depth > MAX_DEPTH:
        raise JurybenchError(f"{where}: JSON nested deeper than {MAX_DEPTH} levels; no released format nests so deep.")
    return data


def _depth(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                return level
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def read_member(archive: Any, name: str, where: str) -> bytes:
    """One member of a zip archive, at most MAX_MEMBER_BYTES decompressed (a zip bomb is refused
    before it fills memory: the member is read in chunks and the count checked as it grows)."""
    chunks, total = [], 0
    with archive.open(name) as handle:
        while chunk := handle.read(2**20):
            total += len(chunk)
            if total > MAX_MEMBER_BYTES:
                raise JurybenchError(
                    f"{where}: member {name} decompresses past {MAX_MEMBER_BYTES // 2**20} MB; refused (a zip bomb?)."
                )
            chunks.append(chunk)
    return b"".join(chunks)


def iter_records(path: Path) -> Iterator[tuple[int, Any]]:
    """:func:`records`, a JSON-lines file's a line at a time (its memory stays flat however long
    the file); a .json document is read whole, as it must be."""
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        yield from records(path)
        return
    if not path.exists():
        raise JurybenchError(f"{path}: no such file.")
    with path.open(encoding="utf-8-sig") as handle:
        number = 0
        while True:
            try:
                line = handle.readline()
            except UnicodeDecodeError:
                raise JurybenchError(f"{path}: not UTF-8 text (a UTF-16 file?).", hint="Save it as UTF-8.") from None
            if not line:
                return
            number += 1
            if not line.strip():
                continue
            try:
                yield number, load_json(line, f"{path} line {number}")
            except json.JSONDecodeError as exc:
                raise JurybenchError(f"{path} line {number}: not JSON ({exc.msg}).") from None


def records(path: Path, *, expect: str = "list") -> list[tuple[int, Any]]:
    """A .json document's records (a list, or the list under a key chosen by the reader) or a
    JSON-lines file's lines, numbered from 1 (lines: the line number)."""
    if not path.exists():
        raise JurybenchError(f"{path}: no such file.")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise JurybenchError(f"{path}: not UTF-8 text (a UTF-16 file?).", hint="Save it as UTF-8.") from None
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        out = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                out.append((number, load_json(line, f"{path} line {number}")))
            except json.JSONDecodeError as exc:
                raise JurybenchError(f"{path} line {number}: not JSON ({exc.msg}).") from None
        return out
    try:
        data = load_json(text, str(path))
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
