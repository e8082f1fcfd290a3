"""Judgments made elsewhere, brought into the store: a model's or a person's judgments as a run
(``jurybench judgments import``), a file as a judge or benchmark released it (a registered
judgment format) and human labels for a run's subjects (``jurybench annotations import``), each
checked row by row before anything is written. (Items, pairs and human baselines are the
store's own rows: ``jurybench.store`` imports them.)

Public (docs/extending.md, "A judgment format of your own"): the judgment-format extension
point, ``JudgmentFormat``, ``Bundle``, ``register_format``, ``unregister_format`` and
``judgment_formats``, with the entry-point group ``jurybench.judgment_formats``; and a reader's
toolkit, the one the built-in readers use: ``records`` (a JSON document's or JSON-lines file's
records, numbered), ``field`` (a record's field, checked), ``load_json``, ``read_member``,
``obj``, ``content_text``, ``between`` and ``short_hash``. ``LabelIn`` and ``JudgmentIn`` (with
``LabelRows`` and ``JudgmentRows``, lists of them) are the rows an HTTP body carries inline,
loaded on first use (they need pydantic). The other names are this stage's
interface to the other stages (the order in docs/architecture.md), not a public API."""

from typing import TYPE_CHECKING

from jurybench.imports._conversations import (
    ConversationFormat,
    conversation_format,
    conversation_formats,
    openai_messages,
    parse_map,
    read_conversations,
    register_conversation_format,
)
from jurybench.imports._formats import (
    Bundle,
    BundleImport,
    JudgmentFormat,
    check_options,
    detect_format,
    import_bundle,
    judgment_format,
    judgment_formats,
    parse_options,
    register_format,
    unregister_format,
)
from jurybench.imports._judgments import JudgmentImport, import_judgments
from jurybench.imports._labels import AnnotationImport, import_annotation_rows, import_annotations, rename_columns
from jurybench.imports._reading import between, content_text, field, load_json, obj, read_member, records, short_hash

if TYPE_CHECKING:
    from jurybench.imports._rows import JudgmentIn, JudgmentRows, LabelIn, LabelRows

_ROWS = ("JudgmentIn", "JudgmentRows", "LabelIn", "LabelRows")


def __getattr__(name: str) -> object:
    if name in _ROWS:
        from jurybench.imports import _rows

        return getattr(_rows, name)
    raise AttributeError(f"module 'jurybench.imports' has no attribute {name!r}")


__all__ = [
    "AnnotationImport",
    "Bundle",
    "BundleImport",
    "ConversationFormat",
    "JudgmentFormat",
    "JudgmentImport",
    "JudgmentIn",
    "JudgmentRows",
    "LabelIn",
    "LabelRows",
    "between",
    "check_options",
    "content_text",
    "conversation_format",
    "conversation_formats",
    "detect_format",
    "field",
    "import_annotation_rows",
    "import_annotations",
    "import_bundle",
    "import_judgments",
    "judgment_format",
    "judgment_formats",
    "load_json",
    "obj",
    "openai_messages",
    "parse_map",
    "parse_options",
    "read_conversations",
    "read_member",
    "records",
    "register_conversation_format",
    "register_format",
    "rename_columns",
    "short_hash",
    "unregister_format",
]
