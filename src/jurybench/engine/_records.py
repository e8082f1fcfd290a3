"""What the engine reads from and writes to the judgment store."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from jurybench.jurors import JurorSpec, stored_params
from jurybench.rubric import AnyRubric

if TYPE_CHECKING:
    import pyarrow as pa
    from duckdb import DuckDBPyConnection as Connection

CALL_COLUMNS = [
    ("call_key", "string"),
    ("rubric_hash", "string"),
    ("juror_key", "string"),
    ("subject_kind", "string"),
    ("subject_id", "string"),
    ("presented_order", "string"),
    ("sample_index", "int32"),
    ("messages", "string"),
    ("response_text", "string"),
    ("finish_reason", "string"),
    ("status", "string"),
    ("reason", "string"),
    ("attempts", "int32"),
    ("prompt_tokens", "int64"),
    ("completion_tokens", "int64"),
    ("cost_usd", "float64"),
    ("latency_ms", "float64"),
    ("run_id", "string"),
    ("presentation", "string"),
    ("structured", "string"),
    ("cached_tokens", "int64"),
    ("cache_write_tokens", "int64"),
]
JUDGMENT_COLUMNS = [
    ("call_key", "string"),
    ("rubric_hash", "string"),
    ("juror_key", "string"),
    ("subject_id", "string"),
    ("presented_order", "string"),
    ("sample_index", "int32"),
    ("dimension", "string"),
    ("score", "float64"),
    ("status", "string"),
    ("reason", "string"),
    ("rationale", "string"),
    ("label", "string"),
    ("raw_value", "float64"),
    ("shown_position", "int32"),
    ("expected", "float64"),
    ("distribution", "string"),
]


def register_rubric(con: Connection, rubric: AnyRubric) -> None:
    from jurybench.store import first_row

    if first_row(con, "SELECT 1 FROM rubrics WHERE rubric_hash = ?", [rubric.content_hash]):
        return  # registered with everything below when first seen (content-addressed)
    con.execute(
        "INSERT OR IGNORE INTO rubrics (rubric_hash, name, version, kind, body) VALUES (?, ?, ?, ?, ?)",
        [rubric.content_hash, rubric.name, rubric.version, rubric.kind, rubric.model_dump_json()],
    )
    if not rubric.dimensions:  # a generation spec has none, and no structure
        return
    con.executemany(
        "INSERT OR IGNORE INTO rubric_dimensions (rubric_hash, dimension, position) VALUES (?, ?, ?)",
        [(rubric.content_hash, d, i) for i, d in enumerate(rubric.dimensions)],
    )
    structure = rubric.structure()  # questionnaires: each item's facet, factor and keying
    if structure:
        con.executemany(
            "INSERT OR IGNORE INTO inventory_structure VALUES (?, ?, ?, ?, ?)",
            [(rubric.content_hash, *row) for row in structure],
        )


def register_jurors(con: Connection, jurors: Sequence[JurorSpec]) -> None:
    """Add jurors; a juror seen before takes the display name it has now. Those stored already
    under the same name are left alone (one read instead of a write each: a server's jobs wait
    for its store's one writer)."""
    if not jurors:
        return
    stored = dict(
        con.execute(
            f"SELECT juror_key, name FROM jurors WHERE juror_key IN ({', '.join('?' * len(jurors))})",
            [spec.key for spec in jurors],
        ).fetchall()
    )
    for spec in jurors:
        if stored.get(spec.key) == spec.display_name:
            continue
        con.execute(
            "INSERT INTO jurors (juror_key, name, model, params) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (juror_key) DO UPDATE SET name = excluded.name",
            [
                spec.key,
                spec.display_name,
                spec.model,
                json.dumps(stored_params(spec), sort_keys=True),
            ],
        )


def record_gold_labels(con: Connection, rubric: AnyRubric, subjects: Iterable[dict[str, Any]]) -> None:
    """Classification: each item's reference as a canonical label (classification_gold).

    A reference that names no label is bad input: one line naming the item and the fix,
    before anything is judged. Items without a reference are judged but have no gold."""
    import pyarrow as pa

    from jurybench.errors import JurybenchError

    if not rubric.keeps_gold:
        return
    rows = []
    for item in subjects:
        reference = item.get("reference")
        if reference is None or not str(reference).strip():
            continue
        gold = rubric.gold_of(str(reference), item.get("language"))
        if gold is None:
            source = item.get("source_file") or "items"
            raise JurybenchError(
                f"{source}, item '{item['item_id']}', field 'reference': {reference!r} is not a label of rubric "
                f"'{rubric.name}'.",
                hint=f"Use one of: {', '.join(rubric.human_choices(rubric.dimensions[0]))} (or its name in the item's "
                "language).",
            )
        rows.append((item["item_id"], gold))
    if rows:
        table = pa.table({"item_id": [r[0] for r in rows], "gold": [r[1] for r in rows]})
        con.register("new_gold", table)
        try:
            con.execute(
                "INSERT OR REPLACE INTO classification_gold SELECT ?, item_id, gold FROM new_gold",
                [rubric.content_hash],
            )
        finally:
            con.unregister("new_gold")


def done_call_keys(con: Connection, keys: list[str], subjects: list[str] | None = None) -> set[str]:
    """Keys already answered (valid, invalid or refusal); errors are tried again. ``subjects``
    (the tasks' subject ids) narrow the scan: ``calls`` has no key index (migration m010), and
    its rows lie roughly in subject order, so DuckDB skips the row groups whose subject range
    misses the chunk's (22 vs 2-4 ms per chunk at 1 M calls)."""
    import pyarrow as pa

    if not keys:
        return set()
    from jurybench.store import registered

    wanted = {"call_key": pa.array(keys, pa.string())}
    narrow = ""
    if subjects is not None:
        wanted["subject_id"] = pa.array(subjects, pa.string())
        narrow = "AND subject_id IN (SELECT subject_id FROM wanted_keys)"
    with registered(con, "wanted_keys", pa.table(wanted)):
        rows = con.execute(
            f"""SELECT call_key FROM calls WHERE call_key IN (SELECT call_key FROM wanted_keys) {narrow}
                AND status IN ('ok', 'invalid', 'refusal')"""
        ).fetchall()
    return {r[0] for r in rows}


Rows = list[dict[str, Any]] | dict[str, list[object]]  # row dicts, or columns (name -> values)


def n_rows(rows: Rows) -> int:
    return len(rows["call_key"]) if isinstance(rows, dict) else len(rows)


def write_batch(
    con: Connection,
    run_id: str,
    calls: Rows,
    judgments: Rows,
    cached_keys: list[str],
    pairwise: bool,
) -> None:
    """One transaction: calls, their judgment rows, and the run's membership rows.

    ``calls`` and ``judgments`` are row dicts or columns; the engine buffers columns, which
    become Arrow arrays without a per-row conversion.

    The tables carry no key index (migration m010: it would hold memory for every call ever
    stored), so the write keeps them unique itself: one scan finds which of the batch's call
    keys are stored already. Two runs may answer the same call key (two service jobs over the
    same subjects, or two processes one after the other): the first answer is kept, a new
    attempt (answer or error) replaces an earlier error, and judgment rows are written only
    with the call row they belong to, so every call and judgment is stored once. A run's
    membership rows are written once per (run, call)."""
    from jurybench.store import transaction

    call_keys = calls["call_key"] if isinstance(calls, dict) else [c["call_key"] for c in calls]
    keys = [*call_keys, *cached_keys]
    with transaction(con):
        write_calls(con, calls, judgments, pairwise)
        write_members(con, [run_id] * len(keys), keys)


def _arrow(rows: Rows, columns: list[tuple[str, str]]) -> pa.Table:
    import pyarrow as pa

    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in columns])
    if isinstance(rows, dict):
        return pa.table([pa.array(rows[name], type=schema.field(name).type) for name, _ in columns], schema=schema)
    return pa.Table.from_pylist(rows, schema=schema)


