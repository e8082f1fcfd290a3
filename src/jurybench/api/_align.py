"""Aligning a juror to human labels from Python (``jurybench.align``), declared once: the command
line, a study step and ``POST /v1/align`` derive from these parameters (jurybench.declare)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, cast

from jurybench.api import _declared as d
from jurybench.declare import NAME_HTTP, param, python_signature
from jurybench.errors import JurybenchError, user_facing

if TYPE_CHECKING:
    from jurybench.alignment import Alignment, AlignmentData, Judged, Rewrite
    from jurybench.api._store import StoreLike
    from jurybench.engine import EngineOptions
    from jurybench.jurors import JurorSpec
    from jurybench.rubric import AnyRubric

AlignRun = Annotated[str, param("The run whose juror to align (its subjects carry the human labels).", http=NAME_HTTP)]
AlignJuror = Annotated[
    str,
    param(
        "The juror: its name in the run, or its whole string MODEL[,key=value...] (to give options the store "
        "does not keep, such as api_base).",
        http={"min_length": 1, "max_length": 2000},
    ),
]
AlignCriterion = Annotated[
    str | None, param("The criterion to align (default: the one criterion with labels).", http=NAME_HTTP)
]
AlignLabels = Annotated[str | None, param("Only the labels of this label sample (annotations sample).", http=NAME_HTTP)]
Demos = Annotated[
    str,
    param(
        "Demonstration counts to try, comma-separated (the original, 0, is always compared).",
        http={"min_length": 1, "max_length": 64},
    ),
]
Optimizer = Annotated[
    str | None,
    param(
        "A model (MODEL[,key=value...]) that rewrites the criterion's description from the training folds' "
        "disagreements: the 'guidance' variant (none without it).",
        http={"max_length": 2000},
    ),
]
Folds = Annotated[
    int, param("Cross-validation folds over prompt groups.", number="count", at_least=2, http_only={"le": 20})
]
AlignAlpha = Annotated[
    float,
    param("Level of the one-sided test of each variant's held-out gain (Holm over the variants).", number="alpha"),
]
AlignSeed = Annotated[int, param("Seed of the folds and of ties among demonstrations.", number="seed")]
AlignMaxCost = Annotated[
    float | None,
    param(
        "Budget in USD for the alignment's calls; it stops before passing it and keeps nothing.",
        number="dollars",
        http_only={"gt": 0},
    ),
]
AlignPlan = Annotated[bool, param("Count each variant's calls and price them; call and change nothing.", flag=True)]
AlignConcurrency = Annotated[
    int,
    param(
        "Parallel requests.",
        number="count",
        http={"ge": 1, "le": d.MAX_CONCURRENCY},
        http_only={"le": d.SERVICE_CONCURRENCY},
    ),
]
AlignProgress = Annotated[bool, param("Show the progress bars.", faces="cli python", switch=True, cli_default=True)]
AlignHooks = Annotated[
    "dict[str, Any] | None",
    param(
        "The engine's hooks (EngineHooks fields) of a program embedding the alignment (the service).", faces="python"
    ),
]


@user_facing
def align(
    store: StoreLike | None,
    run: AlignRun,
    *,
    juror: AlignJuror,
    criterion: AlignCriterion = None,
    labels: AlignLabels = None,
    demos: Demos = "2,4,8",
    optimizer: Optimizer = None,
    folds: Folds = 5,
    alpha: AlignAlpha = 0.05,
    seed: AlignSeed = 0,
    max_cost: AlignMaxCost = None,
    plan: AlignPlan = False,
    concurrency: AlignConcurrency = 8,
    progress: AlignProgress = False,
    executor: d.Executor = "local",
    address: d.Address = None,
    workers: d.Workers = None,
    hooks: AlignHooks = None,
) -> Alignment:
    """Propose rubric variants for one juror of ``run`` (``demos``: that many labelled subjects
    shown with the humans' answer; ``optimizer``: the criterion's description rewritten by that
    model), judge each on prompt groups held out of what built it, and keep the best only when
    its held-out gain in absolute error against the humans' mean is significant (one-sided, Holm
    over the variants at ``alpha``): then it is stored as a new rubric version (``score --rubric
    NAME@VERSION``) and the labels it used are recorded, so agreement, calibrate and stats ppi
    on runs judged with it leave them out. ``plan=True`` counts and prices the calls only.
    ``executor='ray'``: the variants' calls are made by Ray workers, started once for them all
    (each variant's rubric handed to them)."""
    from jurybench.alignment import (
        align as run_alignment,
    )
    from jurybench.alignment import (
        aligned_version,
        alignment_data,
        alignment_key,
        parse_grid,
        record_alignment,
    )
    from jurybench.engine import check_executor, checked_max_cost, keep_workers
    from jurybench.store import reading, writing

    if max_cost is not None:
        checked_max_cost(max_cost)
    check_executor(executor, address, workers)
    if store is None:  # the default store file, as the command line's --db
        from jurybench.config import db_path

        store = db_path(None)
    grid = parse_grid(demos)
    optimizer_spec = _optimizer(optimizer, max_cost)
    with reading(store) as con:
        data = alignment_data(con, run, juror, criterion, labels)
        key = alignment_key(data, grid, folds, seed, optimizer_spec.key if optimizer_spec else None)
        version = aligned_version(con, data, key)
    if optimizer_spec is not None and data.labels:
        raise JurybenchError(
            "--optimizer rewrites a scored criterion's description; a classification has none to rewrite.",
            hint="Align a classification with --demos.",
        )
    spread = {"executor": executor, "address": address, "workers": workers}
    calls = _Calls(store, data, concurrency=concurrency, progress=progress, hooks={**(hooks or {}), **spread})
    with keep_workers(most=1):  # on Ray: one start of the workers for every variant and fold
        result = run_alignment(
            data,
            judge=calls.judge,
            plan=calls.plan,
            rewrite=None if optimizer_spec is None else calls.rewriter(optimizer_spec, data.rubric),
            price_rewrite=None if optimizer_spec is None else _rewrite_price(optimizer_spec),
            demos=grid,
            folds=folds,
            alpha=alpha,
            seed=seed,
            max_cost=max_cost,
            planning=plan,
            alignment_id=key,
            version=version,
        )
    if not plan:
        lock = (hooks or {}).get("store_lock")  # a server's writes go one at a time
        with lock if lock is not None else contextlib.nullcontext(), writing(store) as con:
            record_alignment(con, data, result)
    return result


def _optimizer(text: str | None, max_cost: float | None) -> JurorSpec | None:
    """The optimizer's juror, checked; with a budget, refused in one line when its price is unknown
    (its calls could not be bounded)."""
    from jurybench.jurors import check_juror, parse_juror, price_of

    if text is None:
        return None
    spec = parse_juror(text)
    check_juror(spec)
    if max_cost is not None and price_of(spec) is None:
        raise JurybenchError(
            f"--max-cost: no price is known for the optimizer '{spec.display_name}' ({spec.model}), so its calls "
            "cannot be kept within the budget.",
            hint="Use a model litellm's price map lists, or align without --max-cost (see --plan).",
        )
    return spec


REWRITE_TOKENS = 300  # the optimizer's answer, as --plan prices it (a description of at most 150 words)


def _rewrite_price(spec: JurorSpec) -> Callable[[list[dict[str, str]]], float | None]:
    """What one optimizer call is planned to cost: its prompt's tokens and REWRITE_TOKENS out."""
    from jurybench.jurors import count_tokens, price_of

    price = price_of(spec)

    def cost(messages: list[dict[str, str]]) -> float | None:
        if price is None:
            return None
        tokens = count_tokens(spec, [dict(m) for m in messages])
        return tokens * price.input + REWRITE_TOKENS * price.output + price.per_call

    return cost


class _Calls:
    """The engine and the optimizer as the alignment asks for them; ``hooks``: the engine's
    options a program embedding the alignment gives, and where the calls are made."""

    def __init__(
        self,
        store: StoreLike,
        data: AlignmentData,
        *,
        concurrency: int,
        progress: bool,
        hooks: dict[str, Any],
    ) -> None:
        from jurybench.jury import Jury

        self.store, self.juror, self.criterion, self.labels = store, data.juror, data.criterion, data.labels
        self.jury = Jury((data.juror,))
        self.concurrency, self.progress, self.hooks = concurrency, progress, hooks

    def _options(self, *, plan: bool, max_cost: float | None) -> EngineOptions:
        from jurybench.api._run import engine_options

        return engine_options(
            concurrency=self.concurrency, plan=plan, max_cost=max_cost, progress=self.progress, **self.hooks
        )

    def judge(self, rubric: AnyRubric, ids: list[str], name: str, budget: float | None) -> Judged:
        from jurybench.alignment import Judged
        from jurybench.api._run import _engine_store
        from jurybench.engine import score as run_score
        from jurybench.store import reading

        if budget is not None and budget <= 0:
            return Judged({}, 0, 0.0, "stopped_budget")
        with _engine_store(self.store) as target:
            result = run_score(
                target, rubric, self.jury, ids=ids, run_id=name, options=self._options(plan=False, max_cost=budget)
            )
        with reading(self.store) as con:
            answers = self._answers(con, name)
        return Judged(answers, int(result.n_called), result.cost_usd, str(result.status))

    def _answers(self, con: Any, run: str) -> dict[str, float]:
        """The juror's answer per subject in ``run``: its score (the mean of valid samples), or
        for a classification the index of its most frequent valid label (ties: the first)."""
        if not self.labels:
            rows = con.execute(
                "SELECT item_id, juror_score FROM juror_pointwise WHERE run_id = ? AND juror_key = ? AND criterion = ? "
                "AND juror_score IS NOT NULL ORDER BY ALL",
                [run, self.juror.key, self.criterion],
            ).fetchall()
            return {str(i): float(v) for i, v in rows}
        votes: dict[str, dict[str, int]] = {}
        for item, label in con.execute(
            "SELECT item_id, predicted FROM classification_outcomes WHERE run_id = ? AND juror_key = ? "
            "AND predicted IS NOT NULL ORDER BY ALL",
            [run, self.juror.key],
        ).fetchall():
            counts = votes.setdefault(str(item), {})
            counts[label] = counts.get(label, 0) + 1
        from jurybench.alignment import modal_label

        return {item: v for item, counts in votes.items() if (v := modal_label(counts, self.labels)) is not None}

    def plan(self, rubric: AnyRubric, ids: list[str]) -> tuple[int, float | None]:
        from jurybench.api._run import _engine_store
        from jurybench.engine import score as run_score

        with _engine_store(self.store) as target:
            result = run_score(target, rubric, self.jury, ids=ids, options=self._options(plan=True, max_cost=None))
        rows = list(result.plan)
        costs = [p.cost_usd for p in rows]
        return sum(p.calls for p in rows), None if any(c is None for c in costs) else float(
            sum(c or 0.0 for c in costs)
        )

    def rewriter(self, spec: JurorSpec, rubric: AnyRubric) -> Rewrite:
        """The optimizer as ``rewrite(messages, left) -> (text, cost)``: one call (retried on a
        transient error), through the juror kinds' own transport. With a budget (``left``
        dollars), the call is sent only when its prompt and its planned answer (REWRITE_TOKENS)
        fit, with ``max_tokens`` lowered to what is left, so however long the optimizer would
        answer, the call cannot cost more than ``left``; None when it does not fit."""
        import asyncio
        import dataclasses

        from jurybench.engine import affordable_output_tokens
        from jurybench.generation import GenerationSpec
        from jurybench.jurors import (
            RateLimited,
            Slot,
            TransientError,
            count_tokens,
            make_backend,
            output_limit,
            price_of,
            priced,
        )
        from jurybench.store import reading

        price = price_of(spec)
        limit = output_limit(spec)
        task = GenerationSpec.model_validate({"name": "align-guidance", "treatments": {"task": {"arms": ["a", "b"]}}})

        def bounded(messages: list[dict[str, str]], left: float | None) -> JurorSpec | None:
            if left is None:
                return spec
            if price is None:  # refused before the alignment starts (_optimizer); never guessed at 0
                return None
            tokens = affordable_output_tokens(price, count_tokens(spec, [dict(m) for m in messages]), left)
            if tokens < REWRITE_TOKENS:
                return None
            bound = min(tokens, limit) if limit is not None else tokens
            if bound == float("inf"):  # free output and no limit: nothing to bound
                return spec
            return dataclasses.replace(spec, params={**spec.params, "max_tokens": int(bound)})

        def rewrite(messages: list[dict[str, str]], left: float | None) -> tuple[str, float | None] | None:
            call = bounded(messages, left)
            if call is None:
                return None
            with reading(self.store) as con:
                backend = make_backend(call, cast("AnyRubric", task), con, [])
            last: Exception | None = None
            for attempt in range(4):
                try:
                    done = asyncio.run(backend.complete(messages, Slot("align-optimizer", "", attempt)))
                    if done.cost_usd is not None or price is None:
                        return done.text or "", done.cost_usd
                    return done.text or "", priced(done, price)
                except (TransientError, RateLimited) as exc:
                    last = exc
            raise JurybenchError(f"the optimizer {spec.display_name} did not answer: {last}.")

        return rewrite


align.__signature__ = python_signature(align)  # type: ignore[attr-defined]
