"""What the viewer's pages show, read from the store's tables and views (one cursor per page).

Pages list at most ``PAGE`` rows and page on by key (``after=``), never by offset, so a page
of a big store costs what the page shows. A run's figures, juror table and disagreements are
aggregates over every judgment of the run: they are computed once per state of the run (its
status, end time and jury) and kept, since a finished run does not change."""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from jurybench.errors import JurybenchError, NotFound
from jurybench.stats import run_dimensions

if TYPE_CHECKING:
    from collections.abc import Mapping

    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store import Params

PAGE = 50
DISAGREEMENTS = 500  # the most disputed subjects kept per run and sort


T = TypeVar("T")


class _Memo:
    """A small LRU cache shared by the pages, keyed by the run's state."""

    def __init__(self, size: int = 256) -> None:
        self.size, self.items, self.lock = size, OrderedDict[Hashable, object](), threading.Lock()

    def clear(self) -> None:
        with self.lock:
            self.items.clear()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """What ``make()`` gave for ``key`` (the key names what was made, so its type is make's)."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return cast(T, self.items[key])
        value = make()
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return value


MEMO = _Memo()


def _dicts(cur: Connection) -> list[dict[str, object]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _query(con: Connection, sql: str, params: Params | Mapping[str, object] | None = None) -> list[dict[str, Any]]:
    return _dicts(con.execute(sql, params or []))


def _jurors_of(definition: Any) -> list[str]:
    try:
        return [str(j.get("name") or j.get("model") or "?") for j in json.loads(definition or "{}").get("jurors", [])]
    except (TypeError, ValueError, AttributeError):
        return []


# -- runs ------------------------------------------------------------------------------------
_RUNS = """
WITH counts AS (
    SELECT run_id, sum(n_calls) AS n_calls, sum(n_ok) AS n_ok, sum(n_invalid) AS n_invalid,
           sum(n_refusal) AS n_refusal, sum(n_error) AS n_error
    FROM run_summary GROUP BY run_id)
SELECT r.run_id, r.mode, r.status, r.n_subjects, r.selection, r.created_at, r.finished_at, r.jury_id,
       ru.name AS rubric, ru.version AS rubric_version, ru.kind AS rubric_kind,
       j.name AS jury_name, j.aggregation, j.quorum, j.tie_rule, j.calibration_id, j.definition,
       c.n_calls, c.n_ok, c.n_invalid, c.n_refusal, c.n_error,
       rc.cost_usd, rc.n_cost_known, rc.n_cost_unknown, rc.n_cached, rc.cached_cost_usd
FROM runs r JOIN rubrics ru USING (rubric_hash)
LEFT JOIN juries j ON j.jury_id = r.jury_id
LEFT JOIN counts c ON c.run_id = r.run_id
LEFT JOIN run_cost rc ON rc.run_id = r.run_id
"""


def _run_row(row: dict[str, Any]) -> dict[str, object]:
    row["jurors"] = _jurors_of(row.pop("definition", None))
    start, end = row.get("created_at"), row.get("finished_at")
    row["seconds"] = (end - start).total_seconds() if start is not None and end is not None else None
    return row


def store_of(con: Connection) -> str:
    """The store's file: cached aggregates are kept per store, not only per run id."""
    from jurybench.store import file_of

    return file_of(con)


def run_key(row: dict[str, object]) -> tuple[Any, ...]:
    """What a run's cached aggregates depend on."""
    return (
        row.get("store"),
        row["run_id"],
        row["status"],
        str(row.get("finished_at")),
        row.get("jury_id"),
        row.get("n_calls"),
    )


