"""Import human annotations, validated against a rubric, all or nothing.

Layouts:

- **long**: one row per (subject, annotator, criterion) with a ``value`` column;
- **wide by criterion**: one row per (subject, annotator), one column per rubric
  criterion (or category);
- **wide by annotator**: one row per subject, one column per annotator, for a single
  ``criterion`` (``annotator_columns`` names them).

The subject column is ``item_id`` for pointwise rubrics and ``pair_id`` for pairwise
and preference rubrics; ``mapping`` renames file columns to these names. Values must lie
on the rubric's scale (pointwise ``min..max``; pairwise ``-k..k``; preference ``A``, ``B``
or ``tie``, or +1/-1/0). Importing the same file again changes nothing; a different value
for an existing (subject, criterion, annotator) is an error unless ``replace``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError
from jurybench.rubric import (
    AnyRubric,
)
from jurybench.store import Row, first_row, read_rows, transaction

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


@dataclass(frozen=True)
class AnnotationImport:
    inserted: int
    unchanged: int
    replaced: int
    annotators: int
    subjects: int

    def __str__(self) -> str:
        return (
            f"{self.inserted} labels inserted, {self.unchanged} already present, {self.replaced} replaced "
            f"({self.annotators} annotators, {self.subjects} subjects)"
        )


def rename_columns(rows: list[tuple[int, Row]], mapping: Mapping[str, str]) -> list[tuple[int, Row]]:
    """Rows with columns renamed: ``mapping`` is standard name -> the name in the data."""
    if not mapping:
        return rows
    inverse = {source: target for target, source in mapping.items()}
    return [(n, {inverse.get(k, k): v for k, v in row.items()}) for n, row in rows]


def _value(
    rubric: AnyRubric, criterion: str, raw: object, where: str, continuous: bool = False
) -> tuple[float | None, str]:
    """The numeric label and its text (a classification label: no number, its canonical name
    in any language the rubric knows), or an error naming what is valid."""
    from jurybench.rubric import LabelRefused

    text = "" if raw is None else str(raw).strip()
    if text == "":
        raise JurybenchError(f"{where}: missing value.", hint="Every label needs a value.")
    try:
        return rubric.human_label(criterion, text, continuous)
    except LabelRefused as exc:
        raise JurybenchError(f"{where}: {exc.message}", hint=exc.hint) from None


def _shown(value: float | None, label: str | None) -> str:
    return f"{value:g}" if value is not None else repr(label)


def import_annotations(
    con: Connection,
    path: str | Path,
    rubric: AnyRubric,
    *,
    fmt: str | None = None,
    layout: str = "auto",
    mapping: Mapping[str, str] | None = None,
    annotator_columns: Sequence[str] = (),
    criterion: str | None = None,
    replace: bool = False,
    continuous: bool = False,
) -> AnnotationImport:
    """Validate every row, then write all labels in one transaction. ``continuous``: values between
    the scale's points are accepted (panel means, published scores) and marked as such."""
    path = Path(path)
    rows = rename_columns(read_rows(path, fmt), mapping or {})
    return import_annotation_rows(
        con,
        rows,
        rubric,
        source=str(path),
        layout=layout,
        annotator_columns=annotator_columns,
        criterion=criterion,
        replace=replace,
        continuous=continuous,
    )


