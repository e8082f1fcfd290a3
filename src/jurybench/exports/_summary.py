"""What an export says of a run, read from the store: its record, the jury's figures per
criterion (pointwise: the mean with a 95 % t interval over subjects; pairwise: the jury's
symmetrized score per category), each juror's calls by outcome, cost and latency, and the
statistics recorded on it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


@dataclass(frozen=True)
class Figure:
    """The jury's mean over the run's subjects on one criterion (or category), with a 95 % t
    interval (None below two subjects)."""

    criterion: str
    mean: float
    n: int
    low: float | None
    high: float | None


@dataclass(frozen=True)
class JurorLine:
    juror: str
    model: str
    calls: int
    ok: int
    invalid: int
    refusal: int
    error: int
    cost_usd: float | None
    mean_latency_ms: float | None
    flip_rate: float | None = None


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    record: dict[str, Any]
    figures: list[Figure]
    jurors: list[JurorLine]
    statistics: list[dict[str, Any]] = field(default_factory=list)
    cost_usd: float | None = None
    n_calls: int = 0
    n_cached: int = 0


def _figures(con: Connection, run_id: str, mode: str) -> list[Figure]:
    if mode == "pairwise":
        sql = """SELECT category, avg(jury_score), stddev_samp(jury_score), count(jury_score)
                 FROM jury_pairwise WHERE run_id = ? AND jury_score IS NOT NULL GROUP BY 1 ORDER BY 1"""
    else:
        sql = """SELECT criterion, avg(jury_score), stddev_samp(jury_score), count(jury_score)
                 FROM jury_pointwise WHERE run_id = ? AND jury_score IS NOT NULL GROUP BY 1 ORDER BY 1"""
    from jurybench.stats.functions import mean_t_interval

    out = []
    for name, mean, sd, n in con.execute(sql, [run_id]).fetchall():
        low, high = mean_t_interval(float(mean), None if sd is None else float(sd), int(n))
        out.append(Figure(str(name), float(mean), int(n), low, high))
    return out


def _jurors(con: Connection, run_id: str, mode: str) -> list[JurorLine]:
    flips: dict[str, float] = {}
    if mode == "pairwise":
        flips = {
            str(j): float(f)
            for j, f in con.execute(
                "SELECT juror, flip_rate FROM juror_order_bias WHERE run_id = ? AND flip_rate IS NOT NULL", [run_id]
            ).fetchall()
        }
    rows = con.execute(
        """SELECT juror, model, n_calls, n_ok, n_invalid, n_refusal, n_error, cost_usd, mean_latency_ms
           FROM run_summary WHERE run_id = ? ORDER BY juror""",
        [run_id],
    ).fetchall()
    return [
        JurorLine(
            juror=str(r[0]),
            model=str(r[1]),
            calls=int(r[2] or 0),
            ok=int(r[3] or 0),
            invalid=int(r[4] or 0),
            refusal=int(r[5] or 0),
            error=int(r[6] or 0),
            cost_usd=None if r[7] is None else float(r[7]),
            mean_latency_ms=None if r[8] is None else float(r[8]),
            flip_rate=flips.get(str(r[0])),
        )
        for r in rows
    ]


def summarize_run(con: Connection, run_id: str) -> RunSummary:
    """The run ``run_id`` as an export tells it; one line naming the stored runs when it is not
    there."""
    row = con.execute(
        """SELECT r.run_id, ru.name, ru.version, ru.kind, r.mode, r.status, r.selection, r.n_subjects,
                  r.orders, r.created_at, r.finished_at, j.aggregation, j.quorum, r.jurors, r.rubric_hash
           FROM runs r JOIN rubrics ru USING (rubric_hash) LEFT JOIN juries j ON j.jury_id = r.jury_id
           WHERE r.run_id = ?""",
        [run_id],
    ).fetchone()
    if row is None:
        known = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 10").fetchall()]
        raise JurybenchError(
            f"no run '{run_id}' in the store.",
            hint=f"Runs: {', '.join(known)}." if known else "The store has no runs yet: jurybench score first.",
        )
    keys = ("run_id", "rubric", "rubric_version", "rubric_kind", "mode", "status", "selection", "n_subjects")
    record: dict[str, Any] = dict(zip(keys, row[:8], strict=True))
    record.update(
        orders=row[8],
        created_at=None if row[9] is None else row[9].isoformat(),
        finished_at=None if row[10] is None else row[10].isoformat(),
        aggregation=row[11],
        quorum=row[12],
        rubric_hash=row[14],
    )
    panel = con.execute("SELECT name FROM run_jurors WHERE run_id = ? ORDER BY position", [run_id]).fetchall()
    record["jurors"] = [str(n) for (n,) in panel] or json.loads(row[13] or "[]")  # the jury's own order
    mode = str(row[4])
    cost = con.execute("SELECT cost_usd, n_calls, n_cached FROM run_cost WHERE run_id = ?", [run_id]).fetchone()
    statistics = [
        {"result_id": r[0], "name": r[1], "params": json.loads(r[2] or "{}"), "result": json.loads(r[3] or "null")}
        for r in con.execute(
            "SELECT result_id, name, params, result FROM stats_results WHERE run_id = ? ORDER BY created_at", [run_id]
        ).fetchall()
    ]
    return RunSummary(
        run_id=run_id,
        record=record,
        figures=_figures(con, run_id, mode),
        jurors=_jurors(con, run_id, mode),
        statistics=statistics,
        cost_usd=None if cost is None or cost[0] is None else float(cost[0]),
        n_calls=0 if cost is None else int(cost[1] or 0),
        n_cached=0 if cost is None else int(cost[2] or 0),
    )


def scores_csv(con: Connection, run_id: str, mode: str) -> str:
    """The jury's score per subject and criterion (category), as CSV."""
    import csv
    import io

    if mode == "pairwise":
        sql = """SELECT pair_id AS subject_id, category AS criterion, jury_score, n_jurors_present
                 FROM jury_pairwise WHERE run_id = ? ORDER BY 1, 2"""
    else:
        sql = """SELECT item_id AS subject_id, criterion, jury_score, n_jurors_present
                 FROM jury_pointwise WHERE run_id = ? ORDER BY 1, 2"""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["subject_id", "criterion", "jury_score", "n_jurors_present"])
    for r in con.execute(sql, [run_id]).fetchall():
        writer.writerow(["" if v is None else v for v in r])
    return out.getvalue()
