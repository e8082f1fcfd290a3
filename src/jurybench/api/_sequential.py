"""Sequential judging (``score --until``): judge the selected subjects in seeded random batches,
look at the jury's anytime-valid confidence sequence after each, and stop as soon as the
stopping rule is met (``jurybench.stats.sequential`` says why stopping early stays valid)."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from jurybench.api._store import StoreLike


def judge_until(store: StoreLike, spec: Any, *, until: str, batch_items: int, seed: int, alpha: float,
                where: str | None, ids: list[str] | None, run: str | None,
                judge: Callable[[list[str], str | None], Any], lock: Any = None) -> tuple[Any, dict[str, Any]]:  # fmt: skip
    """Judge batches with ``judge(ids, run)`` (one engine run each, the same run name) until the
    rule is met or the subjects run out; returns the last batch's engine result and the record
    stored in ``runs.stopping``."""
    from jurybench.rubric import subject_ids
    from jurybench.stats import sequential
    from jurybench.store import reading, writing

    if isinstance(batch_items, bool) or not isinstance(batch_items, int) or batch_items < 1:
        raise JurybenchError(f"--batch-items must be a whole number >= 1 (got {batch_items!r}).")
    rule = sequential.parse_rule(until, spec.dimensions, alpha)
    if rule.kind == "gap_excludes" and spec.kind != "pairwise":
        raise JurybenchError(f"--until {rule.text}: the treatment gap is a pairwise rubric's figure, not a {spec.kind} one's.",
                             hint="Use ci_width, excludes or separated.")  # fmt: skip
    if rule.kind == "separated" and spec.subject_table != "items":
        raise JurybenchError(f"--until {rule.text}: a leaderboard ranks the items' models; a {spec.kind} rubric "
                             "judges pairs.", hint="Use ci_width, excludes or gap_excludes.")  # fmt: skip
    bounds = spec.scale_for(rule.dimension or spec.dimensions[0])
    if bounds is None or not spec.answers_in_json:
        raise JurybenchError(f"--until needs scores: a {spec.kind} rubric's answers are labels.")
    low, high = float(bounds[0]), float(bounds[1])
    with writing(store) as con:  # a store by path is created or migrated first, as a run does
        subjects = subject_ids(con, spec, where, ids)
    if not subjects:
        raise JurybenchError(f"no {spec.subject_table} to judge{f' where {where}' if where else ''}.")
    order = list(subjects)
    random.Random(seed).shuffle(order)
    rho = sequential.rho_for(len(order), (high - low) / 2, rule.alpha)  # groups: a smaller n, still valid
    record: dict[str, Any] = {
        "rule": rule.text, "kind": rule.kind, "dimension": rule.dimension, "threshold": rule.threshold,
        "alpha": rule.alpha, "batch_items": batch_items, "seed": seed, "subjects_available": len(order),
        "scale": [low, high], "rho": rho, "method": sequential.METHOD, "looks": [],
    }  # fmt: skip
    result = None
    reason = "exhausted"
    for start in range(0, len(order), batch_items):
        result = judge(order[start : start + batch_items], run)
        run = result.run_id
        if result.status not in ("finished", "finished_with_errors"):
            reason = result.status  # interrupted or stopped by the budget: what was judged is kept
            break
        with reading(store) as con:
            figure = sequential.look_run(con, spec, rule, run, low, high, rho)
        record["looks"].append({"judged": min(start + batch_items, len(order)), **figure})
        if sequential.met(rule, figure):
            reason = "met"
            break
    assert result is not None
    record["stopped"] = reason
    record["judged"] = record["looks"][-1]["judged"] if record["looks"] else 0
    record["final"] = record["looks"][-1] if record["looks"] else None
    with contextlib.ExitStack() as held:
        if lock is not None:  # a store shared by threads (the service's): writes take its lock
            held.enter_context(lock)
        con = held.enter_context(writing(store))
        # The run's subjects are those judged in every batch (each batch's engine run counted its own).
        con.execute("UPDATE runs SET stopping = ?, n_subjects = (SELECT count(*) FROM run_subjects WHERE run_id = ?) "
                    "WHERE run_id = ?", [json.dumps(record), result.run_id, result.run_id])  # fmt: skip
    return result, record