def import_annotation_rows(
    con: Connection,
    rows: list[tuple[int, Row]],
    rubric: AnyRubric,
    *,
    source: str,
    layout: str = "auto",
    annotator_columns: Sequence[str] = (),
    criterion: str | None = None,
    replace: bool = False,
    continuous: bool = False,
    note: str | None = None,
    saw_jury: bool | None = None,
) -> AnnotationImport:
    """Labels from rows (number, mapping), as read from a file or received by the service;
    errors name ``source``, the row and the field. ``note``: the annotator's note, stored with
    every label of the rows, and ``saw_jury``: whether the annotator could see the jury's answers
    (both from the viewer's label form; None: not known, as for a file)."""

    path = source
    if not rows:
        raise JurybenchError(f"{path}: no data rows.")
    subject_col = rubric.subject_column
    columns: set[str] = set()
    for _, row in rows:
        columns |= set(row)
    dims = rubric.dimensions
    if layout == "auto":
        if annotator_columns:
            layout = "wide-annotator"
        elif {"criterion", "value"} <= columns:
            layout = "long"
        elif any(d in columns for d in dims):
            layout = "wide-criterion"
        else:
            raise JurybenchError(
                f"{path}: cannot tell the layout from the columns {', '.join(sorted(columns))}.",
                hint=f"Long files need criterion and value columns; wide files one column per criterion "
                f"({', '.join(dims)}) or --annotator-columns; rename columns with --map.",
            )
    required = {
        "long": (subject_col, "annotator", "criterion", "value"),
        "wide-criterion": (subject_col, "annotator"),
        "wide-annotator": (subject_col, *annotator_columns),
    }.get(layout)
    if required is None:
        raise JurybenchError(
            f"layout {layout!r} is not valid.", hint="Valid: auto, long, wide-criterion, wide-annotator."
        )
    missing = [c for c in required if c not in columns]
    if missing:
        raise JurybenchError(
            f"{path}: missing column(s) {', '.join(missing)} for a {layout} file.",
            hint=f"Found {', '.join(sorted(columns))}; rename with --map {missing[0]}=<your column>.",
        )
    known = {
        "long": {subject_col, "annotator", "criterion", "value"},
        "wide-criterion": {subject_col, "annotator", *dims},
        "wide-annotator": {subject_col, *annotator_columns},
    }[layout]
    extra = sorted(columns - known)
    if extra:
        what = (
            f"a criterion of rubric '{rubric.name}'" if layout == "wide-criterion" else f"a column of a {layout} file"
        )
        raise JurybenchError(
            f"{path}: column '{extra[0]}' is not {what}; its values would be dropped.",
            hint=f"Valid columns: {', '.join(sorted(known))}. Remove the column, import it with the rubric it "
            "belongs to, or rename it with --map.",
        )
    if layout == "wide-annotator":
        if criterion is None and len(dims) == 1:
            criterion = dims[0]
        if criterion not in dims:
            raise JurybenchError(
                f"--criterion {criterion!r} is not in rubric '{rubric.name}'.", hint=f"Valid: {', '.join(dims)}."
            )

    collected = _Labels(rubric, path, continuous, note, saw_jury)
    add = collected.add
    for number, row in rows:
        subject = row.get(subject_col)
        if layout == "long":
            add(number, subject, row.get("annotator"), row.get("criterion"), row.get("value"), "value")
        elif layout == "wide-criterion":
            for dim in dims:
                if dim in row and row[dim] is not None and str(row[dim]).strip() != "":
                    add(number, subject, row.get("annotator"), dim, row[dim], dim)
        else:
            for column in annotator_columns:
                if row.get(column) is not None and str(row[column]).strip() != "":
                    add(number, subject, column, criterion, row[column], column)

    labels = collected.labels
    inserted, n_conflicts = _write_labels(con, labels, rubric, path, replace)
    return AnnotationImport(
        inserted=inserted - n_conflicts,
        unchanged=len(labels) - inserted,
        replaced=n_conflicts,
        annotators=len({label["annotator"] for label in labels}),
        subjects=len({label["subject_id"] for label in labels}),
    )


class _Labels:
    """Labels read from rows, each checked as it is added: the subject and annotator given, the
    criterion the rubric's, the value on its scale (or one of its labels), no label twice."""

    def __init__(self, rubric: AnyRubric, path: str, continuous: bool, note: str | None, saw_jury: bool | None) -> None:
        self.rubric, self.path, self.continuous, self.note = rubric, path, continuous, note
        self.saw_jury = saw_jury
        self.labels: list[dict[str, object]] = []
        self.seen: dict[tuple[str, str, str], int] = {}

    def add(self, number: int, subject: object, annotator: object, crit: object, raw: object, field: str) -> None:
        rubric, path, continuous = self.rubric, self.path, self.continuous
        subject_col, dims = rubric.subject_column, rubric.dimensions
        where = f"{path} row {number}, field '{field}'"
        if subject is None or str(subject).strip() == "":
            raise JurybenchError(f"{path} row {number}, field '{subject_col}': missing value.")
        if annotator is None or str(annotator).strip() == "":
            raise JurybenchError(f"{path} row {number}, field 'annotator': missing value.")
        if crit not in dims:
            raise JurybenchError(
                f"{path} row {number}, field 'criterion': {crit!r} is not in rubric '{rubric.name}'.",
                hint=f"Valid: {', '.join(dims)}.",
            )
        if continuous and not rubric.continuous_labels:
            raise JurybenchError(
                f"--continuous: {rubric.kind} labels are categories, not points on a scale.",
                hint="Drop --continuous for preference and classification labels.",
            )
        value, text = _value(rubric, str(crit), raw, where, continuous)
        key = (str(subject), str(crit), str(annotator))
        if key in self.seen:
            raise JurybenchError(
                f"{path} row {number}: duplicate label for {subject_col} {key[0]!r}, criterion {key[1]!r}, "
                f"annotator {key[2]!r} (first at row {self.seen[key]}).",
                hint="Each annotator labels each subject and criterion once.",
            )
        self.seen[key] = number
        self.labels.append(
            {
                "subject_kind": rubric.subject_kind,
                "subject_id": key[0],
                "criterion": key[1],
                "annotator": key[2],
                "value": value,
                "label": text,
                "source_file": str(path),
                "row": number,
                "continuous": continuous,
                "note": self.note,
                "saw_jury": self.saw_jury,
            }
        )