def write_calls(con: Connection, calls: Rows, judgments: Rows, pairwise: bool) -> None:
    """Calls and their judgment rows, each stored once (see :func:`write_batch`); in the
    caller's transaction."""
    import pyarrow as pa

    from jurybench.store import registered

    if not n_rows(calls):
        return
    subject, dim = ("pair_id", "category") if pairwise else ("item_id", "criterion")
    target = "pairwise_judgments" if pairwise else "pointwise_judgments"
    order_col = "presented_order, " if pairwise else ""
    extra = "" if pairwise else ", label, raw_value, shown_position"  # pointwise-only columns
    names = ", ".join(name for name, _ in CALL_COLUMNS)
    call_keys = calls["call_key"] if isinstance(calls, dict) else [c["call_key"] for c in calls]
    with contextlib.ExitStack() as stack:

        def register(name: str, data: object) -> None:
            stack.enter_context(registered(con, name, data))

        register("_jb_new_calls", _arrow(calls, CALL_COLUMNS))
        # The batch's keys already stored, and whether as an error: one scan of calls; the
        # usual answer is none, and then the inserts below need no filter.
        stored = dict(
            con.execute(
                "SELECT call_key, bool_and(status = 'error') FROM calls "
                "WHERE subject_id IN (SELECT subject_id FROM _jb_new_calls) "  # skips row groups (done_call_keys)
                "AND call_key IN (SELECT call_key FROM _jb_new_calls) GROUP BY call_key"
            ).fetchall()
        )
        superseded = [k for k, failed in stored.items() if failed]  # every stored key is in the batch
        if superseded:  # the new attempt replaces an earlier error (and whatever rows it had)
            register("_jb_superseded", pa.table({"call_key": pa.array(superseded, pa.string())}))
            for table_name in ("pointwise_judgments", "pairwise_judgments", "calls"):
                con.execute(f"DELETE FROM {table_name} WHERE call_key IN (SELECT call_key FROM _jb_superseded)")
            for k in superseded:
                del stored[k]
        fresh = [k for k in dict.fromkeys(call_keys) if k not in stored]
        if not fresh:
            return
        repeated = len(fresh) < len(call_keys)  # keys stored already, or named twice in the batch
        keep = ""
        if repeated:
            register("_jb_fresh", pa.table({"call_key": pa.array(fresh, pa.string())}))
            keep = "WHERE call_key IN (SELECT call_key FROM _jb_fresh)"
        once = "QUALIFY row_number() OVER (PARTITION BY call_key) = 1" if repeated else ""
        con.execute(f"INSERT INTO calls ({names}) SELECT {names} FROM _jb_new_calls {keep} {once}")
        if n_rows(judgments):
            register("_jb_new_judgments", _arrow(judgments, JUDGMENT_COLUMNS))
            once = "QUALIFY row_number() OVER (PARTITION BY call_key, dimension) = 1" if repeated else ""
            con.execute(
                f"""INSERT INTO {target}
                    (call_key, rubric_hash, juror_key, {subject}, {order_col}sample_index,
                     {dim}, score, status, reason, rationale, expected, distribution{extra})
                    SELECT call_key, rubric_hash, juror_key, subject_id, {order_col}sample_index,
                           dimension, score, status, reason, rationale, expected, distribution{extra}
                    FROM _jb_new_judgments
                    {keep} {once}"""
            )


