"""Writing a run's answers: the store held for the run (a connection) or released between
flushes (a path, so other processes can read), and the buffer of calls and judgments."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from jurybench.engine._plan import Task
from jurybench.engine._records import CALL_COLUMNS, JUDGMENT_COLUMNS, write_batch, write_calls, write_members
from jurybench.rubric import (
    AnyRubric,
    Outcome,
    is_pairwise,
)
from jurybench.store import StoreBusy

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from duckdb import DuckDBPyConnection as Connection


class _Held:
    """A connection the caller opened and keeps: used as it is for the whole run (under the
    caller's lock, if it gave one, while writing)."""

    def __init__(self, con: Connection, lock: AbstractContextManager[object] | None = None) -> None:
        self.con = con
        self.lock = lock

    @contextlib.contextmanager
    def open(self, wait_s: float) -> Iterator[Connection]:
        if self.lock is None:
            yield self.con
            return
        with self.lock:
            yield self.con

    @contextlib.contextmanager
    def read(self, wait_s: float) -> Iterator[Connection]:
        """The connection for reading: without the caller's write lock (DuckDB's snapshots keep
        readers and the one writer apart), so other threads' writes do not wait for a plan."""
        yield self.con

    def poll(self) -> None:
        pass

    @contextlib.contextmanager
    def uncapped(self) -> Iterator[None]:
        yield

    def close(self) -> None:
        pass


class _Released:
    """The store by path, held for the run but let go when another process asks.

    DuckDB lets one process open a file for writing and then no other process can even
    read it. A process that finds the store busy leaves a release request beside it
    (``<store>.release-request``); between flushes the engine checks for one (a stat),
    closes the file, gives the others a moment, then takes it back, with answers buffered
    meanwhile. Nobody asking costs nothing: no reopen, no extra checkpoint.
    """

    GRACE_S = 1.0

    def __init__(self, path: Path) -> None:
        self.path = path
        self.con: Connection | None = None  # the connection while the file is held, None when let go
        self.cap: str | None = None  # the memory limit the file is opened with
        self.released_at = 0.0
        from jurybench.store import release_request

        self.request = release_request(path)

    @contextlib.contextmanager
    def open(self, wait_s: float) -> Iterator[Connection]:
        from jurybench.config import duckdb_memory
        from jurybench.store import connection_config, open_with_retry

        if self.con is None:
            if time.monotonic() - self.released_at < self.GRACE_S and wait_s < self.GRACE_S:
                raise StoreBusy(f"{self.path} is lent to a reader for a moment")
            self.cap = duckdb_memory()
            self.con = open_with_retry(
                self.path,
                read_only=False,
                config=connection_config(False, self.cap),
                wait_s=wait_s,
                ask_release=False,
            )
        yield self.con

    def read(self, wait_s: float) -> AbstractContextManager[Connection]:
        return self.open(wait_s)

    @contextlib.contextmanager
    def uncapped(self) -> Iterator[None]:
        """DuckDB's own memory limit for the finishing steps, which are analysis: a capped DuckDB
        2.0 fails some large multi-join queries (duckdb/duckdb#24807). The cap comes back after
        them, since closing the file checkpoints the run's writes, and uncapped that checkpoint
        took up to 80 MB more at 30,000 items."""
        if self.con is None or self.cap is None:
            yield
            return
        self.con.execute("RESET memory_limit")
        try:
            yield
        finally:
            self.con.execute(f"SET memory_limit = '{self.cap}'")

    def poll(self) -> None:
        """Let the file go if someone asked (called between writes, never during one)."""
        if self.con is not None and self.request.exists():
            with contextlib.suppress(OSError):
                self.request.unlink()
            self.con.close()
            self.con = None
            self.released_at = time.monotonic()

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
        with contextlib.suppress(OSError):
            self.request.unlink()


Batch = tuple[dict[str, list[object]], dict[str, list[object]], list[str]]


@dataclass(frozen=True)
class RunEnd:
    """A run's last answers (a :class:`_Writer` batch) and its final status, for a writer that
    commits several runs' ends together (``EngineOptions.end_run``: the service's group writer)."""

    run_id: str
    pairwise: bool
    batch: Batch
    status: str
    finished_at: datetime


def end_runs(con: Connection, ends: list[RunEnd]) -> list[None]:
    """Several runs' last answers and statuses in the caller's transaction, in the statements
    of one: the calls of all of them in one write, their memberships in another, one update.
    Writes of concurrent runs queue for the store's one writer; committed together, the
    queue moves as many runs per commit as are waiting (``jurybench serve --workers``)."""
    import pyarrow as pa

    from jurybench.store import registered

    for pairwise in (False, True):
        group = [e for e in ends if e.pairwise == pairwise]
        if not group:
            continue
        calls = {name: [v for e in group for v in e.batch[0][name]] for name, _ in CALL_COLUMNS}
        judgments = {name: [v for e in group for v in e.batch[1][name]] for name, _ in JUDGMENT_COLUMNS}
        write_calls(con, calls, judgments, pairwise)
        members = [(e.run_id, k) for e in group for k in (*e.batch[0]["call_key"], *e.batch[2])]
        write_members(con, [r for r, _ in members], [str(k) for _, k in members])
    ended = pa.table(
        {
            "run_id": [e.run_id for e in ends],
            "status": [e.status for e in ends],
            "finished_at": pa.array([e.finished_at for e in ends], pa.timestamp("us")),
        }
    )
    with registered(con, "_jb_run_ends", ended):
        con.execute(
            "UPDATE runs SET status = e.status, finished_at = e.finished_at FROM _jb_run_ends e "
            "WHERE runs.run_id = e.run_id"
        )
    return [None] * len(ends)


def _columns(spec: list[tuple[str, str]]) -> dict[str, list[object]]:
    return {name: [] for name, _ in spec}


# A call's judgment rows as columns: what a run that made a call hands another run waiting for the
# same call when the answer came back as rows (from a Ray worker) rather than as an Outcome.
JudgmentRows = dict[str, list[object]]


@dataclass(frozen=True)
class RowKeys:
    """What every judgment row of a run repeats from its rubric."""

    rubric_hash: str
    dimensions: tuple[str, ...]

    @classmethod
    def of(cls, rubric: AnyRubric) -> RowKeys:
        return cls(rubric.content_hash, tuple(rubric.dimensions))


def append_rows(
    calls: dict[str, list[object]],
    judgments: dict[str, list[object]],
    keys: RowKeys,
    unread_expected: Counter[str],
    task: Task,
    call: dict[str, object],
    outcome: Outcome | JudgmentRows | None,
) -> None:
    """A settled call's row, and one judgment row a dimension of its outcome, onto the columns.
    ``unread_expected`` counts scores=expected jurors' valid answers that came without usable
    token probabilities."""
    for name, values in calls.items():
        values.append(call[name])
    if isinstance(outcome, dict):  # rows another run built for the same call
        for name, values in judgments.items():
            values.extend(outcome.get(name) or [])
        return
    if outcome is None:
        return
    j, dimensions = judgments, keys.dimensions
    n = len(dimensions)
    if not n:
        return
    scores = outcome.scores or {}
    j["dimension"].extend(dimensions)
    j["score"].extend(scores.get(dim) for dim in dimensions)
    found = outcome.distributions or {}
    if not found and outcome.status == "valid" and task.juror.params.get("scores") == "expected":
        unread_expected[task.juror.display_name] += 1
    if found:
        j["expected"].extend(found[dim].expected if dim in found else None for dim in dimensions)
        j["distribution"].extend(
            json.dumps(found[dim].as_json(), sort_keys=True) if dim in found else None for dim in dimensions
        )
    else:  # discrete scores only (most jurors): no lookup per dimension
        j["expected"].extend([None] * n)
        j["distribution"].extend([None] * n)
    details = outcome.details
    if details is None:
        j["status"].extend([outcome.status] * n)
        j["reason"].extend([outcome.reason] * n)
        for name in ("label", "raw_value", "shown_position"):
            j[name].extend([None] * n)
    else:
        for dim in dimensions:
            d = details[dim]
            j["status"].append(d.status)
            j["reason"].append(d.reason)
            j["label"].append(d.label)
            j["raw_value"].append(d.raw)
            j["shown_position"].append(d.position)
    for name, value in (
        ("call_key", task.call_key),
        ("rubric_hash", keys.rubric_hash),
        ("juror_key", task.juror.key),
        ("subject_id", task.subject_id),
        ("presented_order", task.order or None),
        ("sample_index", task.sample_index),
        ("rationale", outcome.rationale),
    ):
        j[name].extend([value] * n)


def journal_line(call: dict[str, object], judgments: dict[str, list[object]]) -> str:
    """A call's line in a run's journal (:class:`_Journal`)."""
    return json.dumps({"call": call, "judgments": judgments}, default=str) + "\n"


class Rows:
    """Settled calls as the store's columns, with their journal lines: what a Ray worker hands
    back (built where the calls were made, so the driver only appends them: :meth:`_Writer.extend`)."""

    def __init__(self, keys: RowKeys, journaled: bool) -> None:
        self.keys = keys
        self.calls = _columns(CALL_COLUMNS)
        self.judgments = _columns(JUDGMENT_COLUMNS)
        self.unread_expected: Counter[str] = Counter()
        self.lines: list[str] | None = [] if journaled else None
        self.spans: list[tuple[int, int]] = []  # each call's judgment rows: [start, end)

    def add(self, task: Task, call: dict[str, object], outcome: Outcome | None) -> None:
        before = len(self.judgments["call_key"])
        append_rows(self.calls, self.judgments, self.keys, self.unread_expected, task, call, outcome)
        after = len(self.judgments["call_key"])
        self.spans.append((before, after))
        if self.lines is not None:
            self.lines.append(
                journal_line(
                    {name: call[name] for name in self.calls},
                    {name: values[before:after] for name, values in self.judgments.items()},
                )
            )

    def row(self, position: int) -> tuple[dict[str, object], JudgmentRows]:
        """The ``position``-th call's row and its judgment rows."""
        start, end = self.spans[position]
        call = {name: values[position] for name, values in self.calls.items()}
        return call, {name: values[start:end] for name, values in self.judgments.items()}


class _Journal:
    """Answers between their arrival and the flush that stores them, in a file beside the store
    (``<store>.journal/<run>.jsonl``): one line a call, so a kill -9 loses none of what was paid
    for (the operating system keeps a dead process's writes). The lines of the answers recorded
    in one pass of the event loop go in one unbuffered append, made as the next pass begins,
    before the loop reads more input (one write a pass, not one a call; outside a loop, at
    once). The next run of the same name stores them before it plans, so they are never asked
    again; each successful flush empties the file, the run's end removes it."""

    def __init__(self, store: Path, run_id: str) -> None:
        import hashlib

        folder = store.with_name(store.name + ".journal")
        self.path = folder / f"{hashlib.sha256(run_id.encode()).hexdigest()[:24]}.jsonl"
        self.fd: int | None = None
        self.dirty = False
        self.lines: list[str] = []  # recorded in this pass of the loop, not yet written

    def append(self, call: dict[str, object], judgments: dict[str, list[object]]) -> None:
        self.extend([journal_line(call, judgments)])

    def extend(self, lines: list[str]) -> None:
        """Lines to append (:func:`journal_line`), written with the others of this pass."""
        asked = bool(self.lines)
        self.lines.extend(lines)
        if asked:
            return  # the write of this pass is already asked for
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.write()
        else:
            loop.call_soon(self.write)

    def write(self) -> None:
        """The lines recorded so far, in one append."""
        if not self.lines:
            return
        if self.fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        data, self.lines = "".join(self.lines).encode(), []
        os.write(self.fd, data)
        self.dirty = True

    def clear(self) -> None:
        """Everything journaled is in the store now (lines not yet written included)."""
        self.lines = []
        if self.dirty and self.fd is not None:
            os.ftruncate(self.fd, 0)
            self.dirty = False

    def pending(self) -> tuple[list[dict[str, object]], dict[str, list[object]]]:
        """The calls and judgment rows a killed run left here (a torn last line is skipped)."""
        import json

        calls: list[dict[str, object]] = []
        judgments = _columns(JUDGMENT_COLUMNS)
        if not self.path.exists():
            return calls, judgments
        for raw in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(raw)
                call, rows = entry["call"], entry["judgments"]
                if not isinstance(call, dict) or not isinstance(rows, dict):
                    continue
            except (ValueError, KeyError, TypeError):
                continue
            calls.append(call)
            for name, values in judgments.items():
                values.extend(rows.get(name) or [])
        return calls, judgments

    def remove(self) -> None:
        self.lines = []
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            self.path.parent.rmdir()  # only when no other run's journal is there


def replay_journal(access: _Released, run_id: str, pairwise: bool) -> int:
    """Store the answers a killed run of this name had received but not flushed; how many."""
    from jurybench.engine._records import write_batch

    journal = _Journal(access.path, run_id)
    calls, judgments = journal.pending()
    if calls:
        rows = _columns(CALL_COLUMNS)
        for call in calls:
            for name, values in rows.items():
                values.append(call.get(name))
        from jurybench.config import lock_wait_s

        with access.open(wait_s=lock_wait_s()) as con:
            write_batch(con, run_id, rows, judgments, [], pairwise)  # one transaction
    journal.remove()
    return len(calls)


class _Writer:
    """Buffers results as columns and writes them in batched transactions.

    With a store opened by path, a flush that finds the file lent to a reader puts its
    rows back and tries again at the next flush; the last flush waits.
    """

    def __init__(
        self, access: _Held | _Released, run_id: str, rubric: AnyRubric, batch: int = 1000, every_s: float = 1.0
    ) -> None:
        self.access = access
        self.run_id = run_id
        self.rubric = RowKeys.of(rubric)
        self.pairwise = is_pairwise(rubric)
        self.batch = batch
        self.every_s = every_s
        self.calls = _columns(CALL_COLUMNS)
        self.judgments = _columns(JUDGMENT_COLUMNS)
        self.cached: list[str] = []
        # scores=expected jurors' valid answers that came without usable token probabilities
        self.unread_expected: Counter[str] = Counter()
        # Answers not yet flushed are journaled beside a store opened by path (kill -9 safe).
        self.journal = _Journal(access.path, run_id) if isinstance(access, _Released) else None

    @property
    def n_calls(self) -> int:
        return len(self.calls["call_key"])

    def add(self, task: Task, call: dict[str, object], outcome: Outcome | JudgmentRows | None) -> None:
        before = len(self.judgments["call_key"])
        append_rows(self.calls, self.judgments, self.rubric, self.unread_expected, task, call, outcome)
        if self.journal is not None:
            self.journal.append(
                {name: call[name] for name in self.calls},
                {name: values[before:] for name, values in self.judgments.items()},
            )

    def extend(self, rows: Rows) -> None:
        """Rows built elsewhere (a Ray worker's answers), journaled as they were written there."""
        for name, values in rows.calls.items():
            self.calls[name].extend(values)
        for name, values in rows.judgments.items():
            self.judgments[name].extend(values)
        self.unread_expected.update(rows.unread_expected)
        if self.journal is not None and rows.lines:
            self.journal.extend(rows.lines)

    def add_cached(self, keys: list[str]) -> None:
        self.cached.extend(keys)

    def take(self) -> Batch:
        """The buffered rows, leaving the buffer empty."""
        batch = (self.calls, self.judgments, self.cached)
        self.calls, self.judgments, self.cached = _columns(CALL_COLUMNS), _columns(JUDGMENT_COLUMNS), []
        return batch

    def put_back(self, batch: Batch) -> None:
        calls, judgments, cached = batch
        for name, values in calls.items():
            self.calls[name][:0] = values
        for name, values in judgments.items():
            self.judgments[name][:0] = values
        self.cached[:0] = cached

    def commit(self, batch: Batch, wait_s: float = 0.05) -> bool:
        """Write one batch to the store (safe on a worker thread: it touches only the store
        connection, never the buffer or the journal); False when the store was busy."""
        calls, judgments, cached = batch
        if not (calls["call_key"] or cached):
            return True
        try:
            with self.access.open(wait_s=wait_s) as con:
                write_batch(con, self.run_id, calls, judgments, cached, self.pairwise)
        except StoreBusy:
            return False
        return True

    def committed(self) -> None:
        """After :meth:`commit` returned True, on the event loop's thread: the journal may go."""
        self._stored()

    def flush(self, con: Connection) -> None:
        """Write everything buffered into an open connection (the membership of reused answers)."""
        calls, judgments, cached = self.take()
        if calls["call_key"] or cached:
            write_batch(con, self.run_id, calls, judgments, cached, self.pairwise)
            self._stored()

    def _stored(self) -> None:
        """A write committed: what the journal holds is stored unless rows wait in the buffer."""
        if self.journal is not None and not self.calls["call_key"]:
            self.journal.clear()

    def ended(self) -> None:
        """The run's last rows are committed: its journal goes."""
        if self.journal is not None:
            self.journal.remove()
