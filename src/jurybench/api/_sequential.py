"""Sequential judging (``score --until``): judge the selected subjects in seeded random batches
of whole clusters (``--until-cluster``: a prompt with all its items, by default), look at the
jury's anytime-valid confidence sequence of the cluster means after each, and stop as soon as
the stopping rule is met (``jurybench.stats.anytime`` says why stopping early stays valid)."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from jurybench.api._store import StoreLike
    from jurybench.engine import RunResult
    from jurybench.rubric import AnyRubric


def judge_until(
    store: StoreLike,
    spec: AnyRubric,
    *,
    until: str,
    batch_items: int,
    seed: int,
    alpha: float,
    cluster: str = "prompt",
    where: str | None,
    ids: list[str] | None,
    run: str | None,
    judge: Callable[[list[str], str | None], RunResult],
    lock: AbstractContextManager[object] | None = None,
) -> tuple[RunResult, dict[str, Any]]:
    """Judge batches with ``judge(ids, run)`` (one engine run each, the same run name) until the
    rule is met or the subjects run out; returns the last batch's engine result and the record
    stored in ``runs.stopping``."""
    from jurybench.rubric import subject_ids
    from jurybench.stats import anytime
    from jurybench.store import reading, writing

    if isinstance(batch_items, bool) or not isinstance(batch_items, int) or batch_items < 1:
        raise JurybenchError(f"--batch-items must be a whole number >= 1 (got {batch_items!r}).")
    rule, low, high = anytime.fitted_rule(until, spec, alpha)
    cluster = anytime.check_cluster(cluster)
    with writing(store) as con:  # a store by path is created or migrated first, as a run does
        subjects = subject_ids(con, spec, where, ids)
        cluster_of = anytime.clusters_of(con, spec, cluster, subjects)
    if not subjects:
        raise JurybenchError(f"no {spec.subject_table} to judge{f' where {where}' if where else ''}.")
    if cluster != "item" and all(cluster_of.get(s) == f"subject:{s}" for s in subjects):
        raise JurybenchError(
            f"--until-cluster {cluster}: no subject has a value of it, so every subject would be a cluster of its own.",
            hint="Name a field the items carry, or --until-cluster item to judge subject by subject.",
        )
    members: dict[str, list[str]] = {}
    for subject in subjects:
        members.setdefault(cluster_of.get(subject, f"subject:{subject}"), []).append(subject)
    order = sorted(members, key=lambda c: anytime.cluster_rank(seed, c))  # whole clusters, seeded
    record: dict[str, Any] = {
        "rule": rule.text,
        "kind": rule.kind,
        "dimension": rule.dimension,
        "threshold": rule.threshold,
        "alpha": rule.alpha,
        "batch_items": batch_items,
        "seed": seed,
        "cluster": cluster,
        "subjects_available": len(subjects),
        "clusters_available": len(order),
        "scale": [low, high],
        "method": anytime.METHOD,
        "looks": [],
    }
    batches: list[list[str]] = [[]]
    for key in order:  # a batch takes whole clusters until it holds batch_items subjects
        if len(batches[-1]) >= batch_items:
            batches.append([])
        batches[-1].extend(members[key])
    judged_after = list(itertools.accumulate(len(b) for b in batches))
    prior = _prior_looks(store, run, record) if run is not None else []
    record["looks"] = prior  # looks an interrupted invocation of this run recorded, in the same design
    result = None
    reason = "exhausted"
    for index, batch in enumerate(batches):
        if index < len(prior) - 1:
            continue  # judged and looked at before the interruption: its answers are the run's
        result = judge(batch, run)
        run = result.run_id
        if result.status not in ("finished", "finished_with_errors"):
            reason = result.status  # interrupted or stopped by the budget: what was judged is kept
            break
        if index < len(prior):  # the last recorded look, judged again from the cache for its result
            figure = prior[index]
        else:
            with reading(store) as con:
                figure = {
                    "judged": judged_after[index],
                    **anytime.look_run(con, spec, rule, run, low, high, cluster, seed),
                }
            record["looks"].append(figure)
            _save(store, run, {**record, "stopped": None}, lock)  # durable as it is taken: a kill keeps it
        if anytime.met(rule, figure):
            reason = "met"
            break
    assert result is not None
    record["stopped"] = reason
    record["judged"] = record["looks"][-1]["judged"] if record["looks"] else 0
    record["final"] = record["looks"][-1] if record["looks"] else None
    _save(store, result.run_id, record, lock, count_subjects=True)
    return result, record


def _prior_looks(store: StoreLike, run: str, record: dict[str, object]) -> list[dict[str, Any]]:
    from jurybench.stats import anytime
    from jurybench.store import reading

    with reading(store) as con:
        return anytime.prior_looks(con, run, record)


def _save(
    store: StoreLike,
    run: str,
    record: dict[str, Any],
    lock: AbstractContextManager[object] | None,
    *,
    count_subjects: bool = False,
) -> None:
    """Write the run's stopping record in a transaction of its own (``stopped`` None while it
    judges), under the store's lock when threads share it (the service's)."""
    from jurybench.stats import anytime
    from jurybench.store import writing

    with contextlib.ExitStack() as held:
        if lock is not None:
            held.enter_context(lock)
        anytime.save_record(held.enter_context(writing(store)), run, record, count_subjects=count_subjects)