def runs_page(
    con: Connection, *, dataset: str = "", rubric: str = "", status: str = "", after: str = "", limit: int = PAGE
) -> dict[str, object]:
    """Runs, newest first, filtered by dataset (of any of their subjects), rubric name and status;
    ``after`` is the last run id of the previous page."""
    where, params = ["TRUE"], []
    if rubric:
        where.append("ru.name = ?")
        params.append(rubric)
    if status:
        where.append("r.status = ?")
        params.append(status)
    if dataset:
        where.append(
            "r.run_id IN (SELECT s.run_id FROM run_subjects s LEFT JOIN items i ON s.subject_kind = 'item' "
            "AND i.item_id = s.subject_id LEFT JOIN pairs p ON s.subject_kind = 'pair' AND p.pair_id = s.subject_id "
            "WHERE coalesce(i.dataset, p.dataset) = ?)"
        )
        params.append(dataset)
    if after:
        where.append("(r.created_at, r.run_id) < (SELECT (created_at, run_id) FROM runs WHERE run_id = ?)")
        params.append(after)
    rows = _query(
        con,
        f"{_RUNS} WHERE {' AND '.join(where)} ORDER BY r.created_at DESC, r.run_id DESC LIMIT ?",
        [*params, limit + 1],
    )
    more = len(rows) > limit
    store = store_of(con)
    rows = [{**_run_row(r), "store": store} for r in rows[:limit]]
    for row in rows:
        figures = run_figures(con, row)
        row["below_quorum"] = figures["below_quorum"]
        row["main"] = figures["figures"][0] if figures["figures"] else None  # the first criterion's jury mean
    choices = {
        "rubrics": [
            r[0]
            for r in con.execute(
                "SELECT DISTINCT name FROM rubrics JOIN runs USING (rubric_hash) ORDER BY 1"
            ).fetchall()
        ],
        "statuses": [r[0] for r in con.execute("SELECT DISTINCT status FROM runs ORDER BY 1").fetchall()],
        "datasets": [
            r[0]
            for r in con.execute(
                "SELECT DISTINCT dataset FROM (SELECT dataset FROM items UNION ALL SELECT dataset FROM pairs) "
                "WHERE dataset IS NOT NULL ORDER BY 1"
            ).fetchall()
        ],
    }
    return {
        "runs": rows,
        "next": rows[-1]["run_id"] if more and rows else None,
        "choices": choices,
        "filters": {"dataset": dataset, "rubric": rubric, "status": status},
    }


def run_header(con: Connection, run_id: str) -> dict[str, object]:
    """The run's row as the runs page shows it; kept per state of the run (a running run is
    read afresh each time)."""
    state = con.execute(
        "SELECT status, CAST(finished_at AS VARCHAR), jury_id FROM runs WHERE run_id = ?", [run_id]
    ).fetchall()
    if not state:
        raise NotFound(f"no run '{run_id}'.", hint="The runs page lists every run.")

    store = store_of(con)

    def make() -> dict[str, object]:
        return {**_run_row(_query(con, f"{_RUNS} WHERE r.run_id = ?", [run_id])[0]), "store": store}

    if state[0][0] == "running":
        return make()
    return dict(MEMO.get(("header", store, run_id, *state[0]), make))


def run_figures(con: Connection, run: dict[str, Any]) -> dict[str, Any]:
    """Per criterion (category): the jury's mean score with its 95 % CI, the subjects scored and
    below quorum; for pairwise runs also the shares won by A and by B."""

    from jurybench.stats.functions import mean_t_interval

    def make() -> dict[str, object]:
        pairwise = run["mode"] == "pairwise"
        view, dim, subject = (
            ("jury_pairwise", "category", "pair_id") if pairwise else ("jury_pointwise", "criterion", "item_id")
        )
        figures: list[dict[str, object]] = []
        below: set[Any] = set()
        dims = run_dimensions(con, run["run_id"])
        # A big run is read one criterion at a time (the jury view's hash tables stay one
        # criterion's size); a small one in one query (each query scans the whole view).
        big = (run.get("n_calls") or 0) * max(len(dims), 1) > 200_000
        select = (
            f"SELECT {dim}, count(jury_score), avg(jury_score), stddev_samp(jury_score), "
            f"count(*) FILTER (WHERE jury_score > 0), count(*) FILTER (WHERE jury_score < 0), "
            f"list({subject}) FILTER (WHERE below_quorum) FROM {view} WHERE run_id = ?"
        )
        if big:
            rows = [con.execute(f"{select} AND {dim} = ? GROUP BY {dim}", [run["run_id"], d]).fetchone() for d in dims]
        else:
            got = {r[0]: r for r in con.execute(f"{select} GROUP BY {dim}", [run["run_id"]]).fetchall()}
            rows = [got.get(d) for d in dims]
        for name, row in zip(dims, rows, strict=True):
            _, n, mean, sd, pos, neg, short = row or (name, 0, None, None, 0, 0, None)
            low, high = mean_t_interval(mean, sd, int(n))  # the 95 % t interval
            below.update(short or ())
            figures.append(
                {
                    "criterion": name,
                    "n": int(n),
                    "mean": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "share_a": pos / n if pairwise and n else None,
                    "share_b": neg / n if pairwise and n else None,
                    "below_quorum": len(short or ()),
                }
            )
        # Judgments by status: an import (HANNA's) keeps its invalid judgments in ok calls, so the
        # calls' counts alone showed 0 invalid where the import said 1,051.
        table = "pairwise_judgments" if pairwise else "pointwise_judgments"
        counts = dict(
            con.execute(
                f"SELECT j.status, count(*) FROM run_calls rc JOIN {table} j USING (call_key) "
                "WHERE rc.run_id = ? GROUP BY j.status",
                [run["run_id"]],
            ).fetchall()
        )
        judgments = {status: int(counts.get(status, 0)) for status in ("valid", "invalid", "refusal")}
        return {"figures": figures, "below_quorum": len(below), "pairwise": pairwise, "judgments": judgments}

    return MEMO.get(("figures", *run_key(run)), make)


