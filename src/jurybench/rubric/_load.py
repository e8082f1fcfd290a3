"""Load rubric YAML files into validated models, with errors that name the file and line."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from jurybench.config import rubric_dirs
from jurybench.errors import JurybenchError
from jurybench.rubric._kinds import kind_model, rubric_kinds
from jurybench.rubric._model import AnyRubric


def rubric_from_data(data: dict[str, object]) -> AnyRubric:
    """A rubric from its definition (as in YAML), validated by the model of its ``kind``
    (raises pydantic's ``ValidationError``, or ``JurybenchError`` for an unknown kind)."""
    model = kind_model(data.get("kind"))
    if model is None:
        raise JurybenchError(
            f"{data.get('kind')!r} is not a rubric kind.", hint=f"Valid kinds: {', '.join(rubric_kinds())}."
        )
    return model.model_validate(data)


def rubric_files() -> list[tuple[str, Path]]:
    """Every rubric known by name, as the CLI, the service and Python list them: ``*.yaml`` and
    ``*.yml`` in the rubric folders (./rubrics first, then the shipped ones), the first file of
    each name."""
    seen: dict[str, Path] = {}
    for folder in rubric_dirs():
        for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
            if path.suffix in (".yaml", ".yml"):
                seen.setdefault(path.stem, path)
    return list(seen.items())


def resolve_rubric_path(name_or_path: str | Path) -> Path:
    """A path as given, or a name looked up as ``<name>.yaml`` in the rubric folders."""
    candidate = Path(name_or_path)
    # a file as given; a folder of the same name (a study copied beside the store) is no rubric
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        if not candidate.is_file():
            raise JurybenchError(f"rubric file {candidate} does not exist.")
        return candidate
    for folder in rubric_dirs():
        for suffix in (".yaml", ".yml"):
            path = folder / f"{name_or_path}{suffix}"
            if path.exists():
                return path
    available = sorted({p.stem for d in rubric_dirs() if d.is_dir() for p in d.glob("*.y*ml")})
    raise JurybenchError(
        f"no rubric named '{name_or_path}'.",
        hint=f"Available: {', '.join(available) or '(none)'}; or pass a path to a YAML file.",
    )


_CACHE: dict[tuple[str, int, int], AnyRubric] = {}


def load_rubric(name_or_path: str | Path) -> AnyRubric:
    """Read and validate a rubric by name (from ``rubrics/``) or path (validated once per file
    version: a changed file, by modification time or size, is read again)."""
    path = resolve_rubric_path(name_or_path)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    _CACHE[key] = rubric = _read_rubric(path)
    return rubric


def _read_rubric(path: Path) -> AnyRubric:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise JurybenchError(f"{path} line {line}: not valid UTF-8.", hint="Save the file as UTF-8.") from None
    return parse_rubric(text, source=str(path))


def read_yaml(text: str, source: str) -> tuple[object, yaml.Node | None]:
    """YAML data and its node tree (for line numbers); malformed YAML is one line naming the line."""
    try:
        return yaml.safe_load(text), yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise JurybenchError(f"{source}{line}: malformed YAML ({problem}).", hint="Fix the YAML syntax.") from None


def parse_rubric(text: str, *, source: str = "<rubric>") -> AnyRubric:
    """Validate rubric YAML text; errors name ``source``, the line and the field."""
    data, root = read_yaml(text, source)
    if not isinstance(data, dict):
        raise JurybenchError(f"{source}: a rubric must be a YAML mapping with a 'kind' key.")
    kind = data.get("kind")
    if kind_model(kind) is None:
        raise JurybenchError(
            f"{source}{line_of(root, ('kind',))}, field 'kind': {kind!r} is not a rubric kind.",
            hint=f"Valid kinds: {', '.join(rubric_kinds())}.",
        )
    try:
        return rubric_from_data(data)
    except ValidationError as exc:
        # A misspelt key yields both "unknown key" and "field required": the first explains both.
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        err = errors[0]
        loc = tuple(err["loc"])
        # The discriminated union puts the kind first in the location.
        if loc and loc[0] == kind:
            loc = loc[1:]
        field = ".".join(str(p) for p in loc) or "(top level)"
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            model = _model_at(str(kind), loc[:-1])
            valid = ", ".join(sorted(model.model_fields)) if model else "see docs/rubrics.md"
            message = f"unknown key; valid keys here: {valid}"
        elif err["type"] == "literal_error":
            message = f"{message} (got {err.get('input')!r})"
        raise JurybenchError(
            f"{source}{line_of(root, loc)}, field '{field}': {message}.",
            hint="See docs/rubrics.md for the rubric format.",
        ) from None


def line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> str:
    """' line N' for the YAML node at ``loc`` (or its nearest existing parent)."""
    node = root
    best = node
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for key, value in node.value:
                if str(key.value) == str(part):
                    nxt = key if part == loc[-1] else value
                    break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if part < len(node.value) else None
        else:
            node = None
        if node is None:
            break
        best = node
    return f" line {best.start_mark.line + 1}" if best is not None else ""


def _model_at(kind: str, loc: tuple[object, ...]) -> type[Any] | None:
    """The pydantic model that validates the mapping at ``loc`` (for listing valid keys): the
    kind's model, then the model inside each field named on the way (a list's, a mapping's)."""
    from pydantic import BaseModel

    def inner(annotation: object) -> type[BaseModel] | None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return annotation
        return next((m for a in typing.get_args(annotation) if (m := inner(a)) is not None), None)

    model: type[Any] | None = kind_model(kind)
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) and model is not None else None
        found = inner(field.annotation) if field is not None else None
        if found is not None:
            model = found
    return model


