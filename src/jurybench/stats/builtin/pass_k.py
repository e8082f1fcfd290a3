"""pass_k: how reliably an agent succeeds over repeated trials of a task (stats/_pass_k.py)."""

from __future__ import annotations

from collections import defaultdict
from typing import Annotated, Any

from jurybench.declare import NAME_HTTP, param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection

# What --where reads: each trial of a task, as the store's conversations hold it.
COLUMNS = (
    "item_id, task_id, trial, agent_model, dataset, outcome, outcome_passed, outcome_source, n_messages, n_tool_calls"
)


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    rater = result.get("rater") is not None
    cols = ["agent_model", "k", "pass_k", "ci_low", "ci_high", "n_tasks"]
    if rater:
        cols += ["rater_pass_k", "rater_ci_low", "rater_ci_high", "gap", "gap_low", "gap_high"]
    rows: list[list[object]] = []
    for model, block in result["agents"].items():
        for k, row in enumerate(block["verified"]):
            line: list[object] = [model, row["k"], row["pass_k"], row["ci_low"], row["ci_high"], row["n_tasks"]]
            if rater:
                r, g = block["rater"][k], block["gap"][k]
                line += [r["pass_k"], r["ci_low"], r["ci_high"], g["gap"], g["gap_low"], g["gap_high"]]
            rows.append(line)
    if summary:
        for model, block in result["agents"].items():
            trials = block["trials_per_task"]
            rows.append(
                [
                    f"{model}: {block['n_tasks']} task{'s' if block['n_tasks'] != 1 else ''}, {trials[0]}"
                    + (f"-{trials[1]}" if trials[1] != trials[0] else "")
                    + f" trials each, {block['n_successes']} of {block['n_trials']} trials succeeded",
                    *([None] * (len(cols) - 1)),
                ]
            )
    return cols, rows


@statistic("pass-k", table=table)
def pass_k(
    con: Connection,
    *,
    k: Annotated[
        int | None,
        param("One k (default: every k from 1 to the fewest trials of a task).", number="count", at_least=1),
    ] = None,
    where: params.Where = None,
    run: Annotated[
        str | None,
        param(
            "A run that judged the conversations: its jury's verdicts' pass^k beside the verified one.", http=NAME_HTTP
        ),
    ] = None,
    criterion: Annotated[
        str | None, param("--run: the criterion whose jury score is the verdict.", http={"max_length": 256})
    ] = None,
    threshold: Annotated[
        float | None,
        param("--run: a jury score at or above this is a success.", number="value"),
    ] = None,
) -> dict[str, object]:
    """pass^k per agent model from the conversations' verified outcomes (each task's trials,
    docs/statistics.md), with a t interval over tasks; with ``run``, the jury's verdicts' pass^k
    (score >= ``threshold`` on ``criterion``) and its gap from the verified one, paired by task."""

    from jurybench.errors import JurybenchError
    from jurybench.stats._pass_k import pass_k as estimate
    from jurybench.stats._pass_k import pass_k_gap
    from jurybench.store import select_table

    if run is not None and (criterion is None or threshold is None):
        raise JurybenchError("--run needs --criterion and --threshold: which score, and from what on it is a success.")
    table_ = con.sql(
        f"SELECT {COLUMNS} FROM conversations JOIN items USING (item_id) WHERE task_id IS NOT NULL"
    ).to_arrow_table()
    rows = select_table(table_, where, option="--where", order_by="item_id").to_pylist()
    if not rows:
        raise JurybenchError(
            f"stats pass-k: no conversation with a task{f' where {where}' if where else ''}.",
            hint="Import trials with their task ids (items import --format tau-bench, or --map task_id=FIELD).",
        )
    verdicts = _verdicts(con, run, criterion, threshold) if run is not None else {}
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_model[str(r["agent_model"] or "(unknown)")].append(r)
    agents: dict[str, object] = {}
    for model, trials in sorted(by_model.items()):
        verified: dict[str, list[bool]] = defaultdict(list)
        unverified = 0
        for r in trials:
            if r["outcome_passed"] is None:
                unverified += 1
                continue
            verified[str(r["task_id"])].append(bool(r["outcome_passed"]))
        if not verified:
            raise JurybenchError(
                f"stats pass-k: {model}'s {len(trials)} trial{'s have' if len(trials) != 1 else ' has'} no verified "
                "outcome.",
                hint="Import them with their rewards (--map outcome=FIELD), or judge them and give --run.",
            )
        counts = [len(v) for v in verified.values()]
        ks = [k] if k is not None else list(range(1, min(counts) + 1))
        block: dict[str, Any] = {
            "n_tasks": len(verified),
            "n_trials": sum(counts),
            "n_successes": sum(sum(v) for v in verified.values()),
            "trials_per_task": [min(counts), max(counts)],
            "n_without_outcome": unverified,
            "verified": estimate(verified, ks),
        }
        if run is not None:
            rated: dict[str, list[bool]] = defaultdict(list)
            for r in trials:
                if r["item_id"] in verdicts:
                    rated[str(r["task_id"])].append(verdicts[r["item_id"]])
            if not rated:
                raise JurybenchError(f"--run {run}: it judged none of {model}'s trials (on {criterion}).")
            block["rater"] = estimate(rated, ks)
            block["gap"] = pass_k_gap(rated, verified, ks)
        agents[model] = block
    return {
        "agents": agents,
        "rater": None if run is None else {"run": run, "criterion": criterion, "threshold": threshold},
        "level": 0.95,
        "interval": "Student t over tasks (each task's unbiased C(c,k)/C(n,k)), cut to [0, 1]",
    }


def _verdicts(con: Connection, run: str, criterion: str | None, threshold: float | None) -> dict[str, bool]:
    """The run's jury verdict per conversation: its score on ``criterion`` at or above ``threshold``."""
    from jurybench.errors import JurybenchError
    from jurybench.stats.sql import check_run

    check_run(con, run)
    found = con.execute(
        "SELECT item_id, jury_score FROM jury_pointwise WHERE run_id = ? AND criterion = ? AND jury_score IS NOT NULL",
        [run, criterion],
    ).fetchall()
    if not found:
        known = [
            r[0]
            for r in con.execute("SELECT DISTINCT criterion FROM jury_pointwise WHERE run_id = ?", [run]).fetchall()
        ]
        raise JurybenchError(
            f"--run {run}: no jury score on {criterion!r}.",
            hint=f"Its criteria: {', '.join(sorted(map(str, known))) or 'none (a pointwise run is needed)'}.",
        )
    assert threshold is not None
    return {str(item): float(score) >= threshold for item, score in found}
