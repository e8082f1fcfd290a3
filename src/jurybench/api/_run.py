"""Judging and generating from Python: ``score`` / ``ascore`` / ``generate`` return a :class:`Run`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.api import _declared as d
from jurybench.api._specs import jury_of, rubric_of
from jurybench.declare import python_signature
from jurybench.errors import JurybenchError, user_facing

if TYPE_CHECKING:
    import pandas as pd
    from duckdb import DuckDBPyConnection

    from jurybench.api._store import StoreLike
    from jurybench.engine import EngineOptions, RunResult
    from jurybench.generation import GenerationReport, GenerationSpec
    from jurybench.rubric import AnyRubric


def engine_options(
    *,
    concurrency: int = 16,
    retries: int = 4,
    give_up_after: float = 3600.0,
    max_cost: float | None = None,
    plan: bool = False,
    batch: bool = False,
    poll_every: float = 30.0,
    progress: bool = False,
    orders: str = "both",
    order_seed: int = 0,
    executor: str = "local",
    address: str | None = None,
    workers: int | None = None,
    no_elide: bool = False,
    **embedding: Any,
) -> EngineOptions:
    """The engine's options from the arguments score and generate share; ``embedding``: the
    :class:`EngineHooks` of a program that embeds the run (the service)."""
    import math

    from jurybench.engine import EngineHooks, EngineOptions

    for name, value, least in (("concurrency", concurrency, 1), ("retries", retries, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise JurybenchError(f"--{name} must be a whole number >= {least} (got {value!r}).")
    if (
        isinstance(give_up_after, bool)
        or not isinstance(give_up_after, int | float)
        or not math.isfinite(give_up_after)
        or give_up_after <= 0
    ):
        raise JurybenchError(f"--give-up-after must be seconds > 0 (got {give_up_after!r}).")
    from jurybench.engine import check_executor

    check_executor(executor, address, workers)
    return EngineOptions(
        concurrency=concurrency,
        retries=retries,
        progress=progress,
        give_up_after_s=give_up_after,
        plan_only=plan,
        max_cost=max_cost,
        batch=batch,
        batch_poll_s=poll_every,
        orders=orders,
        order_seed=order_seed,
        executor=executor,
        address=address,
        workers=workers,
        elide=not no_elide,
        hooks=EngineHooks(**embedding),
    )


@contextlib.contextmanager
def _engine_store(store: StoreLike) -> Iterator[Path | DuckDBPyConnection]:
    """What the engine runs on: a path (released between flushes so other processes can read,
    an open store's file included: it is let go for the run), or a DuckDB connection."""
    from jurybench.api._store import Store

    if isinstance(store, str | Path):
        from jurybench.config import db_path

        yield db_path(store)
        return
    if isinstance(store, Store):
        with store.lent_for_a_run() as target:
            yield target
        return
    if getattr(store, "read_only", False):
        raise JurybenchError(
            f"{getattr(store, 'path', 'the store')} is open read-only.",
            hint="Open it with jurybench.open(path) to judge.",
        )
    yield getattr(store, "connection", store)


@dataclass
class Run:
    """What a score or generate call did: ``status`` (finished, finished_with_errors, failed,
    interrupted, stopped_budget; 'planned' for ``plan=True``), counts, cost, and the run's
    stored results as DataFrames."""

    result: RunResult  # the engine's account of the run
    store: StoreLike
    rubric: AnyRubric | GenerationSpec  # generate: the generation spec
    report: GenerationReport | None = None  # generate: the GenerationReport (per-model lines, items and pairs written)
    stopping: dict[str, Any] | None = None  # score(until=...): the rule, every look, why it stopped

    @property
    def run_id(self) -> str:
        return str(self.result.run_id)

    @property
    def status(self) -> str:
        return str(self.result.status)

    @property
    def counts(self) -> dict[str, int]:
        """Calls made this time by outcome (valid, invalid, refusal, error), plus 'cached'."""
        return {**dict(self.result.status_counts), "cached": self.result.n_cached}

    @property
    def cost_usd(self) -> float | None:
        """What this call spent in USD, or for ``plan=True`` what the plan prices the calls at (it
        spent nothing); None when a juror's price is unknown (never 0 for unknown)."""
        if self.result.status == "planned" and self.result.plan:
            planned = [p.cost_usd for p in self.result.plan]
            return None if any(v is None for v in planned) else float(sum(v for v in planned if v is not None))
        value = self.result.cost_usd
        return None if value is None else float(value)

    @property
    def plan(self) -> pd.DataFrame:
        """``plan=True``: per juror the calls, tokens and estimated cost, as a DataFrame."""
        import pandas as pd

        return pd.DataFrame([vars(p) for p in self.result.plan])

    @property
    def errors(self) -> list[str]:
        """Why calls ended in error (empty when none did)."""
        return list(self.result.error_report())

    @property
    def notes(self) -> list[str]:
        """What the run says that is no error: e.g. a scores=expected juror whose provider sent no
        token probabilities."""
        return list(self.result.notes)

    def summary(self) -> str:
        return str(self.result.summary())

    def __repr__(self) -> str:
        return f"<jurybench.Run {self.run_id} {self.status}: {self.summary()}>"

    def _view(self, pairwise: str, pointwise: str) -> pd.DataFrame:
        from jurybench.rubric import is_pairwise
        from jurybench.store import reading

        if self.status == "planned":
            raise JurybenchError("a plan has no results: nothing was called.", hint="Call score without plan=True.")
        view = pairwise if is_pairwise(self.rubric) else pointwise
        with reading(self.store) as con:
            return con.execute(f"SELECT * FROM {view} WHERE run_id = ? ORDER BY ALL", [self.run_id]).df()

    def results(self) -> pd.DataFrame:
        """The jury's scores: one row per item x criterion (``jury_pointwise``) or pair x category
        (``jury_pairwise``), by the run's jury rule."""
        if self.rubric.generates:
            from jurybench.store import reading

            with reading(self.store) as con:
                return con.execute(
                    "SELECT * FROM generation_outcomes WHERE study = ? ORDER BY ALL", [self.rubric.name]
                ).df()
        return self._view("jury_pairwise", "jury_pointwise")

    def judgments(self) -> pd.DataFrame:
        """Each juror's scores (mean over its samples): ``juror_pointwise`` or ``juror_pairwise``."""
        return self._view("juror_pairwise", "juror_pointwise")


@user_facing
def score(
    store: StoreLike,
    *,
    rubric: d.Rubric,
    jury: d.JuryOf,
    aggregate: d.Aggregate = None,
    quorum: d.Quorum = None,
    tie: d.Tie = None,
    calibration: d.Calibration = None,
    scores: d.Scores = None,
    orders: d.Orders = "both",
    order_seed: d.OrderSeed = 0,
    where: d.Where = None,
    ids: d.Ids = None,
    anchors: d.Anchors = None,
    limit: d.Limit = None,
    limit_seed: d.LimitSeed = 0,
    run: d.Run = None,
    samples: d.Samples = None,
    concurrency: d.Concurrency = 16,
    retries: d.Retries = 4,
    give_up_after: d.GiveUpAfter = 3600.0,
    max_cost: d.MaxCost = None,
    plan: d.Plan = False,
    batch: d.Batch = False,
    poll_every: d.PollEvery = 30.0,
    progress: d.Progress = False,
    executor: d.Executor = "local",
    address: d.Address = None,
    workers: d.Workers = None,
    no_elide: d.NoElide = False,
    options: d.Options = None,
    until: d.Until = None,
    batch_items: d.BatchItems = 50,
    until_seed: d.UntilSeed = 0,
    until_alpha: d.UntilAlpha = 0.05,
    until_cluster: d.UntilCluster = "prompt",
) -> Run:
    """Judge the stored items (pointwise) or pairs (in both orders) selected by ``where`` / ``ids``
    with a jury; answers already stored are reused, so repeating a run resumes it.

    ``store`` is an open store (``jurybench.open``), a path, or a DuckDB connection. ``rubric``
    a name, path or rubric; ``jury`` a list of jurors ('MODEL[,key=value...]'), a Jury or a
    YAML file; ``scores='expected'`` has the jury aggregate its jurors' expected scores (jurors with
    ``scores=expected``; the discrete score where none was read). ``plan=True`` counts calls, tokens and cost and calls nothing. Works inside a
    running event loop (Jupyter): the engine then runs on its own thread.

    ``until`` (``'ci_width(coherence)<0.5'`` or ``'excludes(logos,0)'``): judge in random batches
    of ``batch_items`` (whole clusters, ``until_cluster``: by default a prompt with all its items;
    order seeded by ``until_seed``) and stop once the jury's anytime-valid confidence sequence
    of the cluster means (level ``1 - until_alpha``) meets the rule; ``Run.stopping`` (and
    ``runs.stopping``) records the rule, every look and why judging stopped."""
    from jurybench.calibration import attach_calibration, calibration_finisher
    from jurybench.engine import score as run_score

    _check_run_arguments(
        store, run=run, where=where, ids=ids, samples=samples, max_cost=max_cost, concurrency=concurrency
    )
    spec = _stored_or(store, rubric)
    if anchors is not None:  # the anchor set's subjects, beside those --where / ids choose
        if until is not None:
            raise JurybenchError("--anchors and --until do not go together: a sequential run draws its own subjects.")
        ids, where = _with_anchors(store, spec, anchors, where=where, ids=ids), None
    selection = None
    if limit is not None:  # a first try: a seeded random N of what --where / ids choose
        if until is not None:
            raise JurybenchError("--limit and --until do not go together: a sequential run draws its own subjects.")
        ids, selection = _first_try(store, spec, limit, limit_seed, where=where, ids=ids)
    jury = jury_of(
        jury, samples=samples, aggregate=aggregate, quorum=quorum, tie=tie, calibration=calibration, scores=scores
    )
    jury = attach_calibration(jury, spec)
    if options is None:
        options = engine_options(
            concurrency=concurrency,
            retries=retries,
            give_up_after=give_up_after,
            max_cost=max_cost,
            plan=plan,
            batch=batch,
            poll_every=poll_every,
            progress=progress,
            orders=orders,
            order_seed=order_seed,
            executor=executor,
            address=address,
            workers=workers,
            no_elide=no_elide,
        )
    if until is not None:
        from jurybench.api._sequential import judge_until

        if plan or getattr(options, "plan_only", False):
            raise JurybenchError("--until and --plan do not go together: a sequential run stops on what it sees.")

        def judge(batch: list[str], name: str | None) -> RunResult:
            with _engine_store(store) as target:
                return run_score(
                    target, spec, jury, ids=batch, run_id=name, options=options, after=calibration_finisher(jury)
                )

        from jurybench.engine import keep_workers

        with keep_workers():  # on Ray: one start of the workers for every batch, not one a look
            result, stopping = judge_until(
                store,
                spec,
                until=until,
                batch_items=batch_items,
                seed=until_seed,
                alpha=until_alpha,
                cluster=until_cluster,
                where=where,
                ids=ids,
                run=run,
                judge=judge,
                lock=getattr(options, "store_lock", None),
            )
        return Run(result, store, spec, stopping=stopping)
    with _engine_store(store) as target:
        result = run_score(
            target,
            spec,
            jury,
            where=where,
            ids=ids,
            run_id=run,
            options=options,
            after=calibration_finisher(jury),
            selection=selection,
        )
    return Run(result, store, spec)


def _first_try(
    store: StoreLike, rubric: AnyRubric, limit: int, seed: int, *, where: str | None, ids: list[str] | None
) -> tuple[list[str], str]:
    """``limit`` of the subjects ``where`` / ``ids`` choose, in the order of a seeded hash of
    their ids (the same subjects for the same seed, whatever order they were stored in), and
    what ``runs.selection`` records of the draw."""
    import hashlib

    from jurybench.api._rows import expect
    from jurybench.rubric import subject_ids
    from jurybench.store import reading

    expect("limit", limit, int)
    if isinstance(limit, bool) or limit < 1:
        raise JurybenchError(f"--limit must be a whole number >= 1 (got {limit!r}).")
    with reading(store) as con:
        chosen = subject_ids(con, rubric, where, ids)
    if not chosen:
        raise JurybenchError(
            f"no {rubric.subject_table} to judge{f' where {where}' if where else ''}.",
            hint=f"Import {rubric.subject_table} first, or change --where.",
        )
    drawn = sorted(chosen, key=lambda s: hashlib.sha256(f"{seed}\x1f{s}".encode()).hexdigest())[:limit]
    said = (
        f"{where or 'every subject'}; a first try: {len(drawn)} of {len(chosen)} drawn at random (--limit-seed {seed})"
    )
    return sorted(drawn), said


def _stored_or(store: StoreLike, rubric: object) -> AnyRubric:
    """``NAME@VERSION``: that version from the store (one ``jurybench align`` kept); else the
    rubric as named, found or given."""
    from jurybench.rubric import is_stored_name, stored_rubric

    if is_stored_name(rubric):
        from jurybench.store import reading

        with reading(store) as con:
            return stored_rubric(con, str(rubric))
    return rubric_of(rubric)  # type: ignore[arg-type]


def _with_anchors(
    store: StoreLike, rubric: AnyRubric, name: str, *, where: str | None, ids: list[str] | None
) -> list[str]:
    """The anchor set's subjects and, when ``where`` or ``ids`` choose any, those too."""
    from jurybench.api._rows import expect
    from jurybench.rubric import subject_ids
    from jurybench.stats import anchor_ids
    from jurybench.store import reading

    expect("anchors", name, str)
    with reading(store) as con:
        chosen = subject_ids(con, rubric, where, ids) if where is not None or ids is not None else []
        return sorted({*anchor_ids(con, name), *chosen})


def _check_run_arguments(
    store: object, *, run: object, where: object, ids: object, samples: object, max_cost: object, concurrency: object
) -> None:
    """Each argument of the right type, before anything is written (one line each)."""
    from jurybench.api._rows import expect
    from jurybench.engine import checked_max_cost

    if store is None:
        raise JurybenchError(
            "store: None; give jurybench.open(path), a path or a DuckDB connection.",
            hint="Nothing was judged; no store file was made.",
        )
    expect("run", run, str)
    expect("where", where, str)
    expect("ids", ids, list)
    if isinstance(ids, list) and not all(isinstance(i, str) for i in ids):
        raise JurybenchError("ids: expected a list of item or pair ids (text).")
    expect("samples", samples, int)
    expect("concurrency", concurrency, int, none=False)
    if max_cost is not None:
        checked_max_cost(max_cost)  # the engine's own rule, checked before anything is written
    if (isinstance(samples, int) and samples < 1) or (isinstance(concurrency, int) and concurrency < 1):
        raise JurybenchError("samples and concurrency must be whole numbers >= 1.")


async def ascore(store: StoreLike, **kwargs: Any) -> Run:
    """``score`` for async code: awaits the run on a worker thread, leaving the event loop free."""
    import asyncio

    return await asyncio.to_thread(score, store, **kwargs)


@user_facing
def generate(
    store: StoreLike,
    spec: d.Spec,
    *,
    prompts: d.Prompts = None,
    models: d.Models = None,
    samples: d.Responses = None,
    exclusion: d.Exclusion = None,
    limit: d.PromptLimit = None,
    limit_seed: d.LimitSeed = 0,
    run: d.Run = None,
    concurrency: d.Concurrency = 16,
    retries: d.Retries = 4,
    give_up_after: d.GiveUpAfter = 3600.0,
    max_cost: d.MaxCost = None,
    plan: d.GenerationPlan = False,
    batch: d.Batch = False,
    poll_every: d.PollEvery = 30.0,
    progress: d.Progress = False,
    executor: d.Executor = "local",
    address: d.Address = None,
    workers: d.Workers = None,
    options: d.Options = None,
) -> Run:
    """Generate responses: prompts x treatment arms x models x samples, stored as items (and pairs
    across arms) with refusals detected. ``spec`` is a generation spec (or study) file or a
    GenerationSpec; ``prompts`` a prompt file, a DataFrame or a list of dicts (prompt_id, prompt[, language]).
    ``run.report`` holds the per-model lines (refusals, items and pairs written)."""
    from jurybench.api._rows import rows_of
    from jurybench.generation import GenerationSpec, generators_of, load_prompts, load_spec_file, prompts_from_rows
    from jurybench.generation import generate as run_generate

    source = None
    if isinstance(spec, str | Path):
        source = Path(spec)
        gen_spec, _ = load_spec_file(source)
    elif isinstance(spec, GenerationSpec):
        gen_spec = spec
    else:
        raise JurybenchError(f"spec: expected a generation spec file or a GenerationSpec, got {type(spec).__name__}.")
    changes: dict[str, Any] = {}
    if samples is not None:
        changes["samples"] = samples
    if exclusion is not None:
        if exclusion not in ("response", "prompt"):
            raise JurybenchError(f"exclusion {exclusion!r} is not valid.", hint="Valid: response, prompt.")
        changes["refusal"] = gen_spec.refusal.model_copy(update={"exclusion": exclusion})
    if changes:
        gen_spec = gen_spec.model_validate({**gen_spec.model_dump(), **changes})
    if prompts is None:
        if not gen_spec.prompts:
            raise JurybenchError(
                f"{source or gen_spec.name}: no prompt set.", hint="Add prompts: FILE to the spec, or pass prompts."
            )
        prompts = (source.parent if source else Path.cwd()) / gen_spec.prompts
    given = rows_of(prompts, "prompt")
    prompt_list = load_prompts(Path(given)) if isinstance(given, str | Path) else prompts_from_rows(*given)
    if limit is not None:  # a first try: a seeded random N of the prompts, in their order
        import hashlib

        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise JurybenchError(f"--limit must be a whole number >= 1 (got {limit!r}).")
        keep = set(
            sorted(
                (p.prompt_id for p in prompt_list),
                key=lambda i: hashlib.sha256(f"{limit_seed}\x1f{i}".encode()).hexdigest(),
            )[:limit]
        )
        prompt_list = [p for p in prompt_list if p.prompt_id in keep]
    if options is None:
        options = engine_options(
            concurrency=concurrency,
            retries=retries,
            give_up_after=give_up_after,
            max_cost=max_cost,
            plan=plan,
            batch=batch,
            poll_every=poll_every,
            progress=progress,
            executor=executor,
            address=address,
            workers=workers,
        )
    if store is None:
        raise JurybenchError("store: None; give jurybench.open(path), a path or a DuckDB connection.")
    with _engine_store(store) as target:
        report = run_generate(
            target,
            gen_spec,
            generators_of(gen_spec, models),
            prompt_list,
            run_id=run,
            options=options,
            source=str(source) if source else None,
        )
    return Run(report.run, store, gen_spec, report)


# The Python face shows each parameter's type, not its declaration (jurybench.declare).
score.__signature__ = python_signature(score)  # type: ignore[attr-defined]
generate.__signature__ = python_signature(generate)  # type: ignore[attr-defined]