def run_jurors(con: Connection, run: dict[str, object]) -> list[dict[str, object]]:
    """The juror table: outcome rates, cost, latency; flip rate and first-position win rate for
    pairwise runs."""

    def make() -> list[dict[str, object]]:
        rows = _query(
            con,
            """SELECT s.juror, s.model, s.juror_key, s.n_calls, s.n_ok, s.n_invalid, s.n_refusal, s.n_error,
                      s.cost_usd, s.n_costed, s.mean_latency_ms, rj.position,
                      ob.flip_rate, ob.n_valid AS n_pairs_both_orders, ps.first_position_win_rate
               FROM run_summary s
               LEFT JOIN run_jurors rj ON rj.run_id = s.run_id AND rj.juror_key = s.juror_key
               LEFT JOIN juror_order_bias ob ON ob.run_id = s.run_id AND ob.juror_key = s.juror_key
               LEFT JOIN juror_position_stats ps ON ps.run_id = s.run_id AND ps.juror_key = s.juror_key
               WHERE s.run_id = ? ORDER BY rj.position NULLS LAST, s.juror""",
            [run["run_id"]],
        )
        for r in rows:
            n = r["n_calls"] or 0
            for k in ("ok", "invalid", "refusal", "error"):
                r[f"{k}_rate"] = (r[f"n_{k}"] or 0) / n if n else None
        return rows

    return MEMO.get(("jurors", *run_key(run)), make)


def run_agreement(con: Connection, run: dict[str, Any]) -> dict[str, object]:
    """Each juror and the jury against the human mean per criterion (pointwise runs whose items
    have human labels); otherwise why there is none."""

    def make() -> dict[str, object]:
        if run["mode"] != "pointwise":
            return _preference_agreement(con, run)
        labelled = con.execute(
            "SELECT count(*) FROM (SELECT DISTINCT subject_id FROM human_labels WHERE subject_kind = 'item') h "
            "JOIN run_subjects s ON s.subject_id = h.subject_id AND s.subject_kind = 'item' WHERE s.run_id = ?",
            [run["run_id"]],
        ).fetchall()[0][0]
        if not labelled:
            return {"rows": [], "preference": [], "note": "No human labels on this run's items."}
        import numpy as np

        from jurybench.annotations import pointwise_data, score_agreement
        from jurybench.stats import silent_label

        try:
            blocks = pointwise_data(con, run["run_id"], None)
        except JurybenchError as exc:
            return {"rows": [], "preference": [], "note": exc.message}
        rows = []
        for data in blocks:
            raters = [
                *zip(data.jurors, data.juror_scores.T, strict=True),
                (f"jury ({data.rule['aggregation']})", data.jury),
            ]
            for k, (name, scores) in enumerate(raters):
                m = score_agreement(np.asarray(scores, dtype=float), data.human_mean)
                n = int((~np.isnan(scores) & ~np.isnan(data.human_mean)).sum())
                low, high = _fisher_ci(m.get("pearson"), n)
                rows.append(
                    {
                        "criterion": data.criterion,
                        # a juror (not the jury) with no valid score on a labelled item
                        "rater": silent_label(name, k < len(data.jurors) and bool(np.isnan(scores).all())),
                        "pearson": m.get("pearson"),
                        "low": low,
                        "high": high,
                        "mae": m.get("mae"),
                        "n": n,
                    }
                )
        return {"rows": rows, "preference": [], "note": f"{labelled} of the run's items have human labels."}

    return MEMO.get(("agreement", *run_key(run)), make)