def write_members(con: Connection, run_ids: list[str], keys: list[str]) -> None:
    """Membership rows (run, call), each once; in the caller's transaction. The stored members
    are found by a semi-join on the batch's keys, so no hash table over every member of a
    run is built."""
    import pyarrow as pa

    from jurybench.store import registered

    pairs = list(dict.fromkeys(zip(run_ids, keys, strict=True)))
    if not pairs:
        return
    members = pa.table(
        {
            "run_id": pa.array([r for r, _ in pairs], pa.string()),
            "call_key": pa.array([k for _, k in pairs], pa.string()),
        }
    )
    with registered(con, "_jb_members", members):
        con.execute(
            """INSERT INTO run_calls SELECT run_id, call_key FROM _jb_members
               ANTI JOIN (SELECT run_id, call_key FROM run_calls
                          WHERE call_key IN (SELECT call_key FROM _jb_members)) USING (run_id, call_key)"""
        )


def record_run(con: Connection, run_id: str, juror_name: str, source: str) -> int:
    """Copy a juror's raw answers in a run into ``recordings`` under ``source``."""
    from jurybench.errors import JurybenchError
    from jurybench.store import scalar

    found = scalar(
        con,
        """SELECT count(*) FROM run_calls rc JOIN calls c USING (call_key) JOIN jurors j USING (juror_key)
           WHERE rc.run_id = ? AND j.name = ? AND c.response_text IS NOT NULL""",
        [run_id, juror_name],
    )
    if not found:
        raise JurybenchError(
            f"run '{run_id}' has no answers from a juror named '{juror_name}'.",
            hint="See 'jurybench sql \"SELECT DISTINCT run_id, juror FROM run_summary\"'.",
        )
    con.execute(
        """INSERT OR REPLACE INTO recordings
           SELECT ?, c.subject_id, coalesce(c.presented_order, ''), c.sample_index,
                  c.response_text, c.finish_reason
           FROM run_calls rc JOIN calls c USING (call_key) JOIN jurors j USING (juror_key)
           WHERE rc.run_id = ? AND j.name = ? AND c.response_text IS NOT NULL""",
        [source, run_id, juror_name],
    ).fetchall()
    return int(found)