def is_stored_name(text: object) -> bool:
    """Whether ``text`` names a stored rubric version (``NAME@VERSION``) rather than a file."""
    return isinstance(text, str) and "@" in text and not Path(text).is_file() and "/" not in text


def stored_rubric(con: Any, text: str) -> AnyRubric:
    """The rubric version ``NAME@VERSION`` from the store's ``rubrics`` table (a version that
    ``jurybench align`` kept, or any rubric a judgment was made with)."""
    import json

    name, _, version = text.partition("@")
    rows = con.execute(
        "SELECT body FROM rubrics WHERE name = ? AND version = ? ORDER BY first_seen DESC", [name, version]
    ).fetchall()
    if not rows:
        known = [
            f"{name}@{r[0]}"
            for r in con.execute("SELECT DISTINCT version FROM rubrics WHERE name = ? ORDER BY 1", [name]).fetchall()
        ]
        raise JurybenchError(
            f"no rubric {text!r} in the store.",
            hint=f"Stored versions: {', '.join(known)}." if known else f"No version of '{name}' is stored.",
        )
    if len(rows) > 1:
        raise JurybenchError(
            f"the store holds {len(rows)} rubrics named {text!r} (same name and version, different content).",
            hint="Give the rubric as a file (rubrics diff shows how they differ).",
        )
    return rubric_from_data(json.loads(rows[0][0]))


def rubric_yaml(rubric: AnyRubric) -> str:
    """The validated rubric as YAML, fields in the model's order (what ``rubrics diff`` compares)."""
    body = rubric.model_dump(mode="json")
    if not body.get("demonstrations"):
        body.pop("demonstrations", None)
    return yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100)


def find_rubric(text: str, con: Any | None) -> AnyRubric:
    """A rubric as ``rubrics diff`` takes it: ``NAME@VERSION`` or a hash prefix (8+ hex digits)
    from the store, else a name or a file."""
    import re

    if is_stored_name(text) or (re.fullmatch(r"[0-9a-f]{8,64}", text) and not Path(text).exists()):
        if con is None:
            raise JurybenchError(f"{text!r} names a rubric in a store; no store was given.", hint="Pass --db FILE.")
        if "@" in text:
            return stored_rubric(con, text)
        import json

        rows = con.execute("SELECT body FROM rubrics WHERE starts_with(rubric_hash, ?)", [text]).fetchall()
        if len(rows) != 1:
            raise JurybenchError(
                f"{len(rows)} stored rubrics have a hash starting {text!r}.",
                hint="Give more of the hash, or NAME@VERSION."
                if rows
                else "See: jurybench sql 'SELECT * FROM rubrics'.",
            )
        return rubric_from_data(json.loads(rows[0][0]))
    return load_rubric(text)


def diff_rubrics(first: AnyRubric, second: AnyRubric, context: int = 3) -> str:
    """A unified diff of two rubrics as YAML (empty when they are the same rubric)."""
    import difflib

    if first.content_hash == second.content_hash:
        return ""
    a, b = (f"{r.name}@{r.version} ({r.content_hash[:12]})" for r in (first, second))
    return "".join(
        difflib.unified_diff(
            rubric_yaml(first).splitlines(keepends=True),
            rubric_yaml(second).splitlines(keepends=True),
            fromfile=a,
            tofile=b,
            n=context,
        )
    )