def _write_labels(
    con: Connection, labels: list[dict[str, object]], rubric: AnyRubric, path: str, replace: bool
) -> tuple[int, int]:
    """Write checked labels in one transaction: every subject must be stored, and a label that
    differs from a stored one is refused unless ``replace``. (inserted, replaced)."""
    import pyarrow as pa

    subject_col, subject_kind = rubric.subject_column, rubric.subject_kind
    schema = pa.schema(
        [
            ("subject_kind", pa.string()),
            ("subject_id", pa.string()),
            ("criterion", pa.string()),
            ("annotator", pa.string()),
            ("value", pa.float64()),
            ("label", pa.string()),
            ("source_file", pa.string()),
            ("row", pa.int64()),
            ("continuous", pa.bool_()),
            ("note", pa.string()),
            ("saw_jury", pa.bool_()),
        ]
    )
    table = pa.Table.from_pylist(labels, schema=schema)
    subject_table = rubric.subject_table
    with transaction(con):
        con.register("incoming_labels", table)
        try:
            unknown = first_row(
                con,
                f"""SELECT n.subject_id, n.row FROM incoming_labels n
                    LEFT JOIN {subject_table} s ON s.{subject_col} = n.subject_id
                    WHERE s.{subject_col} IS NULL ORDER BY n.row LIMIT 1""",
            )
            if unknown:
                raise JurybenchError(
                    f"{path} row {unknown[1]}, field '{subject_col}': no {subject_kind} {unknown[0]!r} in the store.",
                    hint=f"Import the {subject_table} first, or fix the id (rename columns with --map).",
                )
            conflict = first_row(
                con,
                """SELECT n.subject_id, n.criterion, n.annotator, n.row, h.value, n.value, h.label, n.label
                   FROM incoming_labels n JOIN human_labels h USING (subject_id, criterion, annotator)
                   WHERE h.value IS DISTINCT FROM n.value OR h.label IS DISTINCT FROM n.label AND n.value IS NULL
                   ORDER BY n.row LIMIT 1""",
            )
            n_conflicts = 0
            if conflict and not replace:
                raise JurybenchError(
                    f"{path} row {conflict[3]}: annotator {conflict[2]!r} already gave {conflict[1]!r} of "
                    f"{conflict[0]!r} the value {_shown(conflict[4], conflict[6])}, not "
                    f"{_shown(conflict[5], conflict[7])}.",
                    hint="Pass --replace to overwrite stored labels.",
                )
            if conflict:
                n_conflicts = con.execute(
                    """SELECT count(*) FROM incoming_labels n JOIN human_labels h USING (subject_id, criterion, annotator)
                       WHERE h.value IS DISTINCT FROM n.value OR h.label IS DISTINCT FROM n.label AND n.value IS NULL"""
                ).fetchall()[0][0]
                con.execute(
                    """DELETE FROM human_labels h USING incoming_labels n
                       WHERE h.subject_id = n.subject_id AND h.criterion = n.criterion AND h.annotator = n.annotator
                         AND (h.value IS DISTINCT FROM n.value OR h.label IS DISTINCT FROM n.label AND n.value IS NULL)"""
                )
            before = con.execute("SELECT count(*) FROM human_labels").fetchall()[0][0]
            con.execute(
                """INSERT INTO human_labels (subject_kind, subject_id, criterion, annotator, value, label, source_file,
                                            continuous, note, saw_jury)
                   SELECT subject_kind, subject_id, criterion, annotator, value, label, source_file, continuous, note,
                          saw_jury
                   FROM incoming_labels ON CONFLICT DO NOTHING"""
            )
            after = con.execute("SELECT count(*) FROM human_labels").fetchall()[0][0]
        finally:
            con.unregister("incoming_labels")
    return after - before, n_conflicts
