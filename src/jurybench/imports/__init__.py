"""Judgments made elsewhere, brought into the store: a model's or a person's judgments as a run
(``jurybench judgments import``) and human labels for a run's subjects (``jurybench annotations
import``), each checked row by row before anything is written. (Items, pairs and human
baselines are the store's own rows: ``jurybench.store`` imports them.)

Internal: the names below are this stage's interface to the other stages (the order in
docs/architecture.md), not a public API; see "What is public" there."""

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
)
from jurybench.imports._judgments import JudgmentImport, import_judgments
from jurybench.imports._labels import AnnotationImport, import_annotation_rows, import_annotations, rename_columns

__all__ = [
    "AnnotationImport",
    "Bundle",
    "BundleImport",
    "JudgmentFormat",
    "JudgmentImport",
    "check_options",
    "detect_format",
    "import_annotation_rows",
    "import_annotations",
    "import_bundle",
    "import_judgments",
    "judgment_format",
    "judgment_formats",
    "parse_options",
    "register_format",
    "rename_columns",
]
