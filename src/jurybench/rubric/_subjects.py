"""A rubric's subjects in the store: its items (pointwise) or pairs, read by id, predicate or chunk."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from jurybench.rubric._model import AnyRubric, is_pairwise

if TYPE_CHECKING:
    import pyarrow as pa
    from duckdb import DuckDBPyConnection as Connection


def load_subjects(con: Connection, rubric: AnyRubric, where: str | None) -> list[dict[str, Any]]:
    """Items (pointwise) or pairs with both texts (pairwise), filtered by a SQL predicate.

    The predicate is parsed as one expression and evaluated in a sandbox holding only
    the candidate rows, never on the store's (writable) connection.
    """
    rows = [row for rows in subject_slices(subject_table(con, rubric, where), 1 << 30) for row in rows]
    return with_conversations(con, rubric, rows)


def with_conversations(con: Connection, rubric: AnyRubric, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The subjects with their conversations' messages (``conversation``; a pair's
    ``conversation_a`` / ``conversation_b``) when the rubric's templates show one; a subject that
    is a single response gets none (it reads as its prompt and response)."""
    if not rubric.conversation_fields or not rows:
        return rows
    from jurybench.store import load_messages

    sides = ("_a", "_b") if is_pairwise(rubric) else ("",)
    key = {"_a": "item_a", "_b": "item_b", "": "item_id"}
    found = load_messages(con, [str(r[key[s]]) for r in rows for s in sides])
    for row in rows:
        for side in sides:
            row[f"conversation{side}"] = found.get(str(row[key[side]]))
    return rows


def refuse_single_responses(con: Connection, rubric: AnyRubric, ids: Sequence[str]) -> None:
    """A rubric that judges conversations (``judges_conversations``) refuses, before any call, a
    selection holding single-response items: one line naming how many and the first, and how to
    select only conversations."""
    if not rubric.judges_conversations or not ids:
        return
    import pyarrow as pa

    from jurybench.errors import JurybenchError
    from jurybench.store import registered

    with registered(con, "_jb_shape_ids", pa.table({"id": pa.array(list(dict.fromkeys(ids)), pa.string())})):
        single = con.execute(
            "SELECT count(*), min(item_id) FROM items WHERE item_id IN (SELECT id FROM _jb_shape_ids) "
            "AND coalesce(shape, 'response') <> 'conversation'"
        ).fetchall()[0]
    if not single[0]:
        return
    from jurybench.rubric._kinds import kind_name

    kind = kind_name(type(rubric))
    raise JurybenchError(
        f"rubric '{rubric.name}' (kind {kind}) judges conversations, and {single[0]} of the {len(ids)} selected "
        f"items are single responses (the first: {single[1]!r}).",
        hint="Select conversations only (--where \"shape = 'conversation'\"), or import the transcripts with "
        "'jurybench items import FILE --format NAME' (docs/conversations.md).",
    )


def _subject_query(rubric: AnyRubric) -> tuple[str, str, str]:
    """(the SELECT of a subject's columns, its qualified key, the key's output name)."""
    if is_pairwise(rubric):
        return (
            """SELECT p.pair_id, p.dataset, p.item_a, p.item_b, a.prompt, a.reference, a.language,
                   a.response AS response_a, b.response AS response_b,
                   a.model AS model_a, b.model AS model_b,
                   a.treatment AS treatment_a, b.treatment AS treatment_b,
                   coalesce(p.metadata, a.metadata)::VARCHAR AS metadata
            FROM pairs p JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b""",
            "p.pair_id",
            "pair_id",
        )
    return (
        """SELECT item_id, prompt, response, reference, model, language, treatment::VARCHAR AS treatment,
                  metadata::VARCHAR AS metadata, dataset, source_file, imported_at, shape FROM items""",
        "item_id",
        "item_id",
    )


def subject_table(con: Connection, rubric: AnyRubric, where: str | None, ids: Sequence[str] | None = None) -> pa.Table:
    """The selected subjects as an Arrow table (texts stay in Arrow's compact buffers): those with
    the given ids (found in SQL, so a few subjects of a big store cost little) and/or matching
    ``where``. The engine does not hold a run's subjects: it plans from :func:`subject_ids` and
    reads :func:`subject_rows` a chunk at a time."""
    import pyarrow as pa

    from jurybench.store import registered, select_table

    base, key, order = _subject_query(rubric)
    if ids is None:
        return select_table(con.sql(base).to_arrow_table(), where, option="--where", order_by=order)
    with registered(con, "_jb_subject_ids", pa.table({"id": pa.array(list(dict.fromkeys(ids)), pa.string())})):
        table = con.sql(f"{base} WHERE {key} IN (SELECT id FROM _jb_subject_ids)").to_arrow_table()
    return select_table(table, where, option="--where", order_by=order)


# Candidate subjects passed through a --where sandbox at a time while selecting ids.
SELECT_CHUNK = 20_000


def where_columns(columns: Sequence[str], where: str, key: str) -> list[str]:
    """The subject columns a ``--where`` predicate may read: the key, and every column whose name
    occurs in it as a word (all of them when it uses ``*`` or ``COLUMNS``, which name none)."""
    import re

    if "*" in where or re.search(r"(?i)\bcolumns\s*\(", where):
        return list(columns)
    words = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", where)}
    return [c for c in columns if c == key or c.lower() in words]


