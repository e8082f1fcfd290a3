"""The scoring engine: a rubric, a jury and a set of subjects in; stored judgments out.

Work is planned as one task per (juror, subject, order, sample). Each task has a
content-addressed key; tasks whose key is already answered in the store are
reused without a call, so re-running a finished or interrupted run is free.
Answers are written in small batched transactions as they arrive, so stopping
the process loses at most the answers of the last second, never a
committed one, and Ctrl-C flushes before it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.engine._budget import Budget, CostTally, JurorPlan, make_budget, plan_costs
from jurybench.engine._calls import _execute
from jurybench.engine._load import frozen_heap
from jurybench.engine._options import EngineOptions
from jurybench.engine._plan import (
    CHUNK,
    Planned,
    Reader,
    RunDesign,
    Task,
    check_batch_jurors,
    plan_tasks,
    validate_jurors,
)
from jurybench.engine._progress import RunProgress
from jurybench.engine._records import done_call_keys, record_gold_labels, register_jurors, register_rubric
from jurybench.engine._writer import RunEnd, _Held, _Released, _Writer, end_runs, replay_journal
from jurybench.errors import JurybenchError
from jurybench.jurors import JurorPace, JurorSpec, make_backend
from jurybench.jury import Jury, as_jury, register_jury
from jurybench.rubric import (
    AnyRubric,
    refuse_single_responses,
    subject_ids,
    subject_rows,
    subject_slices,
    subject_table,
    with_conversations,
)
from jurybench.store import first_row, transaction

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.engine._ray import RayPool
    from jurybench.rubric import AnyRubric

# Exit code of ``jurybench score`` when the run ended but some calls ended in error
# (or were not made because their juror was unusable): re-running retries them.
EXIT_CALL_ERRORS = 3
EXIT_BUDGET = 4  # --max-cost reached: the run stopped before every call was made
FINAL_FLUSH_WAIT_S = 600.0


@dataclass
class RunResult:
    run_id: str
    n_tasks: int
    n_cached: int
    n_called: int
    status_counts: Counter[str] = field(default_factory=Counter)
    cost: CostTally = field(default_factory=CostTally)
    elapsed_s: float = 0.0
    interrupted: bool = False
    n_skipped: int = 0
    # display name -> one line saying why the juror is unusable and what to set
    fatal: dict[str, str] = field(default_factory=dict)
    # (juror display name, reason) -> number of calls that ended in error for it
    error_reasons: Counter[tuple[str, str]] = field(default_factory=Counter)
    status: str = "running"
    noun: str = "judgments"  # what a call produces: judgments, or responses when generating
    plan: list[JurorPlan] = field(default_factory=list)  # --plan: what the run would do and cost
    stopped_budget: bool = False  # --max-cost reached before every call was made
    budget: Budget | None = None
    # --executor ray: the workers, those lost, the calls they had in flight (given to other
    # workers: asked again) and, per capped juror, the turns its one shared rpm/tpm schedule gave
    cluster: dict[str, Any] | None = None
    # Lines worth a user's eye that are no error (e.g. scores=expected without token probabilities)
    notes: list[str] = field(default_factory=list)

    @property
    def cost_usd(self) -> float | None:
        return self.cost.usd

    @property
    def n_errors(self) -> int:
        return self.status_counts.get("error", 0)

    def summary(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.status_counts.items()))
        cost = self.cost.text()
        skipped = f", {self.n_skipped} not made (juror unusable)" if self.n_skipped else ""
        return (
            f"run {self.run_id}: {self.n_tasks} {self.noun} requested, {self.n_cached} from cache, "
            f"{self.n_called} called ({counts or 'none'}){skipped}; {cost}; {self.elapsed_s:.1f}s; {self.status}"
        )

    def error_report(self) -> list[str]:
        """Lines for stderr when calls failed: the count, each unusable juror, reasons with counts."""
        failed = self.n_errors + self.n_skipped
        if not failed:
            return []
        total = self.n_tasks - self.n_cached
        lines = [
            f"{failed} of {total} calls ended in error (run '{self.run_id}' marked {self.status}); "
            "fix the cause and run the same command again to retry only those."
        ]
        lines += [f"  {message}" for message in self.fatal.values()]
        for (juror, reason), n in self.error_reasons.most_common():
            lines.append(f"  {n} × {juror}: {reason}")
        return lines


def score(
    store: str | Path | Connection,
    rubric: AnyRubric,
    jury: Jury | list[JurorSpec],
    *,
    where: str | None = None,
    run_id: str | None = None,
    options: EngineOptions | None = None,
    ids: list[str] | None = None,
    after: Callable[[Any, str], None] | None = None,
    selection: str | None = None,
) -> RunResult:
    """Judge every selected subject with every juror; returns what was done.

    ``store`` is a DuckDB connection (held for the whole run) or the store's path
    (opened for each flush and released in between, so other processes can read
    while the run goes on). Pairwise and preference rubrics judge every pair in
    both orders. Answers already in the store (same rubric, juror, subject, order,
    sample) are reused without a call. ``jury`` is a :class:`Jury` (jurors, weights,
    aggregation, quorum) or a plain list of jurors (the default rule for the rubric). ``ids``
    limits the subjects to these item (pointwise) or pair (pairwise) ids, with ``where`` or not.
    ``after(con, run_id)`` runs in the run's last transaction when it was not interrupted (a
    calibrated jury's scores: :func:`jurybench.calibration.calibration_finisher`). ``selection``:
    what ``runs.selection`` records of how the subjects were chosen (default: ``where``).
    """
    options = options or EngineOptions()
    # before anything is opened or written
    validate_jurors(rubric, list(as_jury(jury).jurors), need_keys=not options.plan_only)
    if options.batch:
        check_batch_jurors(list(as_jury(jury).jurors))
    jury = as_jury(jury).resolved(rubric)
    jurors = list(jury.jurors)
    design = RunDesign.of(rubric, options.orders, options.order_seed)

    def plan(con: Connection) -> Planned:
        held: list[dict[str, object]] | None = None
        if ids is not None and len(ids) <= CHUNK:  # a few named subjects (a service job): one read, kept
            table = subject_table(con, rubric, where, ids)
            selected = [str(v) for v in table.column(0).to_pylist()]  # the key comes first
            held = with_conversations(con, rubric, next(subject_slices(table, CHUNK), []))
        else:
            selected = subject_ids(con, rubric, where, ids)
        if not selected:
            kind = design.subjects
            raise JurybenchError(
                f"no {kind} to judge{f' where {where}' if where else ''}.",
                hint=f"Import {kind} first ('jurybench {kind} import FILE') or change --where.",
            )
        refuse_single_responses(con, rubric, selected)
        per_subject = sum(j.samples for j in jurors) * design.shown

        def cut(size: int) -> list[list[str]]:
            return [selected[i : i + size] for i in range(0, len(selected), size)]

        # A batch run sends every call at once (batches take hours: one chunk after another would wait each out).
        slices = cut(len(selected) if options.batch else CHUNK)

        def chunks(reader: Reader) -> Iterator[list[Task]]:
            if held is not None:
                yield plan_tasks(rubric, jurors, held, design.orders, design.order_seed)
                return
            for part in slices:
                with reader() as con:
                    rows = subject_rows(con, rubric, part)
                yield plan_tasks(rubric, jurors, rows, design.orders, design.order_seed)

        if not options.elide and rubric.conversation_fields:
            refuse_cuts(rubric, (plan_tasks(rubric, jurors, subject_rows(con, rubric, p), "one") for p in slices))

        def gold(con: Connection) -> None:
            if held is not None:
                record_gold_labels(con, rubric, held)
                return
            record_gold_labels(con, rubric, (row for part in cut(CHUNK) for row in subject_rows(con, rubric, part)))

        return Planned(
            len(selected),
            len(selected) * per_subject,
            chunks,
            selected,
            gold,
            n_empty=_count_empty(con, rubric, design, selected),
        )

    def finish(con: Connection, result: RunResult) -> None:
        if after is not None and not result.interrupted:
            after(con, result.run_id)

    return run_tasks(
        store,
        rubric,
        jury,
        plan,
        finish if after else None,
        where=selection if selection is not None else where,  # what runs.selection records
        run_id=run_id,
        options=options,
        design=design,
    )


def run_tasks(
    store: str | Path | Connection,
    rubric: Any,  # a rubric, or a generation spec (generation/ is above the engine)
    jury: Jury,
    plan: Callable[[Any], Planned],
    finish: Callable[[Any, RunResult], None] | None,
    *,
    where: str | None = None,  # recorded as runs.selection (the subjects come from ``plan``)
    run_id: str | None = None,
    options: EngineOptions | None = None,
    design: RunDesign | None = None,
) -> RunResult:
    """The engine's one loop, for judging and for generating: plan the tasks, reuse answered
    calls, make the others (concurrent, rate-limited, retried), write as answers arrive, and
    finish the run (``finish`` runs in the last transaction's connection, also after Ctrl-C).

    Tasks come a chunk at a time (:class:`Planned`): each chunk is checked against the store,
    its answered calls reused and the rest made before the next chunk is rendered, so memory
    does not grow with the run.

    ``rubric`` is a rubric, or anything with its interface (``content_hash``, ``name``,
    ``version``, ``kind``, ``dimensions``, ``model_dump_json``), such as a generation spec.
    ``design``: what the run judges and how (:class:`RunDesign`; from the rubric and options
    when not given)."""
    from jurybench.config import lock_wait_s

    options = options or EngineOptions()
    design = design or RunDesign.of(rubric, options.orders, options.order_seed)
    on_ray = _checked_executor(options)
    if isinstance(store, str | Path):
        from jurybench.store import connect

        connect(store).close()  # create or migrate the store first (generation may be its first use)
    access: _Held | _Released = (
        _Released(Path(store)) if isinstance(store, str | Path) else _Held(store, options.hooks.store_lock)
    )
    jurors = list(jury.jurors)
    if options.plan_only:
        return _plan_only(access, rubric, plan, run_id)
    pool: RayPool | None = None
    try:
        if isinstance(access, _Released) and run_id is not None:  # answers a killed run received
            replay_journal(access, run_id, design.pairwise)
        with access.read(wait_s=lock_wait_s()) as con:  # planning only reads
            planned = plan(con)
            backends = {j.key: make_backend(j, rubric, con, planned.subject_ids) for j in jurors}
            budget = (
                make_budget(con, options.max_cost, run_id or "", rubric, jurors)
                if options.max_cost is not None
                else None
            )
        if on_ray:  # Ray missing, an address that does not answer, too few CPUs: before anything is written
            from jurybench.engine._ray import start_pool

            pool = start_pool(options, rubric, jurors, backends, f"{run_id or 'run'}-{uuid.uuid4().hex[:6]}")
        # The run, its rubric, jurors and jury: one commit.
        with access.open(wait_s=lock_wait_s()) as con, transaction(con):
            if planned.write is not None:
                planned.write(con)
            run_id = _open_run(
                con, run_id, rubric, jury, where, planned.n_subjects, design, pool.n if pool is not None else None
            )
    except BaseException:
        if pool is not None:
            pool.end_run()  # stops it, unless kept for the next run
        access.close()  # a setup error (no subjects, a bad juror) leaves the store free
        raise
    writer = _Writer(access, run_id, rubric)
    started = time.perf_counter()
    progress = RunProgress(planned.n_tasks, 0, options.progress)
    result = RunResult(run_id, planned.n_tasks, 0, 0, noun="responses" if design.generating else "judgments")
    if design.one_order:
        result.notes.append(
            f"--orders {options.orders}: each pair is judged in one order, so position bias cannot be "
            "measured in this run (its flip rates stay empty)."
        )
    if planned.n_empty:
        kind = "pairs have an empty response on a side" if design.pairwise else "items have an empty response"
        result.notes.append(
            f"{planned.n_empty} of the run's {planned.n_subjects} {kind} (judged as such; items.empty)."
        )
    limiters = {j.key: JurorPace(j.option("rpm", None), j.option("tpm", None)) for j in jurors}
    interrupted = False
    unusable: dict[str, str] = {}
    spread = None
    if pool is not None:  # the calls go to the pool's workers, their answers come back as rows
        from jurybench.engine._spread import Spread

        spread = Spread(pool, run_id, writer, progress, options, unusable, budget)

    async def each_chunk() -> None:
        for tasks in planned.chunks(lambda: access.read(wait_s=lock_wait_s())):
            # A read: other runs' writes do not wait for it. (A call another run answers
            # meanwhile is made again here and stored once: the first answer is kept.)
            with access.read(wait_s=lock_wait_s()) as con:
                done = done_call_keys(con, [t.call_key for t in tasks], [t.subject_id for t in tasks])
            todo = [t for t in tasks if t.call_key not in done]
            if done:  # the run's membership of the answers it reuses
                writer.add_cached([t.call_key for t in tasks if t.call_key in done])
                with access.open(wait_s=lock_wait_s()) as con:
                    writer.flush(con)
            result.n_cached += len(done)
            progress.reuse(len(done))
            if options.hooks.on_plan:
                options.hooks.on_plan(planned.n_tasks, result.n_cached)
            if progress.stopped or (budget is not None and budget.reached):
                continue  # no more calls, but answered ones are still the run's
            await _execute(
                run_id, rubric, todo, backends, writer, progress, options, unusable, budget, limiters, spread
            )
            if progress.stopped:
                return

    try:
        with frozen_heap():  # full collections that do not walk the whole heap: no long stalls of the loop
            _run_async(each_chunk())
    except BaseException:  # Ctrl-C, SIGTERM, or a failure: the run is left to resume, never "finished"
        interrupted = True
        raise
    finally:
        if pool is not None:
            pool.end_run()
            _cluster_account(result, pool, jurors)
        progress.stop()
        result.status_counts = progress.counts
        result.cost = progress.cost
        result.elapsed_s = time.perf_counter() - started
        result.interrupted = interrupted or progress.stopped
        result.stopped_budget = budget is not None and budget.reached and not result.interrupted
        result.budget = budget
        result.n_called = sum(progress.counts.values())
        result.n_skipped = progress.skipped
        result.error_reasons = progress.errors
        names = {j.key: j.display_name for j in jurors}
        result.fatal = {names[key]: message for key, message in unusable.items()}
        result.notes += [
            f"juror '{name}': {n} valid answers came without token log probabilities that spell a score (the "
            "provider sent none, or none at the value); their expected score is NULL and the discrete score "
            "stands in for it."
            for name, n in writer.unread_expected.items()
        ]
        result.status = run_status(result)
        # The last flush waits for readers as long as it must: answers are never dropped.
        with contextlib.ExitStack() as stack:
            stack.callback(access.close)
            end = RunEnd(run_id, writer.pairwise, writer.take(), result.status, datetime.now(UTC).replace(tzinfo=None))
            end_run = options.hooks.end_run if isinstance(access, _Held) else None
            if end_run is not None:
                end_run(end)  # committed together with other runs' ends (the service)
            if finish is not None or end_run is None:
                con = stack.enter_context(access.open(wait_s=FINAL_FLUSH_WAIT_S))
                if end_run is None:
                    with transaction(con):  # the last answers and the run's status: one commit
                        end_runs(con, [end])
                    writer.ended()
                if finish is not None:
                    with access.uncapped():  # the finishing steps (a calibration applied over the run) are analysis
                        finish(con, result)
    return result


def refuse_cuts(rubric: AnyRubric, chunks: Iterator[list[Task]]) -> None:
    """``--no-elide``: refuse, in one line, a run in which any conversation would be cut to a
    juror's context, saying how many subjects exceed whose budget."""
    over: dict[str, set[str]] = {}
    budgets: dict[str, int] = {}
    total: set[str] = set()
    for tasks in chunks:
        for task in tasks:
            total.add(task.subject_id)
            if task.presentation and rubric.conversation_fields:
                over.setdefault(task.juror.display_name, set()).add(task.subject_id)
                budgets[task.juror.display_name] = int(json.loads(task.presentation)["context_tokens"])
    if over:
        said = "; ".join(f"{len(ids)} for {name} ({budgets[name]:,} tokens)" for name, ids in over.items())
        raise JurybenchError(
            f"--no-elide: {len(set().union(*over.values()))} of {len(total)} {'pairs' if rubric.pairwise else 'items'} "
            f"do not fit a juror's context whole: {said}.",
            hint="Leave out --no-elide to judge them cut as docs/conversations.md says, give the juror a larger "
            "context= if its model has one, or choose them out with --where.",
        )


def _checked_executor(options: EngineOptions) -> bool:
    """Whether the run's calls are made on Ray; a bad executor option refused before anything is read."""
    on_ray = options.executor == "ray" and not options.plan_only
    if options.executor != "local" or options.address is not None or options.workers is not None:
        from jurybench.engine._ray import check_executor

        check_executor(options.executor, options.address, options.workers)
        if options.batch and on_ray:
            raise JurybenchError(
                "--batch and --executor ray do not go together: provider batches are sent and polled from one process.",
                hint="Leave out one of them.",
            )
    return on_ray


def _plan_only(access: _Held | _Released, rubric: Any, plan: Callable[[Any], Planned], run_id: str | None) -> RunResult:
    """score --plan: the calls, tokens and cost per juror, a chunk at a time; nothing written."""
    from jurybench.config import lock_wait_s

    try:
        with access.open(wait_s=lock_wait_s()) as con:
            planned = plan(con)
            cached = 0

            def checked() -> Iterator[tuple[list[Task], set[str]]]:  # a chunk at a time, never all tasks
                nonlocal cached
                for tasks in planned.chunks(lambda: contextlib.nullcontext(con)):
                    done = done_call_keys(con, [t.call_key for t in tasks], [t.subject_id for t in tasks])
                    cached += len(done)
                    yield tasks, done

            plans = plan_costs(con, rubric, checked())
            result = RunResult(run_id or "(new run)", planned.n_tasks, cached, 0, status="planned")
            result.plan = plans
    finally:  # a plan refused (no subjects, a bad --where) lets go of the store too
        access.close()
    return result


def _cluster_account(result: RunResult, pool: RayPool, jurors: list[JurorSpec]) -> None:
    """What a run on Ray adds to its result: workers, nodes, workers lost, calls given again."""
    names = {j.key: j.display_name for j in jurors}
    result.cluster = {
        "workers": pool.n,
        "nodes": pool.nodes,
        "runs_on_these_workers": pool.runs,  # > 1: workers kept from an earlier run (keep_workers)
        "lost": pool.lost,
        "given_again": pool.given_again,
        "paced": {names[key]: turns for key, turns in pool.paced.items()},
    }
    if pool.lost:
        result.notes.append(
            f"{pool.lost} Ray worker{'s were' if pool.lost != 1 else ' was'} lost during the run; the "
            f"{pool.given_again} call{'s' if pool.given_again != 1 else ''} they held "
            f"{'were' if pool.given_again != 1 else 'was'} given to other workers (those in flight were asked again)."
        )


def run_status(result: RunResult) -> str:
    """interrupted; stopped_budget (--max-cost reached; calls left not made); failed (no call of
    this run was answered); finished_with_errors; finished."""
    if result.interrupted:
        return "interrupted"
    if result.stopped_budget:
        return "stopped_budget"
    failed = result.n_errors + result.n_skipped
    if not failed:
        return "finished"
    answered = result.n_cached + result.n_called - result.n_errors
    return "failed" if answered == 0 else "finished_with_errors"


def _run_async(coro: Any) -> None:
    """asyncio.run, with SIGTERM treated like Ctrl-C so stored work is flushed. Called where an
    event loop is already running (Jupyter, IPython, an async web handler), the engine runs on
    its own loop in a worker thread and this call waits for it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop here: run on this thread
    else:
        failure: list[BaseException] = []

        def in_thread() -> None:
            try:
                _run_async(coro)
            except BaseException as exc:  # handed to the caller's thread
                failure.append(exc)

        worker = threading.Thread(target=in_thread, name="jurybench-engine")
        worker.start()
        worker.join()
        if failure:
            raise failure[0]
        return

    async def main() -> None:
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on Windows / off-main thread
            loop.add_signal_handler(signal.SIGTERM, lambda: current and current.cancel())
        try:
            await coro
        except asyncio.CancelledError:
            raise KeyboardInterrupt from None

    asyncio.run(main())


def _count_empty(con: Connection, rubric: AnyRubric, design: RunDesign, selected: list[str]) -> int:
    """How many of the run's subjects show a juror an empty response (items.empty)."""
    import pyarrow as pa

    from jurybench.store import registered

    if design.generating or not getattr(rubric, "judges_a_response", False):
        return 0
    with registered(con, "_jb_selected", pa.table({"subject_id": pa.array(selected, pa.string())})):
        if design.pairwise:
            sql = """SELECT count(*) FROM pairs p JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b
                     WHERE p.pair_id IN (SELECT subject_id FROM _jb_selected) AND (a.empty OR b.empty)"""
        else:
            sql = "SELECT count(*) FROM items WHERE item_id IN (SELECT subject_id FROM _jb_selected) AND empty"
        return int(con.execute(sql).fetchall()[0][0])


def _open_run(
    con: Connection,
    run_id: str | None,
    rubric: AnyRubric,
    jury: Jury,
    where: str | None,
    n: int,
    design: RunDesign,
    workers: int | None = None,
) -> str:
    """Create the run, or resume it with the same rubric, jurors and design (orders). The jury's
    rule, quorum, weights and names may change on resume: they re-define the run's jury figures,
    no call."""
    jurors = list(jury.jurors)
    executor = "ray" if workers is not None else "local"
    register_rubric(con, rubric)
    register_jurors(con, jurors)
    juror_keys = json.dumps(sorted(j.key for j in jurors))
    if run_id:
        row = first_row(con, "SELECT rubric_hash, jurors, orders, order_seed FROM runs WHERE run_id = ?", [run_id])
        if row:
            if row[0] != rubric.content_hash or json.dumps(sorted(json.loads(row[1]))) != juror_keys:
                raise JurybenchError(
                    f"run '{run_id}' exists with another rubric or jury.",
                    hint="Choose a new --run name, or repeat the original rubric and jurors to resume.",
                )
            stored = (row[2] or "both", row[3] or 0)
            if not design.resumes(row[2], row[3]):
                raise JurybenchError(
                    f"run '{run_id}' was judged with --orders {stored[0]}"
                    + (f" (seed {stored[1]})" if stored[0] == "random" else "")
                    + f", not {design.orders}.",
                    hint="Repeat the run's --orders to resume it, or choose a new --run name.",
                )
            con.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, executor = ?, workers = ? WHERE run_id = ?",
                [executor, workers, run_id],
            )
            register_jury(con, run_id, jury)
            return run_id
    else:
        run_id = datetime.now(UTC).strftime("run-%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    con.execute(
        "INSERT INTO runs (run_id, rubric_hash, mode, jurors, selection, n_subjects, status, orders, order_seed, "
        "executor, workers, jury_id) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
        [
            run_id,
            rubric.content_hash,
            design.mode,
            juror_keys,
            where,
            n,
            *design.stored,
            executor,
            workers,
            jury.jury_id,
        ],
    )
    register_jury(con, run_id, jury, new_run=True)
    return run_id
