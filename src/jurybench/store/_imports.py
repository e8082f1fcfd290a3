"""Import items and pairs: validated first, then written in one transaction."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError
from jurybench.store._db import first_row, registered, scalar, transaction
from jurybench.store._read import (
    BLANK_PATTERN,
    Row,
    as_float,
    iter_rows,
    read_rows,
    require_columns,
    response_field,
    text_field,
)

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from pyarrow import Table

ITEM_COLUMNS = ("item_id", "prompt", "response", "reference", "model", "language")
PAIR_COLUMNS = ("pair_id", "item_a", "item_b")


@dataclass(frozen=True)
class ImportResult:
    inserted: int
    unchanged: int
    updated: int = 0  # stored rows whose dataset name was changed by this import
    conversations: bool = False  # the rows were conversations (items import --format openai-chat, ...)

    def __str__(self) -> str:
        text = f"{self.inserted} inserted, {self.unchanged} already present"
        return text + (f", {self.updated} updated (dataset)" if self.updated else "")


_ITEM_FIELDS = (
    "item_id",
    "response",
    "prompt",
    "reference",
    "model",
    "language",
    "treatment",
    "metadata",
    "dataset",
    "source_file",
)
_CONFLICT = """n.response IS DISTINCT FROM i.response
                OR n.prompt IS DISTINCT FROM i.prompt
                OR n.model IS DISTINCT FROM i.model
                OR n.language IS DISTINCT FROM i.language
                OR n.reference IS DISTINCT FROM i.reference
                OR n.treatment::JSON IS DISTINCT FROM i.treatment
                OR n.metadata::JSON IS DISTINCT FROM i.metadata"""


def import_items(
    con: Connection,
    path: str | Path,
    *,
    fmt: str | None = None,
    treatment_columns: Sequence[str] = (),
    dataset: str | None = None,
) -> ImportResult:
    """Import generations; columns beyond the known ones go to ``metadata``.

    Validated first, then written. The file is read a chunk of rows at a time into a staging
    table (DuckDB spills it to disk when it is large); every check (each row's fields, ids
    repeated anywhere in the file, ids stored with other content) runs before anything is
    written, so bad input leaves the store as it was. The rows are then written a chunk per
    transaction: one transaction over all of them kept every row in DuckDB's memory until the
    commit (a 600,000-row file took 2.4 GB; 2 M rows ran out of a capped DuckDB's memory). If
    writing stops part-way (the process killed, the disk full), running the same import again
    finishes it: rows already stored are skipped."""
    import itertools

    path = Path(path)
    source = str(path)
    rows = iter_rows(path, fmt)
    n_rows = 0
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _jb_import (row_number BIGINT, "
        + ", ".join(f"{c} VARCHAR" for c in _ITEM_FIELDS)
        + ")"
    )
    try:
        while chunk := list(itertools.islice(rows, IMPORT_CHUNK)):
            if not n_rows:  # columns are known from the first rows
                require_columns(path, chunk, ("item_id", "response"))
            n_rows += len(chunk)
            records = _item_records(path, chunk, treatment_columns, dataset, source)
            _check_duplicates(source, records, "item_id")
            _stage_chunk(con, source, records)
        if not n_rows:
            raise JurybenchError(f"{path}: no data rows.", hint="The file has a header but no rows.")
        conflict = first_row(
            con,
            f"""SELECT n.item_id, n.row_number FROM _jb_import n JOIN items i USING (item_id)
                WHERE {_CONFLICT} ORDER BY n.row_number LIMIT 1""",
        )
        if conflict:
            raise JurybenchError(
                f"{source} row {conflict[1]}, field 'item_id': '{conflict[0]}' already exists with a different "
                "prompt, response, reference, model, language, treatment or metadata.",
                hint="Give the new item another id, or import into a fresh --db.",
            )
        with transaction(con):
            # A stored item without a dataset takes the one named here (reported); none is moved.
            updated = _update_dataset(con, "items", "item_id", "_jb_import", source)
        inserted = 0
        # Row numbers are the file's own (a CSV's data starts on line 2): write them all.
        low, high = first_row(con, "SELECT min(row_number), max(row_number) FROM _jb_import") or (1, 0)
        for first in range(int(low), int(high) + 1, IMPORT_CHUNK):
            with transaction(con):
                inserted += int(
                    scalar(
                        con,
                        f"""INSERT INTO items ({", ".join(_ITEM_FIELDS)}, empty)
                        SELECT item_id, response, prompt, reference, model, language,
                               treatment::JSON, metadata::JSON, dataset, source_file,
                               regexp_replace(response, '{BLANK_PATTERN}', '', 'g') = ''
                        FROM _jb_import
                        WHERE row_number >= ? AND row_number < ? AND item_id NOT IN (
                            SELECT item_id FROM items WHERE item_id IN (
                                SELECT item_id FROM _jb_import WHERE row_number >= ? AND row_number < ?))""",
                        [first, first + IMPORT_CHUNK, first, first + IMPORT_CHUNK],
                    )
                )
    finally:
        with contextlib.suppress(Exception):  # never hide the error that brought us here
            con.execute("DROP TABLE IF EXISTS temp._jb_import")
    return ImportResult(inserted=inserted, unchanged=n_rows - inserted - updated, updated=updated)


IMPORT_CHUNK = 20_000


def _stage_chunk(con: Connection, source: str, records: list[tuple[int, Row]]) -> None:
    """Add a checked chunk to the staging table; an id already staged (an earlier chunk of the
    same file) is a duplicate, as within one chunk."""
    import pyarrow as pa

    table = _text_table(records, _ITEM_FIELDS).append_column(
        "row_number", pa.array([n for n, _ in records], pa.int64())
    )
    with registered(con, "_jb_chunk", table):
        found = first_row(
            con,
            "SELECT c.item_id, c.row_number, e.row_number FROM _jb_chunk c JOIN _jb_import e USING (item_id) "
            "ORDER BY c.row_number LIMIT 1",
        )
        if found:
            raise JurybenchError(
                f"{source} row {found[1]}, field 'item_id': duplicate id '{found[0]}' (first at row {found[2]}).",
                hint="Ids must be unique within a file.",
            )
        con.execute(f"INSERT INTO _jb_import SELECT row_number, {', '.join(_ITEM_FIELDS)} FROM _jb_chunk")


def import_item_rows(
    con: Connection,
    rows: list[tuple[int, Row]],
    *,
    source: str,
    treatment_columns: Sequence[str] = (),
    dataset: str | None = None,
    in_transaction: bool = False,
) -> ImportResult:
    """Items from rows (number, mapping), read from a file or received by the service, all or nothing."""
    path = Path(source)
    require_columns(path, rows, ("item_id", "response"))
    records = _item_records(path, rows, treatment_columns, dataset, source)
    return write_items(con, records, source=source, in_transaction=in_transaction)


def _item_records(
    path: Path, rows: list[tuple[int, Row]], treatment_columns: Sequence[str], dataset: str | None, source: str
) -> list[tuple[int, Row]]:
    """Rows checked and shaped as the items table holds them, with their row numbers."""
    records = []
    for number, row in rows:
        record = _item_record(path, number, row, treatment_columns)
        record["dataset"] = dataset or row.get("dataset")
        record["source_file"] = source
        records.append((number, record))
    return records


def _item_record(path: Path, number: int, row: Row, treatment_columns: Sequence[str]) -> dict[str, object]:
    record: dict[str, object] = {
        "item_id": text_field(path, number, row, "item_id", required=True),
        "response": response_field(path, number, row),
    }
    for field in ("prompt", "reference"):  # texts a juror reads: a number here is a mistake in the file
        record[field] = text_field(path, number, row, field, required=False, ids=False)
    for field in ("model", "language"):
        record[field] = text_field(path, number, row, field, required=False)
    missing = [c for c in treatment_columns if c not in row]
    if missing:
        raise JurybenchError(
            f"{path}: treatment column(s) {', '.join(missing)} not in the file.",
            hint="Check --treatment against the file's header.",
        )
    treatment = {c: row[c] for c in treatment_columns}
    if isinstance(given := row.get("treatment"), dict):  # rows built in code (the service) carry a mapping
        treatment.update(given)
    known = set(ITEM_COLUMNS) | set(treatment_columns) | {"dataset", "metadata", "treatment"}
    metadata = {k: v for k, v in row.items() if k not in known and v is not None}
    if isinstance(given_metadata := row.get("metadata"), dict):
        metadata.update(given_metadata)
    metadata = {k: v for k, v in metadata.items() if not (isinstance(v, float) and math.isnan(v))}  # NaN: missing
    for field, value in (*treatment.items(), *metadata.items()):
        _finite_json(path, number, field, value)
    record["treatment"] = json.dumps(treatment, sort_keys=True, default=str, allow_nan=False) if treatment else None
    record["metadata"] = json.dumps(metadata, sort_keys=True, default=str, allow_nan=False) if metadata else None
    return record


def _finite_json(path: Path, number: int, field: str, value: object) -> None:
    """A value JSON can hold: no infinity or NaN anywhere in it (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise JurybenchError(
            f"{path} row {number}, field '{field}': {value!r} cannot be stored (JSON has no infinity or NaN).",
            hint='Leave the value empty, or write it as text (e.g. "inf").',
        )
    if isinstance(value, dict):
        for k, v in value.items():
            _finite_json(path, number, f"{field}.{k}", v)
    elif isinstance(value, list | tuple):
        for v in value:
            _finite_json(path, number, field, v)


def write_items(
    con: Connection,
    records: Sequence[tuple[int, Mapping[str, object]]],
    *,
    source: str,
    in_transaction: bool = False,
) -> ImportResult:
    """Insert validated item records; identical re-imports are no-ops, conflicts are errors."""
    _check_duplicates(source, records, "item_id")
    frame = _text_table(records, _ITEM_FIELDS)
    with nullcontext() if in_transaction else transaction(con):
        con.register("incoming_items", frame)
        try:
            conflict = first_row(
                con,
                f"SELECT n.item_id FROM incoming_items n JOIN items i USING (item_id) WHERE {_CONFLICT} LIMIT 1",
            )
            if conflict:
                number = next(n for n, r in records if r["item_id"] == conflict[0])
                raise JurybenchError(
                    f"{source} row {number}, field 'item_id': '{conflict[0]}' already exists with a different "
                    "prompt, response, reference, model, language, treatment or metadata.",
                    hint="Give the new item another id, or import into a fresh --db.",
                )
            # A stored item without a dataset takes the one named here (reported); none is moved.
            updated = (  # nothing to check or give when no incoming item names a dataset (a job's items)
                _update_dataset(con, "items", "item_id", "incoming_items", source)
                if any(r.get("dataset") is not None for _, r in records)
                else 0
            )
            # The rows inserted, as DuckDB answers the INSERT (not a count of the table before and after).
            inserted = int(
                scalar(
                    con,
                    f"""INSERT INTO items (item_id, prompt, response, reference, model, language,
                                      treatment, metadata, dataset, source_file, empty)
                   SELECT item_id, prompt, response, reference, model, language,
                          treatment::JSON, metadata::JSON, dataset, source_file,
                          regexp_replace(response, '{BLANK_PATTERN}', '', 'g') = ''
                   FROM incoming_items
                   WHERE item_id NOT IN (SELECT item_id FROM items
                                         WHERE item_id IN (SELECT item_id FROM incoming_items))""",
                )
            )
        finally:
            with contextlib.suppress(Exception):  # an aborted transaction refuses it; its cause is what counts
                con.unregister("incoming_items")
    return ImportResult(inserted=inserted, unchanged=len(records) - inserted - updated, updated=updated)


def _update_dataset(con: Connection, table: str, key: str, incoming: str, source: str) -> int:
    """Give stored rows without a dataset the one this import names (reported as updated). A row
    already in another dataset is not moved: runs and statistics select by dataset, and a silent
    move would change what they judged (issue 40)."""
    moved = first_row(
        con,
        f"""SELECT t.{key}, t.dataset, n.dataset FROM {table} t JOIN {incoming} n USING ({key})
                                WHERE t.dataset IS NOT NULL AND n.dataset IS NOT NULL
                                  AND n.dataset <> t.dataset ORDER BY t.{key} LIMIT 1""",
    )
    if moved:
        kind = "item" if table == "items" else "pair"
        raise JurybenchError(
            f"{source}: {kind} '{moved[0]}' is in dataset '{moved[1]}'; this import would move it to '{moved[2]}'.",
            hint=f"A {kind} belongs to one dataset: import it under '{moved[1]}' (or without --dataset), or give the "
            "new one another id.",
        )
    changed = f"""FROM {incoming} n WHERE n.{key} = {table}.{key}
                 AND n.dataset IS NOT NULL AND n.dataset IS DISTINCT FROM {table}.dataset"""
    # The rows changed, as DuckDB answers an UPDATE (one statement: the store's one writer is what a
    # server's jobs wait for).
    return int(scalar(con, f"UPDATE {table} SET dataset = n.dataset {changed}"))


def import_pairs(
    con: Connection, path: str | Path, *, fmt: str | None = None, dataset: str | None = None
) -> ImportResult:
    """Import pairs of existing items (columns pair_id, item_a, item_b)."""
    path = Path(path)
    return import_pair_rows(con, read_rows(path, fmt), source=str(path), dataset=dataset)


def import_pair_rows(
    con: Connection,
    rows: list[tuple[int, Row]],
    *,
    source: str,
    dataset: str | None = None,
    in_transaction: bool = False,
) -> ImportResult:
    """Pairs from rows (number, mapping), all or nothing."""
    path = Path(source)
    require_columns(path, rows, PAIR_COLUMNS)
    records = []
    for number, row in rows:
        record = {c: text_field(path, number, row, c, required=True) for c in PAIR_COLUMNS}
        if record["item_a"] == record["item_b"]:
            raise JurybenchError(
                f"{path} row {number}, field 'item_b': a pair needs two different items.",
            )
        extra = {k: v for k, v in row.items() if k not in (*PAIR_COLUMNS, "dataset", "metadata") and v is not None}
        if isinstance(given := row.get("metadata"), dict):
            extra.update(given)
        record["metadata"] = json.dumps(extra, sort_keys=True, default=str) if extra else None
        record["dataset"] = dataset or text_field(path, number, row, "dataset", required=False)
        record["source_file"] = str(path)
        records.append((number, record))
    return write_pairs(con, records, source=str(path), in_transaction=in_transaction)


def write_pairs(
    con: Connection,
    records: Sequence[tuple[int, Mapping[str, object]]],
    *,
    source: str,
    in_transaction: bool = False,
) -> ImportResult:
    _check_duplicates(source, records, "pair_id")
    frame = _text_table(records, ("pair_id", "item_a", "item_b", "metadata", "dataset", "source_file"))
    with nullcontext() if in_transaction else transaction(con):
        con.register("incoming_pairs", frame)
        try:
            unknown = first_row(
                con,
                """SELECT n.pair_id, CASE WHEN a.item_id IS NULL THEN 'item_a' ELSE 'item_b' END,
                          CASE WHEN a.item_id IS NULL THEN n.item_a ELSE n.item_b END
                   FROM incoming_pairs n
                   LEFT JOIN items a ON a.item_id = n.item_a
                   LEFT JOIN items b ON b.item_id = n.item_b
                   WHERE a.item_id IS NULL OR b.item_id IS NULL LIMIT 1""",
            )
            if unknown:
                number = next(n for n, r in records if r["pair_id"] == unknown[0])
                raise JurybenchError(
                    f"{source} row {number}, field '{unknown[1]}': no item '{unknown[2]}' in the store.",
                    hint="Import the items first ('jurybench items import').",
                )
            conflict = first_row(
                con,
                """SELECT n.pair_id FROM incoming_pairs n JOIN pairs p USING (pair_id)
                   WHERE n.item_a <> p.item_a OR n.item_b <> p.item_b LIMIT 1""",
            )
            if conflict:
                number = next(n for n, r in records if r["pair_id"] == conflict[0])
                raise JurybenchError(
                    f"{source} row {number}, field 'pair_id': '{conflict[0]}' already exists with other items.",
                )
            updated = (
                _update_dataset(con, "pairs", "pair_id", "incoming_pairs", source)
                if any(r.get("dataset") is not None for _, r in records)
                else 0
            )
            inserted = int(
                scalar(
                    con,
                    """INSERT INTO pairs (pair_id, item_a, item_b, dataset, metadata, source_file)
                   SELECT pair_id, item_a, item_b, dataset, metadata::JSON, source_file
                   FROM incoming_pairs WHERE pair_id NOT IN (
                       SELECT pair_id FROM pairs WHERE pair_id IN (SELECT pair_id FROM incoming_pairs))""",
                )
            )
        finally:
            con.unregister("incoming_pairs")
    return ImportResult(inserted=inserted, unchanged=len(records) - inserted - updated, updated=updated)


def _text_table(records: Sequence[tuple[int, Mapping[str, object]]], columns: tuple[str, ...]) -> Table:
    """Records as an Arrow table of text columns (compact buffers, no Python object per value)."""
    import pyarrow as pa

    return pa.table({c: pa.array([r.get(c) for _, r in records], pa.string()) for c in columns})


def _check_duplicates(source: str, records: Sequence[tuple[int, Mapping[str, object]]], key: str) -> None:
    seen: dict[object, int] = {}
    for number, record in records:
        value = record[key]
        if value in seen:
            raise JurybenchError(
                f"{source} row {number}, field '{key}': duplicate id '{value}' (first at row {seen[value]}).",
                hint="Ids must be unique within a file.",
            )
        seen[value] = number


BASELINE_STATISTICS = ("d", "mean")
BASELINE_COLUMNS = ("target", "value", "cell", "statistic")
# A criterion's name, or facet:<name> / factor:<name> (names as rubrics spell them).
BASELINE_TARGET = re.compile(r"(?:(?:facet|factor):)?[A-Za-z][A-Za-z0-9_\-]*")


def import_baselines(con: Connection, path: str | Path, *, name: str, statistic: str | None = None) -> ImportResult:
    """Human reference values (columns target, value[, cell][, statistic]) under a name, all or nothing.

    ``target`` is a criterion, ``facet:<name>`` or ``factor:<name>``; ``cell`` a country, language
    or group ('' or missing: every cell); ``statistic`` d (effect size) or mean (score)."""
    path = Path(path)
    return import_baseline_rows(con, read_rows(path), source=str(path), name=name, statistic=statistic)


def import_baseline_rows(
    con: Connection, rows: list[tuple[int, Row]], *, source: str, name: str, statistic: str | None = None
) -> ImportResult:
    """Baselines from rows (number, mapping), all or nothing; errors name ``source``, row and field."""
    path = Path(source)
    require_columns(path, rows, ("target", "value"))
    columns = {c for _, row in rows for c in row}
    extra = sorted(columns - set(BASELINE_COLUMNS))
    if extra:
        raise JurybenchError(
            f"{path}: column '{extra[0]}' is not a baselines column; its values would be ignored.",
            hint=f"Valid: {', '.join(BASELINE_COLUMNS)}. Remove it, or put one value per row in value.",
        )
    if statistic is None and "statistic" not in columns:  # a mean read as an effect size would be silent
        raise JurybenchError(
            f"{path}: no 'statistic' column, so it cannot say whether its values are effect sizes or means.",
            hint="Add a statistic column (d or mean) or pass --statistic d|mean.",
        )
    records: dict[tuple[str, str, str], tuple[int, float]] = {}
    for number, row in rows:
        target = text_field(path, number, row, "target", required=False) or ""  # '': every criterion
        if target and not BASELINE_TARGET.fullmatch(target):
            raise JurybenchError(
                f"{path} row {number}, field 'target': {target!r} is not a criterion, facet:<name> or factor:<name>.",
                hint="Name a criterion (e.g. warmth), a facet (facet:warmth) or a factor (factor:agency), "
                "or leave it empty for every criterion.",
            )
        cell = text_field(path, number, row, "cell", required=False) or ""
        kind = text_field(path, number, row, "statistic", required=False) or statistic or ""
        if kind not in BASELINE_STATISTICS:
            raise JurybenchError(
                f"{path} row {number}, field 'statistic': {kind!r} is not valid.", hint="Valid: d, mean."
            )
        try:
            value = as_float(row["value"])
        except (TypeError, ValueError):
            raise JurybenchError(
                f"{path} row {number}, field 'value': {row['value']!r} is not a number.", hint="Write a decimal number."
            ) from None
        if not math.isfinite(value):
            raise JurybenchError(
                f"{path} row {number}, field 'value': {row['value']!r} is not a finite number.",
                hint="Write the published value as a decimal number; leave out rows without one.",
            )
        key = (kind, str(target), cell)
        if key in records:
            raise JurybenchError(
                f"{path} row {number}: {kind} for target '{target}' in cell '{cell}' is given twice "
                f"(first at row {records[key][0]})."
            )
        records[key] = (number, value)
    with transaction(con):
        before = scalar(con, "SELECT count(*) FROM human_baselines WHERE name = ?", [name])
        con.execute("DELETE FROM human_baselines WHERE name = ?", [name])
        con.executemany(
            "INSERT INTO human_baselines (name, statistic, target, cell, value, source_file) VALUES (?, ?, ?, ?, ?, ?)",
            [(name, k[0], k[1], k[2], v[1], source) for k, v in records.items()],
        )
    return ImportResult(inserted=len(records), unchanged=0, updated=int(before))
