"""Two runs over the same subjects side by side (another jury, rubric version or model): per
criterion the difference of the jury means with a paired 95 % interval, the subjects that moved
most, and each juror both runs share, with how far its scores agree."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

MOVED = 50  # subjects listed by how much they moved


def _paired(diffs: list[float]) -> dict[str, Any]:
    """Mean difference with its paired t-interval (95 %)."""
    from scipy.stats import t

    n = len(diffs)
    mean = sum(diffs) / n
    if n < 2:
        return {"n": n, "diff": mean, "low": None, "high": None}
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    half = float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return {"n": n, "diff": mean, "low": mean - half, "high": mean + half}


def compare(con: Connection, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The comparison of ``runs`` (run headers): the first is the baseline, the second compared with it."""
    if len(runs) != 2:
        raise JurybenchError("compare two runs.", hint="Tick two runs on the runs page, or open /compare?run=A&run=B.")
    first, second = runs
    if first["mode"] != second["mode"]:
        raise JurybenchError(f"run '{first['run_id']}' is {first['mode']} and '{second['run_id']}' {second['mode']}.",
                             hint="Compare runs of the same kind (pointwise with pointwise, pairwise with pairwise).")  # fmt: skip
    pairwise = first["mode"] == "pairwise"
    view, dim, subject = ("pairwise", "category", "pair_id") if pairwise else ("pointwise", "criterion", "item_id")
    ids = [first["run_id"], second["run_id"]]
    rows = con.execute(
        f"SELECT a.{dim}, a.{subject}, a.jury_score, b.jury_score FROM jury_{view} a JOIN jury_{view} b "
        f"ON b.{subject} = a.{subject} AND b.{dim} = a.{dim} WHERE a.run_id = ? AND b.run_id = ? "
        "AND a.jury_score IS NOT NULL AND b.jury_score IS NOT NULL ORDER BY 1, 2", ids,
    ).fetchall()  # fmt: skip
    by_dim: dict[str, list[tuple[float, float]]] = {}
    by_subject: dict[str, list[tuple[str, float]]] = {}
    for d, s, x, y in rows:
        by_dim.setdefault(d, []).append((float(x), float(y)))
        by_subject.setdefault(s, []).append((d, float(y) - float(x)))
    criteria = [{"criterion": d, "mean_first": sum(x for x, _ in v) / len(v), "mean_second": sum(y for _, y in v) / len(v),
                 **_paired([y - x for x, y in v])} for d, v in by_dim.items()]  # fmt: skip
    changes = sorted(((sum(abs(c) for _, c in v) / len(v), s, max(v, key=lambda dc: abs(dc[1])))
                      for s, v in by_subject.items()), key=lambda m: (-m[0], m[1]))[:MOVED]  # fmt: skip
    moved = [{"id": s, "mean_abs_change": change, "largest": largest} for change, s, largest in changes]
    value = "juror_epsilon" if pairwise else "juror_score"
    jurors = [{"juror": juror, "n": int(n), "mean_abs_diff": mad, "exact": exact,
               "pearson": r if r is not None and not math.isnan(r) else None}
              for juror, n, mad, exact, r in con.execute(
                  f"SELECT a.juror, count(*), avg(abs(a.{value} - b.{value})), avg(CAST(a.{value} = b.{value} AS DOUBLE)), "
                  f"corr(a.{value}, b.{value}) FROM juror_{view} a JOIN juror_{view} b ON b.juror_key = a.juror_key "
                  f"AND b.{subject} = a.{subject} AND b.{dim} = a.{dim} WHERE a.run_id = ? AND b.run_id = ? "
                  f"AND a.{value} IS NOT NULL AND b.{value} IS NOT NULL GROUP BY a.juror ORDER BY a.juror", ids,
              ).fetchall()]  # fmt: skip
    return {"runs": runs, "pairwise": pairwise, "criteria": criteria, "moved": moved, "jurors": jurors,
            "n_subjects": len(by_subject)}  # fmt: skip