READINGS_SHOWN = 6  # findings said in words; the table has them all
LEANING_LIMIT = 20_000  # subjects a page computes what the judge leans on for (beyond: the command)


def run_leaning(con: Connection, run: dict[str, Any]) -> dict[str, object]:
    """What the judge leans on (``stats bias`` with its defaults, not recorded): the findings
    in words and their figures; when nothing can be estimated (a classification run, no
    feature that varies), why not."""
    command = f"jurybench stats bias --run {run['run_id']}"

    def make() -> dict[str, object]:
        if not run.get("n_subjects"):
            return {"effects": [], "readings": [], "notes": [], "note": "No subjects yet.", "command": command}
        if int(run["n_subjects"]) > LEANING_LIMIT:
            return {
                "effects": [],
                "readings": [],
                "notes": [],
                "note": f"{run['n_subjects']} subjects: run the statistic from the command line.",
                "command": command,
            }
        from jurybench.stats import compute_bias as bias

        try:
            found = bias(
                con,
                str(run["run_id"]),
                features=None,
                against="auto",
                families={},
                where=None,
                cluster="prompt",
                correction="holm",
                alpha=0.05,
            )
        except JurybenchError as exc:
            return {"effects": [], "readings": [], "notes": [], "note": exc.message, "command": command}
        effects = [e for e in cast("list[dict[str, Any]]", found["effects"]) if e["significant"]]
        against = set(cast("dict[str, str]", found["against"]).values())
        how = {
            frozenset({"humans"}): "each juror's error against the human labels",
            frozenset({"prompts"}): "responses to the same prompt compared (no human labels)",
        }.get(frozenset(against), "against the human labels where a criterion has ten, else within prompts")
        note = (
            f"Features: {', '.join(cast('list[str]', found['features']))}; {how}; Holm over every juror x criterion "
            f"x feature, at 5 %."
        )
        readings = cast("list[str]", found["readings"]) if effects else []
        more = len(readings) - READINGS_SHOWN
        return {
            "effects": effects,
            "readings": readings[:READINGS_SHOWN] + ([f"… and {more} more in the table."] if more > 0 else []),
            "note": note + ("" if effects else " Nothing beyond chance."),
            "notes": found["notes"],
            "command": command,
        }

    return MEMO.get(("leaning", *run_key(run)), make)


def votes(run: dict[str, object]) -> bool:
    """Whether the run's rubric kind scores votes between two responses (a preference's A, B or
    tie), as its kind says."""
    from jurybench.rubric import rubric_kinds

    model = rubric_kinds().get(str(run.get("rubric_kind")))
    return model is not None and model.votes


def _preference_agreement(con: Connection, run: dict[str, Any]) -> dict[str, object]:
    """A/B runs: each juror's and the jury's accuracy against the human majority in each order."""
    if not votes(run):
        return {
            "rows": [],
            "preference": [],
            "note": "Agreement with human labels is shown for pointwise and preference (A/B) runs.",
        }
    from jurybench.annotations import preference_accuracy
    from jurybench.stats import silent_label

    try:
        report = preference_accuracy(con, run["run_id"]).as_dict()
    except JurybenchError as exc:
        return {"rows": [], "preference": [], "note": exc.message}
    if not report["n_pairs"]:
        return {"rows": [], "preference": [], "note": "No human preference labels on this run's pairs."}
    rows = [
        {
            "rater": silent_label(r["juror"], bool(r.get("no_valid_answers"))),
            "ab": r["correct_ab_rate"],
            "ba": r["correct_ba_rate"],
            "both": r["both_correct_rate"],
            "consistent": r["consistent_rate"],
        }
        for r in [*report["jurors"], report["jury"]]
    ]
    return {
        "rows": [],
        "preference": rows,
        "note": f"{report['n_pairs']} pairs with a human majority label ({report['reference']}).",
    }


