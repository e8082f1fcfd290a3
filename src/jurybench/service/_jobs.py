"""Scoring jobs: validated on submission, run by a pool of worker threads with the judge engine.

A job is one run of the engine (``run_id = job-<id>``) on the service's connection. Its
request is stored (table ``jobs``) without secrets; progress is counted as calls finish.
Cancelling stops the engine between calls (answers so far stay stored). Stopping the
server stops running jobs the same way and leaves them queued: on the next start they run
again and every call already answered comes from the store, so nothing is repeated.
A juror's inline ``api_key`` lives only in memory: a job that needs it after a restart
fails with a message saying to submit it again (keys from the environment need nothing).
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from jurybench.engine import CostTally
from jurybench.errors import JurybenchError, NotFound
from jurybench.redact import redact

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Future
    from pathlib import Path

    from duckdb import DuckDBPyConnection as Connection

    from jurybench.engine import JobsOnRay, RunEnd
    from jurybench.service._store import Store

log = logging.getLogger("jurybench.service")
FINAL = ("finished", "finished_with_errors", "failed", "cancelled", "stopped_budget")


class _Status(Protocol):
    @property
    def status(self) -> str: ...


_Ended = TypeVar("_Ended", bound=_Status)  # what a job's run gives back: a run's result, an alignment


class Conflict(JurybenchError):
    pass


@dataclass
class Live:
    """What a running job has done so far (in memory; written to the jobs table when it ends)."""

    stop: threading.Event = field(default_factory=threading.Event)
    cancel: bool = False
    counts: Counter[str] = field(default_factory=Counter)
    cost: CostTally = field(default_factory=CostTally)
    n_tasks: int | None = None
    n_cached: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on_call(self, call: dict[str, Any]) -> None:
        with self.lock:
            self.counts[call["status"]] += 1
            if not call.get("shared"):
                self.cost.add(str(call.get("juror") or ""), call.get("cost_usd"), call["status"])

    def on_plan(self, n_tasks: int, n_cached: int) -> None:
        self.n_tasks, self.n_cached = n_tasks, n_cached

    def progress(self) -> dict[str, object]:
        with self.lock:
            c = dict(self.counts)
            cost = self.cost.as_dict()
        done = self.n_cached + c.get("ok", 0) + c.get("invalid", 0) + c.get("refusal", 0)
        return {
            "n_tasks": self.n_tasks,
            "n_done": done,
            "n_invalid": c.get("invalid", 0),
            "n_refusal": c.get("refusal", 0),
            "n_failed": c.get("error", 0),
            **cost,
        }


def strip_secrets(request: dict[str, object]) -> dict[str, object]:
    """A job request as stored and served: the jury without any credential (key-like entries,
    headers; juror strings are mappings without credentials by then) and every text redacted."""
    from jurybench.jurors import is_secret_param
    from jurybench.redact import redact_value

    def clean(value: object) -> object:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if not is_secret_param(str(k))}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return redact_value(value)

    out: dict[str, object] = redact_value({k: v for k, v in request.items() if k != "jury"})
    if "jury" in request:
        out["jury"] = clean(request["jury"])
    return out


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass
class JobWrite:
    """A checked job submission, written by the group writer with the others of its group."""

    request: dict[str, object]
    rubric: Any
    ids: list[str] | None
    where: str | None
    # Every subject sent inline: imported in the same commit, just before the job's row, so all
    # of ``ids`` are stored and need not be counted in the store.
    inline: bool = False


def count_subjects(cur: Connection, rubric: Any, ids: list[str] | None, where: str | None) -> int:
    """How many subjects a job selects: by id in SQL, or through the engine's own selection
    (the sandboxed predicate) when there is a where."""
    from jurybench.rubric import subject_ids
    from jurybench.store import registered

    if where or not ids:
        return len(subject_ids(cur, rubric, where, ids))
    import pyarrow as pa

    table, key = rubric.subject_table, rubric.subject_column
    with registered(cur, "wanted_subjects", pa.table({"id": ids})):
        found = cur.execute(f"SELECT count(*) FROM {table} t JOIN wanted_subjects w ON t.{key} = w.id").fetchall()
    return int(found[0][0])


def _declared_run(request: dict[str, object]) -> dict[str, Any]:
    """A stored job request as the arguments of ``jurybench.score`` its HTTP face declares (a
    field an older request lacks takes the declared default); the engine's under "engine".
    The subjects (where, ids) and samples were read into the job already (``build_job``)."""
    import inspect

    from jurybench.api import engine_options, score
    from jurybench.declare import from_face, parameters_of

    values = from_face(parameters_of(score), "http", request)
    for name in ("where", "samples"):
        values.pop(name, None)
    engine = set(inspect.signature(engine_options).parameters)
    values["engine"] = {name: values.pop(name) for name in list(values) if name in engine}
    return values


class JobManager:
    def __init__(
        self,
        store: Store,
        *,
        workers: int = 2,
        end_run: Callable[[RunEnd], None] | None = None,
        commit_later: Callable[[Callable[[Connection], None]], Future[object]] | None = None,
        calibration_dir: Path | None = None,
        ray: JobsOnRay | None = None,
    ) -> None:
        """``end_run`` commits a job's last answers and status (the app's group writer);
        without it each job writes its own. ``commit_later``: the same writer, not waited for (a
        job's worker marks it running or ended and goes on; the change shows in polls once
        committed). ``calibration_dir``: where named calibrations are.
        ``ray``: every scoring job's calls spread over Ray workers (``serve --executor ray``;
        None: the calls are made in this process)."""
        self.store = store
        self.ray = ray
        self.calibration_dir = calibration_dir
        self.end_run = end_run
        self.commit_later = commit_later
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.live: dict[str, Live] = {}
        # job -> each juror's credentials (api_key, headers), memory only
        self.secrets: dict[str, list[dict[str, object] | None]] = {}
        self.threads = [
            threading.Thread(target=self._worker, name=f"job-worker-{i}", daemon=True) for i in range(max(1, workers))
        ]
        self.closing = False
        # Submissions being handled: a worker waits for them (up to ADMIT_WAIT_S) before it
        # starts its next job, so accepting a job is never queued behind starting others.
        self.admitting = 0
        self.admit_lock = threading.Condition()
        self.rows: dict[str, tuple[Any, ...]] = {}  # job id -> its row, as stored (see known())
        self.rows_lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> list[str]:
        """Start the workers and queue every unfinished job again (oldest first)."""
        with self.store.writing() as cur:
            cur.execute("UPDATE jobs SET status = 'queued' WHERE status = 'running'")
            pending = [
                r[0]
                for r in cur.execute(
                    "SELECT job_id FROM jobs WHERE status = 'queued' ORDER BY created_at, job_id"
                ).fetchall()
            ]
        for job_id in pending:
            self.live[job_id] = Live()
            self.queue.put(job_id)
        for thread in self.threads:
            thread.start()
        return pending

    def shutdown(self, timeout_s: float = 30.0) -> None:
        """Stop running jobs between calls (they stay queued and resume on the next start)."""
        self.closing = True
        for live in list(self.live.values()):
            live.stop.set()
        for _ in self.threads:
            self.queue.put(None)
        for thread in self.threads:
            thread.join(timeout_s)

    # -- API -------------------------------------------------------------------------------
    COLUMNS = """job_id, status, run_id, request, created_at, started_at, finished_at, error, n_tasks, n_done,
                 n_invalid, n_refusal, n_failed, cost_usd, n_cost_unknown, cost_by_juror, notes"""
    NAMES = tuple(name.strip() for name in COLUMNS.split(","))
    KNOWN_MAX = 10_000  # job rows kept in memory for polls (older ones are read from the store)
    _defaults: tuple[Any, ...] | None = None  # a new job row's columns after the five it is given

    @classmethod
    def insert_many(cls, cur: Connection, writes: list[JobWrite]) -> list[tuple[Any, ...]]:
        """Job rows for a group of submissions in a few statements: subjects counted for all the
        id-selected jobs in one query, every row inserted at once (a job selecting nothing fails
        the group, which the group writer then runs one by one so only that job fails)."""
        import pyarrow as pa

        from jurybench.store import registered

        counts: dict[int, int] = {}
        by_table: dict[tuple[str, str], list[tuple[int, str]]] = {}
        for n, write in enumerate(writes):
            if write.where or not write.ids:
                counts[n] = count_subjects(cur, write.rubric, write.ids, write.where)
                continue
            if write.inline:
                counts[n] = len(write.ids)  # distinct (subject_predicate)
                continue
            target = (write.rubric.subject_table, write.rubric.subject_column)
            by_table.setdefault(target, []).extend((n, i) for i in write.ids)
        for (table, key), wanted in by_table.items():
            frame = pa.table({"job": [n for n, _ in wanted], "id": [i for _, i in wanted]})
            with registered(cur, "wanted_subjects", frame):
                found = dict(
                    cur.execute(
                        f"SELECT w.job, count(t.{key}) FROM wanted_subjects w "
                        f"LEFT JOIN {table} t ON t.{key} = w.id GROUP BY w.job"
                    ).fetchall()
                )
            counts.update({n: int(found.get(n, 0)) for n, _ in wanted})
        for n, write in enumerate(writes):
            if counts[n] == 0:
                kind = write.rubric.subject_table
                raise JurybenchError(
                    f"no {kind} to judge{f' where {write.where}' if write.where else ''}.",
                    hint=f"Upload {kind} (POST /v1/{kind}) or send them inline.",
                )
        created = _now()
        rows = []
        for n, write in enumerate(writes):
            job_id = uuid.uuid4().hex[:16]
            request = json.dumps(strip_secrets({**write.request, "_n_subjects": counts[n]}))
            rows.append((job_id, "queued", f"job-{job_id}", request, created))
        cur.executemany("INSERT INTO jobs (job_id, status, run_id, request, created_at) VALUES (?, ?, ?, ?, ?)", rows)
        # The other columns hold the table's defaults, the same for every new job: read once a process.
        if cls._defaults is None:
            cls._defaults = tuple(
                cur.execute(f"SELECT {cls.COLUMNS} FROM jobs WHERE job_id = ?", [rows[0][0]]).fetchall()[0][5:]
            )
        return [(*row, *cls._defaults) for row in rows]

    def submit_alignment(self, request: dict[str, object]) -> dict[str, object]:
        """Queue an alignment (``jurybench align``) as a job of its own kind."""
        job_id = uuid.uuid4().hex[:16]
        stored = json.dumps(strip_secrets({"kind": "align", **request}))
        with self.store.writing() as cur:
            cur.execute(
                "INSERT INTO jobs (job_id, status, run_id, request, created_at) VALUES (?, 'queued', ?, ?, ?)",
                [job_id, f"align-job-{job_id}", stored, _now()],
            )
            row = cur.execute(f"SELECT {self.COLUMNS} FROM jobs WHERE job_id = ?", [job_id]).fetchall()[0]
        return self.enqueue(tuple(row), [])

    def _run_alignment(self, job_id: str, request: dict[str, Any], live: Live) -> None:
        """An alignment job: ``jurybench.align`` with the engine's hooks, its verdict in the notes."""
        from jurybench.api import align

        self._started(job_id)
        arguments = {k: v for k, v in request.items() if k != "kind"}
        hooks: dict[str, object] = {"on_call": live.on_call, "on_plan": live.on_plan, "stop": live.stop.is_set}
        hooks["store_lock"] = self.store.write_lock
        spread: dict[str, Any] = {}
        if self.ray is not None:  # serve --executor ray: its calls made by the slot's workers, as a scoring job's
            spread = dict(self.ray.options())
        result = self._ended(job_id, live, lambda cur: align(cur, **arguments, **spread, hooks=hooks))
        if result is None:
            return
        notes = [f"alignment {result.alignment_id}: {result.verdict}", *result.notes]
        error = None
        if result.status == "stopped_budget":
            error = "budget reached before every variant was judged: nothing was kept"
        self._finish(job_id, result.status, error, live, notes=notes)

    def enqueue(self, row: tuple[Any, ...], secrets: list[dict[str, Any] | None]) -> dict[str, object]:
        """Queue a committed job (its row from :meth:`insert_many`) and return it as the API shows it."""
        job_id = str(row[0])
        if any(secrets):
            self.secrets[job_id] = secrets
        self.live[job_id] = Live()
        self._remember(row)
        self.queue.put(job_id)
        return self._row(row)

    def known(self, job_id: str) -> dict[str, object] | None:
        """A job this server has inserted, run or read, from memory (the store holds the same:
        every change to a job goes through this manager); None for others."""
        row = self.rows.get(job_id)
        return None if row is None else self._row(row)

    def _remember(self, row: tuple[object, ...]) -> None:
        with self.rows_lock:
            self.rows[str(row[0])] = row
            while len(self.rows) > self.KNOWN_MAX:
                self.rows.pop(next(iter(self.rows)))

    def _write(self, write: Callable[[Connection], None], *, wait: bool = True) -> None:
        """A change to the jobs table, committed by the group writer with the other writes waiting
        (jobs that start or end together share a commit), or at once without one. Not ``wait``:
        handed to the group writer, which commits it in order with what follows (a job's worker
        goes on to its run, or to the next job, meanwhile; an error is logged)."""
        if not wait and self.commit_later is not None:
            self.commit_later(write).add_done_callback(_log_failed_write)
            return
        if self.end_run is not None:
            self.end_run(write)  # type: ignore[arg-type]  # the group writer takes any write(cursor)
            return
        with self.store.writing() as cur:
            write(cur)

    def _started(self, job_id: str) -> None:
        started = _now()

        def write(cur: Connection) -> None:
            cur.execute("UPDATE jobs SET status = 'running', started_at = ? WHERE job_id = ?", [started, job_id])
            self._patch(cur, job_id, status="running", started_at=started)

        self._write(write, wait=False)

    def _patch(self, cur: Connection, job_id: str, **changes: object) -> None:
        """After a change of a job's status (in ``cur``'s transaction, ``changes`` the values it
        set): the remembered row with them, or the row read again if it is not remembered. A read
        fewer a job under the store's one write lock, which is what a server's jobs wait for."""
        with self.rows_lock:
            row = self.rows.get(job_id)
        if row is None:
            self._reload(cur, job_id)
            return
        patched = list(row)
        for name, value in changes.items():
            patched[self.NAMES.index(name)] = value
        self._remember(tuple(patched))

    def _reload(self, cur: Connection, job_id: str) -> None:
        """After a change to a job's row (in ``cur``'s transaction): the row as stored."""
        found = cur.execute(f"SELECT {self.COLUMNS} FROM jobs WHERE job_id = ?", [job_id]).fetchall()
        if found:
            self._remember(tuple(found[0]))

    def cancel(self, job_id: str) -> dict[str, object]:
        job = self.get(job_id)
        if job["status"] in FINAL:
            raise Conflict(f"job {job_id} has already ended ({job['status']}).")
        live = self.live.get(job_id)
        if live is not None:
            live.cancel = True
            live.stop.set()
        if job["status"] == "queued":
            self._finish(job_id, "cancelled", None, live, wait=True)
        return self.get(job_id)

    def get(self, job_id: str) -> dict[str, object]:
        known = self.known(job_id)
        if known is not None:
            return known
        with self.store.cursor() as cur:
            row = cur.execute(f"SELECT {self.COLUMNS} FROM jobs WHERE job_id = ?", [job_id]).fetchall()
        if not row:
            raise NotFound(f"no job {job_id!r}.")
        return self._row(row[0])

    def list(self, *, status: str | None, limit: int, offset: int) -> list[dict[str, object]]:
        sql = f"SELECT {self.COLUMNS} FROM jobs"
        params: list[object] = []
        if status:
            sql += " WHERE status = ?"
            params.append(status)
        sql += " ORDER BY created_at DESC, job_id LIMIT ? OFFSET ?"
        with self.store.cursor() as cur:
            rows = cur.execute(sql, [*params, limit, offset]).fetchall()
        return [self._row(r) for r in rows]

    def _row(self, r: tuple[Any, ...]) -> dict[str, object]:
        stored = json.loads(r[3])
        request = strip_secrets({k: v for k, v in stored.items() if not k.startswith("_")})
        job = {
            "job_id": r[0],
            "status": r[1],
            "run_id": r[2],
            "request": request,
            "n_subjects": stored.get("_n_subjects"),
            "created_at": _iso(r[4]),
            "started_at": _iso(r[5]),
            "finished_at": _iso(r[6]),
            "error": redact(r[7]) if r[7] else r[7],
            "notes": json.loads(r[16]) if len(r) > 16 and r[16] else [],
            "progress": {
                "n_tasks": r[8],
                "n_done": r[9],
                "n_invalid": r[10],
                "n_refusal": r[11],
                "n_failed": r[12],
                "cost_usd": r[13],
                "n_cost_unknown": r[14] or 0,
                "cost_by_juror": json.loads(r[15]) if r[15] else {},
            },
        }
        live = self.live.get(r[0])
        if live is not None and r[1] == "running":
            job["progress"] = live.progress()
        return job

    # -- running ---------------------------------------------------------------------------
    ADMIT_WAIT_S = 2.0

    @contextlib.contextmanager
    def admitting_one(self) -> Iterator[None]:
        """Around a submission: workers let it go first."""
        with self.admit_lock:
            self.admitting += 1
        try:
            yield
        finally:
            with self.admit_lock:
                self.admitting -= 1
                self.admit_lock.notify_all()

    def _worker(self) -> None:
        if self.ray is None:
            self._take_jobs()
            return
        from jurybench.engine import keep_workers

        # On Ray, consecutive jobs of one jury share this slot's workers (each job's rubric handed to
        # them); a job of another stops them before it starts its own, so a slot never holds more
        # than one job's.
        with keep_workers(most=1):
            self._take_jobs()

    def _take_jobs(self) -> None:
        while True:
            job_id = self.queue.get()
            if job_id is None:
                return
            with self.admit_lock:
                self.admit_lock.wait_for(lambda: self.admitting == 0 or self.closing, timeout=self.ADMIT_WAIT_S)
            try:
                self._run(job_id)
            except Exception:  # a bug must not kill the worker; the job says so
                log.exception("job %s failed", job_id)
                self._finish(job_id, "failed", "internal error while running the job (see the server log)", None)

    def _run(self, job_id: str) -> None:
        from jurybench.api import engine_options, score
        from jurybench.service._requests import build_job

        with self.store.cursor() as cur:
            row = cur.execute("SELECT status, request, run_id FROM jobs WHERE job_id = ?", [job_id]).fetchall()
        if not row or row[0][0] != "queued" or self.closing:
            return
        live = self.live.setdefault(job_id, Live())
        request, run_id = json.loads(row[0][1]), row[0][2]
        if request.get("kind") == "align":
            self._run_alignment(job_id, request, live)
            return
        try:
            rubric, jury, where, ids = build_job(request, self.secrets.get(job_id), self.calibration_dir)
        except JurybenchError as exc:
            self._finish(job_id, "failed", str(exc), live)
            return
        self._started(job_id)
        declared = _declared_run(request)
        engine = declared.pop("engine")
        # On Ray, a job's calls are made by the workers; a provider batch job makes none (it sends files).
        spread = (
            self.ray.options()
            if self.ray is not None and not engine.get("batch")
            else {"executor": "local", "address": None, "workers": None}
        )
        options = engine_options(
            on_call=live.on_call,
            on_plan=live.on_plan,
            stop=live.stop.is_set,
            store_lock=self.store.write_lock,
            end_run=self.end_run,
            **spread,
            **engine,
        )
        done = self._ended(
            job_id,
            live,
            lambda cur: score(
                cur, rubric=rubric, jury=jury, where=where, run=run_id, options=options, ids=ids, **declared
            ),
        )
        if done is None:
            return
        result = done.result
        error = "; ".join(result.error_report()[:3]) or None
        if result.status == "stopped_budget" and result.budget is not None:
            left = result.n_tasks - result.n_cached - result.n_called
            from jurybench.jurors import usd

            error = (
                f"budget reached: the run spent {usd(result.budget.spent)} of {usd(result.budget.max_cost)}; "
                f"{left} calls were not made. Submit the job again with a higher max_cost to go on."
            )
        with live.lock:  # the engine's own totals: calls never made (an unusable juror) count as failed
            live.counts["error"] = result.n_errors + result.n_skipped
            live.n_tasks, live.n_cached = result.n_tasks, result.n_cached
        notes = list(result.notes)
        if result.cluster is not None:  # serve --executor ray: where the calls were made
            c = result.cluster
            notes.append(
                f"calls made by {c['workers']} Ray worker(s) on {c['nodes']} node(s)"
                + (
                    f", kept from earlier jobs (run {c['runs_on_these_workers']} on them)"
                    if c["runs_on_these_workers"] > 1
                    else ""
                )
            )
        if done.stopping is not None:  # sequential judging: what it saw, in a line (runs.stopping has every look)
            s = done.stopping
            notes.append(
                f"until {s['rule']}: {s['stopped']} after {s['judged']} of {s['subjects_available']} "
                "subjects (runs.stopping has every look)"
            )
        self._finish(job_id, result.status, error, live, notes=notes)

    def _ended(self, job_id: str, live: Live, run: Callable[[Connection], _Ended]) -> _Ended | None:
        """``run`` on a cursor of the store; None when the job ended there (failed: one line; or
        interrupted, see :meth:`_interrupted`), else what it returned."""
        try:
            with self.store.cursor() as cur:
                result = run(cur)
        except JurybenchError as exc:
            self._finish(job_id, "failed", str(exc), live)
            return None
        if result.status == "interrupted":
            self._interrupted(job_id, live)
            return None
        return result

    def _interrupted(self, job_id: str, live: Live) -> None:
        """A job stopped between calls: cancelled, or (the server stopping) queued to run again on
        the next start, reusing the answers it was given."""
        if live.cancel:
            self._finish(job_id, "cancelled", None, live)
            return

        def write(cur: Connection) -> None:
            cur.execute("UPDATE jobs SET status = 'queued' WHERE job_id = ?", [job_id])
            self._patch(cur, job_id, status="queued")

        self._write(write, wait=False)  # after its 'running', in the group writer's order

    def _finish(
        self,
        job_id: str,
        status: str,
        error: str | None,
        live: Live | None,
        notes: Sequence[str] | None = None,
        *,
        wait: bool = False,
    ) -> None:
        """A job ended: its row's last change, committed by the group writer (waited for if
        ``wait``: a cancel answered with the job's row)."""
        progress = live.progress() if live else {}
        error = redact(error) if error else error
        finished = _now()
        # None keeps what the row holds (coalesce), in the store and in the row kept for polls.
        kept = {
            "n_tasks": progress.get("n_tasks"),
            "n_done": progress.get("n_done"),
            "n_invalid": progress.get("n_invalid"),
            "n_refusal": progress.get("n_refusal"),
            "n_failed": progress.get("n_failed"),
            "cost_usd": progress.get("cost_usd"),
            "n_cost_unknown": progress.get("n_cost_unknown"),
            "cost_by_juror": json.dumps(progress["cost_by_juror"]) if "cost_by_juror" in progress else None,
            "notes": json.dumps([redact(n) for n in notes]) if notes else None,
        }

        def write(cur: Connection) -> None:
            cur.execute(
                f"""UPDATE jobs SET status = ?, error = ?, finished_at = ?,
                           {", ".join(f"{name} = coalesce(?, {name})" for name in kept)}
                    WHERE job_id = ?""",
                [status, error, finished, *kept.values(), job_id],
            )
            self._patch(
                cur,
                job_id,
                status=status,
                error=error,
                finished_at=finished,
                **{name: value for name, value in kept.items() if value is not None},
            )

        self._write(write, wait=wait)
        self.secrets.pop(job_id, None)


def _log_failed_write(done: Future[object]) -> None:
    """A job's change the group writer could not commit (not waited for): said in the log."""
    error = done.exception()
    if error is not None:
        log.error("a job's change could not be written: %s", redact(str(error)))


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