def subject_ids(con: Connection, rubric: AnyRubric, where: str | None, ids: Sequence[str] | None = None) -> list[str]:
    """The ids of the selected subjects, sorted. Without ``where`` SQL returns only the ids; with
    one, the candidates go through the sandbox (``select_table``) ``SELECT_CHUNK`` rows at a time
    in key order, so only ids are ever held, never every subject's texts."""
    import pyarrow as pa

    from jurybench.store import registered, select_table

    base, key, order = _subject_query(rubric)
    wanted = None if ids is None else pa.table({"id": pa.array(list(dict.fromkeys(ids)), pa.string())})
    with contextlib.ExitStack() as stack:
        among = ""
        if wanted is not None:
            stack.enter_context(registered(con, "_jb_subject_ids", wanted))
            among = f" AND {key} IN (SELECT id FROM _jb_subject_ids)"
        if not where:
            keyed = con.sql(f"SELECT {order} FROM ({base} WHERE true{among}) ORDER BY {order}").to_arrow_table()
            return [str(v) for v in keyed.column(0).to_pylist()]
        # Only the columns the predicate names are read: a huge response elsewhere in the store
        # (an answer of 40 MB) is never loaded to select around it.
        columns = ", ".join(f"s.{c}" for c in where_columns(con.sql(base).columns, where, order))
        out: list[str] = []
        last: str | None = None
        while True:
            after = "" if last is None else f" AND s.{order} > ?"
            chunk = con.sql(
                f"SELECT {columns} FROM ({base} WHERE true{among}) AS s WHERE true{after} ORDER BY s.{order} "
                f"LIMIT {SELECT_CHUNK}",
                params=None if last is None else [last],
            ).to_arrow_table()
            if not chunk.num_rows:
                return out
            last = str(chunk.column(order)[-1].as_py())
            out.extend(
                str(v) for v in select_table(chunk, where, option="--where", order_by=order).column(order).to_pylist()
            )


def subject_rows(con: Connection, rubric: AnyRubric, ids: Sequence[str]) -> list[dict[str, object]]:
    """The subjects with these ids, as dicts in key order (metadata parsed)."""
    import pyarrow as pa

    from jurybench.store import registered

    base, key, _order = _subject_query(rubric)
    with registered(con, "_jb_chunk_ids", pa.table({"id": pa.array(list(ids), pa.string())})):
        try:
            table = con.sql(f"{base} WHERE {key} IN (SELECT id FROM _jb_chunk_ids) ORDER BY {key}").to_arrow_table()
        except Exception as exc:
            if type(exc).__name__ != "OutOfMemoryException":
                raise
            table = _by_row_ranges(con, rubric, base, key)
    return with_conversations(con, rubric, next(subject_slices(table, max(table.num_rows, 1)), []))


def _by_row_ranges(con: Connection, rubric: AnyRubric, base: str, key: str) -> Any:
    """The subjects in ``_jb_chunk_ids`` read by ranges of the items' row numbers (found by
    reading the ids alone), when reading them plainly ran out of memory: DuckDB reads a whole
    vector of texts around the rows it wants, so one text of 40 MB stored beside them (in the
    same vector) made every run on the store fail, even one whose --where left it out. A range
    reads its own rows only. A subject that itself holds too large a text still runs out."""

    if is_pairwise(rubric):
        found = con.execute(
            "SELECT a.rowid, b.rowid FROM pairs p JOIN items a ON a.item_id = p.item_a "
            "JOIN items b ON b.item_id = p.item_b "
            "WHERE p.pair_id IN (SELECT id FROM _jb_chunk_ids)"
        ).fetchall()
        rows = sorted({int(r[0]) for r in found} | {int(r[1]) for r in found})
    else:
        rows = sorted(
            int(r[0])
            for r in con.execute("SELECT rowid FROM items WHERE item_id IN (SELECT id FROM _jb_chunk_ids)").fetchall()
        )
    ranges: list[tuple[int, int]] = []
    for row in rows:
        if ranges and row == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], row)
        else:
            ranges.append((row, row))
    if not ranges:
        return con.sql(f"{base} WHERE false").to_arrow_table()
    # One query over every range (a pair's two items may lie in distant ranges); a fallback, so
    # its planning cost (about 1.5 ms a range) is paid only on a store that needs it.
    only = "(" + " UNION ALL ".join(f"SELECT * FROM items WHERE rowid BETWEEN {a} AND {b}" for a, b in ranges) + ")"
    if is_pairwise(rubric):
        query = base.replace("JOIN items a ON", f"JOIN {only} a ON").replace("JOIN items b ON", f"JOIN {only} b ON")
    else:
        query = base.replace("FROM items", f"FROM {only} AS items")
    return con.sql(f"{query} WHERE {key} IN (SELECT id FROM _jb_chunk_ids) ORDER BY {key}").to_arrow_table()


def subject_slices(table: Any, size: int) -> Iterator[list[dict[str, object]]]:
    """The subjects as dicts, ``size`` at a time (metadata parsed)."""
    for start in range(0, table.num_rows, size):
        rows = table.slice(start, size).to_pylist()
        for row in rows:
            if isinstance(row.get("metadata"), str):
                row["metadata"] = json.loads(row["metadata"])
        yield rows
