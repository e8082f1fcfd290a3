"""Judgment files as they are published: a registry of readers, one a format, each turning a file
as released (AlpacaEval's annotations, MT-Bench's judgments, an Inspect log, ...) into the rows
jurybench stores: items, pairs, each judge's judgments and human labels.

A reader is a :class:`JudgmentFormat`: its name (``judgments import --format NAME``), the rubric
the judgments answer unless the user names another, ``detect`` (does a file look like this
format, unambiguously?) and ``read`` (the file and the options given with ``--option KEY=VALUE``
to a :class:`Bundle`). Built-in readers register with :func:`register_format` as a plug-in's
do: from code, or from a package's entry point in the group ``jurybench.judgment_formats`` (a
callable that registers its formats), loaded the first time the registry is read.

:func:`import_bundle` writes a bundle in one transaction: items and pairs (stored ones with the
same content are left as they are), then each judge's judgments as a juror of the run, then the
human labels; a bad row anywhere writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.config import Registry
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.imports._judgments import JudgmentImport
    from jurybench.rubric import AnyRubric
    from jurybench.store import Row

ENTRY_POINT_GROUP = "jurybench.judgment_formats"


@dataclass
class Bundle:
    """What one file holds, as rows jurybench imports: ``items`` (item_id, prompt, response,
    model, ...), ``pairs`` (pair_id, item_a, item_b), ``judgments`` per judge (rows of the long
    judgment format: item_id or pair_id, criterion, score / verdict / p_b, shown, status, raw),
    ``labels`` (human labels, long: item_id or pair_id, annotator, criterion, value) and
    ``notes`` (what the reader decided that a user should know)."""

    items: list[Row] = field(default_factory=list)
    pairs: list[Row] = field(default_factory=list)
    judgments: dict[str, list[Row]] = field(default_factory=dict)
    labels: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    continuous: bool = False  # scores between the scale's points (graded 0.5, averaged metrics)

    def item(self, row: Row) -> str:
        """Add an item (once per id) and return its id."""
        item_id = str(row["item_id"])
        if item_id not in self._item_ids:
            self._item_ids.add(item_id)
            self.items.append(row)
        return item_id

    def pair(self, pair_id: str, item_a: str, item_b: str) -> str:
        if pair_id not in self._pair_ids:
            self._pair_ids.add(pair_id)
            self.pairs.append({"pair_id": pair_id, "item_a": item_a, "item_b": item_b})
        return pair_id

    def judge(self, name: str, row: Row) -> None:
        self.judgments.setdefault(name, []).append(row)

    def __post_init__(self) -> None:
        self._item_ids: set[str] = {str(r["item_id"]) for r in self.items}
        self._pair_ids: set[str] = {str(r["pair_id"]) for r in self.pairs}


@dataclass(frozen=True)
class JudgmentFormat:
    """A reader of one published judgment format. ``fields`` documents, per jurybench column, the
    upstream field it is read from (docs/formats.md is written from it); ``options`` the
    ``--option`` keys the reader takes, with what each means."""

    name: str
    description: str
    rubric: str
    read: Callable[[Path, Mapping[str, str]], Bundle]
    detect: Callable[[Path, Any], bool] | None = None
    fields: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, str] = field(default_factory=dict)
    dataset: str | None = None  # the items' dataset (default: the format's name); a family shares one


def register_format(fmt: JudgmentFormat, *, replace: bool = False) -> None:
    """Make ``judgments import --format <fmt.name>`` read files with ``fmt``."""
    if not isinstance(fmt, JudgmentFormat):
        raise JurybenchError(f"register_format: {fmt!r} is not a JudgmentFormat.")
    REGISTRY.register(fmt.name, fmt, replace=replace)


REGISTRY: Registry[JudgmentFormat] = Registry(
    ENTRY_POINT_GROUP,
    "judgment formats",
    "jurybench.imports.formats:register",
    label="judgment format '{}'",
    function="register_format",
)


def unregister_format(name: str) -> None:
    """Forget the judgment format called ``name`` (a plug-in's tests)."""
    REGISTRY.unregister(name)


def judgment_formats() -> dict[str, JudgmentFormat]:
    """Every registered judgment format by name, built-ins first."""
    return REGISTRY.items()


def judgment_format(name: str) -> JudgmentFormat:
    found = REGISTRY.get(name)
    if found is None:
        raise JurybenchError(
            f"--format {name!r} is not a judgment format.",
            hint=f"Valid: csv, jsonl, parquet (one judgment a row) or {', '.join(judgment_formats())}.",
        )
    return found


def detect_format(path: Path) -> JudgmentFormat | None:
    """The one registered format whose ``detect`` accepts the file (read once, shared with every
    detector: a JSON document, the first JSON line, or None); None when no reader, or more than
    one, claims it."""
    head = peek(path)
    found = [f for f in judgment_formats().values() if f.detect is not None and f.detect(path, head)]
    return found[0] if len(found) == 1 else None


def peek(path: Path) -> Any:
    """What detectors look at: a .json file's document, a .jsonl file's first record, else None."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            return json.loads(path.read_text(encoding="utf-8"))
        if suffix in (".jsonl", ".ndjson"):
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        return json.loads(line)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return None


def parse_options(given: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for text in given or []:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise JurybenchError(f"--option {text!r}: write KEY=VALUE.", hint="e.g. --option baseline=gpt-4-0314")
        out[key.strip()] = value.strip()
    return out


def check_options(fmt: JudgmentFormat, options: Mapping[str, str]) -> None:
    unknown = [k for k in options if k not in fmt.options]
    if unknown:
        known = ", ".join(f"{k} ({v})" for k, v in fmt.options.items()) or "none"
        raise JurybenchError(
            f"--option {unknown[0]}: format '{fmt.name}' has no such option.", hint=f"Options: {known}."
        )


@dataclass(frozen=True)
class BundleImport:
    format: str
    run: str
    items: int
    pairs: int
    judges: list[JudgmentImport]
    labels: int
    notes: list[str]

    def __str__(self) -> str:
        lines = [f"{self.format}: {self.items} items, {self.pairs} pairs"]
        lines += [str(j) for j in self.judges]
        if self.labels:
            lines.append(f"{self.labels} human labels")
        lines += self.notes
        return "\n".join(lines)


def import_bundle(
    con: Connection,
    bundle: Bundle,
    rubric: AnyRubric,
    *,
    fmt: str,
    run: str,
    source: str,
    dataset: str | None = None,
    juror: str | None = None,
    replace: bool = False,
) -> BundleImport:
    """Write a reader's bundle in one transaction (module docstring). ``juror`` names the judge
    where the file holds one (a file of several judges keeps their names)."""
    from jurybench.imports._judgments import import_judgments
    from jurybench.imports._labels import import_annotation_rows
    from jurybench.store import import_item_rows, import_pair_rows, transaction

    if not bundle.judgments and not bundle.labels:
        raise JurybenchError(f"{source}: no judgments or labels found in it as format '{fmt}'.")
    if juror is not None and len(bundle.judgments) > 1:
        raise JurybenchError(
            f"--juror {juror}: {source} holds {len(bundle.judgments)} judges "
            f"({', '.join(sorted(bundle.judgments)[:4])}); each keeps its name.",
            hint="Leave out --juror.",
        )
    results = []
    with transaction(con):
        items, pairs = (
            importer(con, numbered(rows), source=source, dataset=dataset or fmt, in_transaction=True).inserted
            if rows
            else 0
            for importer, rows in ((import_item_rows, bundle.items), (import_pair_rows, bundle.pairs))
        )
        for name, rows in sorted(bundle.judgments.items()):
            results.append(
                import_judgments(
                    con,
                    numbered(rows),
                    rubric,
                    run=run,
                    juror=juror or _juror_name(name),
                    source=source,
                    replace=replace,
                    continuous=bundle.continuous,
                )
            )
        labels = 0
        if bundle.labels:
            labels = import_annotation_rows(
                con, numbered(bundle.labels), rubric, source=source, layout="long", replace=replace
            ).inserted
    return BundleImport(fmt, run, items, pairs, results, labels, bundle.notes)


def numbered(rows: list[Row]) -> list[tuple[int, Row]]:
    """Rows numbered as the importers report them (1: the file's first record)."""
    return list(enumerate(rows, start=1))


def _juror_name(name: str) -> str:
    """A judge's name as a juror name: no '/' or ',' (gpt-4/single-v1 -> gpt-4_single-v1)."""
    return "".join("_" if c in "/," else c for c in name).strip() or "judge"


def formats_markdown() -> str:
    """docs/formats.md: each registered format, its rubric, options and the upstream field each
    column is read from (``make formats-doc`` writes it; a test checks it is current)."""
    lines = [
        "# Released judgment formats",
        "",
        "`jurybench judgments import FILE --run RUN --format NAME` reads each file as it was released",
        "(the format is detected when only one reader claims the file). Generated from the readers'",
        "declarations by `make formats-doc`; each reader's module docstring says more.",
        "",
    ]
    for fmt in judgment_formats().values():
        lines += [f"## {fmt.name}", "", fmt.description + ".", "", f"Rubric: `{fmt.rubric}`."]
        if fmt.dataset:
            lines.append(f"Items go to dataset `{fmt.dataset}`.")
        lines.append("")
        if fmt.options:
            lines += [f"- `--option {k}=...`: {v}" for k, v in fmt.options.items()] + [""]
        if fmt.fields:
            lines += ["| jurybench | read from (upstream field) |", "| --- | --- |"]
            lines += [f"| {k} | {v} |" for k, v in fmt.fields.items()] + [""]
    return "\n".join(lines + _conversation_markdown()).rstrip() + "\n"


def _conversation_markdown() -> list[str]:
    """The conversation formats' part of docs/formats.md (``items import --format NAME``)."""
    from jurybench.imports._conversations import conversation_formats
    from jurybench.store import MAX_MESSAGE_CHARS, MAX_MESSAGES

    lines = [
        "# Conversation and trajectory formats",
        "",
        "`jurybench items import FILE --format NAME [--map KEY=FIELD ...]` reads conversations and agent",
        "trajectories as released: each becomes an item of shape `conversation` (its task as the prompt, its",
        "last assistant text as the response, its agent's model), with its messages and tool calls in the",
        "`messages` and `tool_calls` tables and its verified outcome in `conversations` (docs/schema.md).",
        f"A conversation of more than {MAX_MESSAGES:,} messages, or a message of more than {MAX_MESSAGE_CHARS:,}",
        "characters, is refused; so is a tool result that answers no call made before it, an unknown role,",
        "and tool-call arguments that are not JSON: one line naming the file, record and field, and nothing",
        "is written. A result answers the earliest call of its id still unanswered (released traces reuse ids).",
        "",
    ]
    for fmt in conversation_formats().values():
        lines += [f"## {fmt.name}", "", fmt.description, ""]
        if fmt.options:
            lines += [f"- `--map {k}=...`: {v}" for k, v in fmt.options.items()] + [""]
        if fmt.fields:
            lines += ["| jurybench | read from |", "| --- | --- |"]
            lines += [f"| {k} | {v} |" for k, v in fmt.fields.items()] + [""]
    return lines
