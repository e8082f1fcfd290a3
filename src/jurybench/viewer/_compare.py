"""Two runs over the same subjects side by side (another jury, rubric version or model): per
criterion the difference of the jury means with a paired 95 % interval, the subjects that moved
most, and each juror both runs share, with how far its scores agree."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.viewer._data import votes

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

MOVED = 50  # subjects listed by how much they moved


def _paired(diffs: list[float]) -> dict[str, object]:
    """Mean difference with its paired t-interval (95 %)."""
    from jurybench.stats.functions import mean_t_interval

    n = len(diffs)
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) if n > 1 else None
    low, high = mean_t_interval(mean, sd, n)
    return {"n": n, "diff": mean, "low": low, "high": high}


def compare(con: Connection, runs: list[dict[str, Any]]) -> dict[str, object]:
    """The comparison of ``runs`` (run headers): the first is the baseline, the second compared with it."""
    if len(runs) != 2:
        raise JurybenchError("compare two runs.", hint="Tick two runs on the runs page, or open /compare?run=A&run=B.")
    first, second = runs
    if first["mode"] != second["mode"]:
        raise JurybenchError(
            f"run '{first['run_id']}' is {first['mode']} and '{second['run_id']}' {second['mode']}.",
            hint="Compare runs of the same kind (pointwise with pointwise, pairwise with pairwise).",
        )
    pairwise = first["mode"] == "pairwise"
    view, dim, subject = ("pairwise", "category", "pair_id") if pairwise else ("pointwise", "criterion", "item_id")
    ids = [first["run_id"], second["run_id"]]
    rows = con.execute(
        f"SELECT a.{dim}, a.{subject}, a.jury_score, b.jury_score FROM jury_{view} a JOIN jury_{view} b "
        f"ON b.{subject} = a.{subject} AND b.{dim} = a.{dim} WHERE a.run_id = ? AND b.run_id = ? "
        "AND a.jury_score IS NOT NULL AND b.jury_score IS NOT NULL ORDER BY 1, 2",
        ids,
    ).fetchall()
    by_dim: dict[str, list[tuple[float, float]]] = {}
    by_subject: dict[str, list[tuple[str, float]]] = {}
    for d, s, x, y in rows:
        by_dim.setdefault(d, []).append((float(x), float(y)))
        by_subject.setdefault(s, []).append((d, float(y) - float(x)))
    criteria = [
        {
            "criterion": d,
            "mean_first": sum(x for x, _ in v) / len(v),
            "mean_second": sum(y for _, y in v) / len(v),
            **_paired([y - x for x, y in v]),
        }
        for d, v in by_dim.items()
    ]
    changes = sorted(
        ((sum(abs(c) for _, c in v) / len(v), s, max(v, key=lambda dc: abs(dc[1]))) for s, v in by_subject.items()),
        key=lambda m: (-m[0], m[1]),
    )[:MOVED]
    moved = [{"id": s, "mean_abs_change": change, "largest": largest} for change, s, largest in changes]
    value = "juror_epsilon" if pairwise else "juror_score"
    jurors = [
        {
            "juror": juror,
            "n": int(n),
            "mean_abs_diff": mad,
            "exact": exact,
            "pearson": r if r is not None and not math.isnan(r) else None,
        }
        for juror, n, mad, exact, r in con.execute(
            f"SELECT a.juror, count(*), avg(abs(a.{value} - b.{value})), avg(CAST(a.{value} = b.{value} AS DOUBLE)), "
            f"corr(a.{value}, b.{value}) FROM juror_{view} a JOIN juror_{view} b ON b.juror_key = a.juror_key "
            f"AND b.{subject} = a.{subject} AND b.{dim} = a.{dim} WHERE a.run_id = ? AND b.run_id = ? "
            f"AND a.{value} IS NOT NULL AND b.{value} IS NOT NULL GROUP BY a.juror ORDER BY a.juror",
            ids,
        ).fetchall()
    ]
    verdicts = _verdicts(con, ids) if votes(first) and votes(second) else None
    if verdicts is not None:  # a preference changes by its verdict: only the pairs whose verdict changed
        moved = []
    return {
        "runs": runs,
        "pairwise": pairwise,
        "drift": judge_drift(con, first["run_id"], second["run_id"]),
        "criteria": criteria,
        "moved": moved,
        "jurors": jurors,
        "n_subjects": len(by_subject),
        "verdicts": verdicts,
    }


def judge_drift(con: Connection, before: str, after: str) -> dict[str, object]:
    """Did the judge move from ``before`` to ``after`` (``stats drift``: the shift on the anchors,
    the headline change and the rest, not recorded), or why not."""
    from jurybench.stats import compute_drift as drift

    command = f"jurybench stats drift --from {before} --to {after}"
    try:
        found = drift(con, after, before, alpha=0.05)
    except JurybenchError as exc:
        return {"rows": [], "readings": [], "note": exc.message, "command": command}
    return {"rows": found["rows"], "readings": found["readings"], "note": "", "command": command, **found}


def _verdict(score: float | None) -> str | None:
    if score is None:
        return None
    return "A" if score > 0 else "B" if score < 0 else "tie"


def _verdicts(con: Connection, ids: list[str]) -> dict[str, object]:
    """Two preference runs by their verdicts (the sign of each run's jury score, by its own rule):
    the pairs whose verdict changed and, where pairs have human preference labels (their majority,
    as 'report preference' reads them), each run's accuracy against them with the paired
    difference and McNemar's exact test on the pairs one run got right and the other wrong."""
    from scipy.stats import binomtest

    rows = con.execute(
        "SELECT a.pair_id, a.jury_score, b.jury_score FROM jury_pairwise a JOIN jury_pairwise b "
        "ON b.pair_id = a.pair_id AND b.category = a.category WHERE a.run_id = ? AND b.run_id = ? "
        "AND a.category = 'preference' ORDER BY a.pair_id",
        ids,
    ).fetchall()
    gold = {
        pid: ("A" if value > 0 else "B" if value < 0 else "tie")
        for pid, value in con.execute(
            "SELECT subject_id, sign(avg(sign(value))) FROM human_labels WHERE criterion = 'preference' "
            "AND subject_kind = 'pair' GROUP BY subject_id"
        ).fetchall()
    }
    changed, both = [], 0
    right = {"first": 0, "second": 0, "only_first": 0, "only_second": 0, "n": 0}
    for pid, x, y in rows:
        va, vb = _verdict(x), _verdict(y)
        if va is None or vb is None:
            continue
        both += 1
        truth = gold.get(pid)
        if va != vb:
            changed.append({"id": pid, "first": va, "second": vb, "gold": truth})
        if truth is not None:
            right["n"] += 1
            right["first"] += va == truth
            right["second"] += vb == truth
            right["only_first"] += va == truth != vb
            right["only_second"] += vb == truth != va
    accuracy = None
    if right["n"]:
        discordant = right["only_first"] + right["only_second"]
        p = binomtest(right["only_second"], discordant, 0.5).pvalue if discordant else 1.0
        accuracy = {
            **right,
            "acc_first": right["first"] / right["n"],
            "acc_second": right["second"] / right["n"],
            "diff": (right["second"] - right["first"]) / right["n"],
            "p_mcnemar": float(p),
        }
    return {"n": both, "n_changed": len(changed), "changed": changed[:MOVED], "accuracy": accuracy}