def _fisher_ci(r: Any, n: int) -> tuple[float | None, float | None]:
    """The 95 % interval of a Pearson correlation by Fisher's z (tanh(atanh r -+ 1.96 / sqrt(n - 3)))."""
    if r is None or n < 4 or math.isnan(float(r)) or abs(float(r)) >= 1:
        return None, None
    z, half = math.atanh(float(r)), 1.959963984540054 / math.sqrt(n - 3)
    return math.tanh(z - half), math.tanh(z + half)


def run_subjects(con: Connection, run: dict[str, object], *, after: str = "", limit: int = PAGE) -> dict[str, object]:
    """A page of the run's items or pairs (by id) with their jury scores per criterion."""
    kind = "pair" if run["mode"] == "pairwise" else "item"
    ids = [
        r[0]
        for r in con.execute(
            "SELECT subject_id FROM run_subjects WHERE run_id = ? AND subject_kind = ? AND subject_id > ? "
            "ORDER BY subject_id LIMIT ?",
            [run["run_id"], kind, after, limit + 1],
        ).fetchall()
    ]
    more, ids = len(ids) > limit, ids[:limit]
    return {**subject_rows(con, run, ids), "next": ids[-1] if more else None}


def subject_rows(con: Connection, run: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    """The run's subjects ``ids`` (in that order) with their model, language, dataset, prompt and
    jury score per criterion."""
    if not ids:
        return {"rows": [], "criteria": []}
    marks = ", ".join("?" for _ in ids)
    # A key range reaches the view's base tables; an IN list does not, and costs a scan of the
    # whole run (the run page's ids are consecutive in the run's order; a found page's may not
    # be, and the range's extra rows are dropped below).
    low, high = min(ids), max(ids)
    if run["mode"] != "pairwise":
        info = _query(
            con, f"SELECT item_id AS id, model, language, dataset, prompt FROM items WHERE item_id IN ({marks})", ids
        )
        scores = con.execute(
            "SELECT item_id, criterion, jury_score FROM jury_pointwise WHERE run_id = ? "
            "AND item_id >= ? AND item_id <= ?",
            [run["run_id"], low, high],
        ).fetchall()
    else:
        info = _query(
            con,
            f"SELECT p.pair_id AS id, a.model || ' vs ' || b.model AS model, a.language, p.dataset, "
            f"a.prompt FROM pairs p JOIN items a ON a.item_id = p.item_a JOIN items b "
            f"ON b.item_id = p.item_b WHERE p.pair_id IN ({marks})",
            ids,
        )
        scores = con.execute(
            "SELECT pair_id, category, jury_score FROM jury_pairwise WHERE run_id = ? "
            "AND pair_id >= ? AND pair_id <= ?",
            [run["run_id"], low, high],
        ).fetchall()
    by_id = {r["id"]: {**r, "scores": {}} for r in info}
    criteria: list[str] = []
    for sid, crit, score in scores:
        if crit not in criteria:
            criteria.append(crit)
        if sid in by_id:
            by_id[sid]["scores"][crit] = score
    rows = [by_id.get(i, {"id": i, "scores": {}}) for i in ids]
    order = run_dimensions(con, run["run_id"])
    criteria.sort(key=lambda c: order.index(c) if c in order else len(order))
    return {"rows": rows, "criteria": criteria}


def run_results(con: Connection, run_id: str) -> list[dict[str, Any]]:
    return _query(
        con,
        "SELECT result_id, name, params, seed, created_at FROM stats_results WHERE run_id = ? "
        "ORDER BY created_at DESC, result_id",
        [run_id],
    )


def run_calibration(con: Connection, run: dict[str, object]) -> dict[str, Any] | None:
    """The calibration the run's jury applies, else the newest one fitted on the run."""
    if run.get("calibration_id"):
        rows = _query(
            con,
            "SELECT calibration_id, name, kind, created_at FROM calibrations WHERE calibration_id = ?",
            [run["calibration_id"]],
        )
        return rows[0] if rows else None
    rows = _query(
        con,
        "SELECT calibration_id, name, kind, created_at FROM calibrations "
        "WHERE body->>'source_run' = ? ORDER BY created_at DESC LIMIT 1",
        [run["run_id"]],
    )
    return rows[0] if rows else None
