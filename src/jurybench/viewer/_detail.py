"""The viewer's detail pages: one item or pair of a run, disagreements, statistics results and
calibrations."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from jurybench.errors import NotFound
from jurybench.viewer._data import DISAGREEMENTS, MEMO, PAGE, _query, run_key

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def _json(value: object) -> Any:  # parsed JSON text
    if value is None or not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


# A tool result (or any message) longer than this is shown folded, opened on a click.
FOLD_CHARS = 1_200


def conversation_of(con: Connection, item_id: str) -> dict[str, Any] | None:
    """A stored conversation as its page shows it: the head (task, trial, verified outcome,
    reference actions) and each message with its tool calls, each result tied to its call."""
    from jurybench.store import answers, load_conversation

    found = load_conversation(con, item_id)
    if found is None:
        return None
    answered = {result: call for (call, _), result in answers(found.messages).items()}  # as the store tied them
    messages: list[dict[str, Any]] = []
    for k, m in enumerate(found.messages):
        messages.append(
            {
                "position": k,
                "role": m.role,
                "content": m.content or "",
                "name": m.name,
                "tool_call_id": m.tool_call_id,
                "answers": answered.get(k),
                "folded": len(m.content or "") > FOLD_CHARS,
                "calls": [
                    {
                        "tool": c.tool,
                        "call_id": c.call_id,
                        "arguments": json.dumps(c.arguments, indent=2, ensure_ascii=False, sort_keys=True),
                    }
                    for c in m.tool_calls
                ],
                "elided_for": [],
            }
        )
    return {
        "task": found.task,
        "task_id": found.task_id,
        "trial": found.trial,
        "agent_model": found.agent_model,
        "outcome": found.outcome,
        "outcome_passed": found.outcome_passed,
        "outcome_source": found.outcome_source,
        "reference_actions": [
            {"tool": a.get("tool"), "arguments": json.dumps(a.get("arguments"), ensure_ascii=False, sort_keys=True)}
            for a in found.reference_actions or []
        ],
        "messages": messages,
        "n_tool_calls": sum(len(m["calls"]) for m in messages),
    }


def _mark_elided(shown: dict[str, Any], calls: list[dict[str, Any]]) -> None:
    """Each message a juror's call was not shown (cut to its context): marked with the juror."""
    for c in calls:
        cut = _json(c.pop("presentation", None)) if "presentation" in c else None
        if not isinstance(cut, dict) or "cut" not in cut:
            continue
        for side, record in cut["cut"].items():
            it = shown.get({"conversation": "item", "a": "a", "b": "b"}.get(side, "item"))
            conversation = (it or {}).get("conversation")
            if not conversation:
                continue
            for k in record.get("messages_elided", []):
                if k < len(conversation["messages"]) and c["juror"] not in conversation["messages"][k]["elided_for"]:
                    conversation["messages"][k]["elided_for"].append(c["juror"])


def subject(con: Connection, run: dict[str, Any], subject_id: str) -> dict[str, object]:
    """An item or pair as the run judged it: its texts, every call of every juror (both orders,
    every sample) with the raw answer and the parsed judgments, the jury score per criterion and
    the human labels."""
    pairwise = run["mode"] == "pairwise"
    if pairwise:
        pairs = _query(con, "SELECT * FROM pairs WHERE pair_id = ?", [subject_id])
        if not pairs:
            raise NotFound(f"no pair '{subject_id}'.")
        pair = pairs[0]
        items = {
            r["item_id"]: r
            for r in _query(con, "SELECT * FROM items WHERE item_id IN (?, ?)", [pair["item_a"], pair["item_b"]])
        }
        shown = {"pair": pair, "a": items.get(pair["item_a"]), "b": items.get(pair["item_b"])}
    else:
        rows = _query(con, "SELECT * FROM items WHERE item_id = ?", [subject_id])
        if not rows:
            raise NotFound(f"no item '{subject_id}'.")
        shown = {"item": rows[0]}
    for text in shown.values():
        if text is not None:
            for key in ("treatment", "metadata"):
                if key in text:
                    text[key] = _json(text[key])
    for side in ("item", "a", "b"):
        it = shown.get(side)
        if it is not None and it.get("shape") == "conversation":
            it["conversation"] = conversation_of(con, str(it["item_id"]))
    calls = _query(
        con,
        """SELECT c.call_key, c.juror_key, coalesce(rj.name, ju.name) AS juror, ju.model, c.presented_order,
                  c.sample_index, c.status, c.reason, c.attempts, c.response_text, c.finish_reason, c.messages,
                  c.cost_usd, c.latency_ms, c.presentation
           FROM run_calls rc JOIN calls c USING (call_key) LEFT JOIN jurors ju ON ju.juror_key = c.juror_key
           LEFT JOIN run_jurors rj ON rj.run_id = rc.run_id AND rj.juror_key = c.juror_key
           WHERE rc.run_id = ? AND c.subject_id = ? AND c.subject_kind = ?
           ORDER BY rj.position NULLS LAST, juror, c.presented_order NULLS FIRST, c.sample_index""",
        [run["run_id"], subject_id, "pair" if pairwise else "item"],
    )
    keys = [c["call_key"] for c in calls]
    judgments: dict[str, list[dict[str, object]]] = {k: [] for k in keys}
    if keys:
        marks = ", ".join("?" for _ in keys)
        table, dim = ("pairwise_judgments", "category") if pairwise else ("pointwise_judgments", "criterion")
        for j in _query(
            con,
            f"SELECT call_key, {dim} AS criterion, score, status, reason, rationale FROM {table} "
            f"WHERE call_key IN ({marks}) ORDER BY call_key, criterion",
            keys,
        ):
            judgments[j.pop("call_key")].append(j)
    for c in calls:
        c["judgments"] = judgments.get(c["call_key"], [])
        c["messages"] = _json(c["messages"])
    _mark_elided(shown, calls)
    view, dim, sid = (
        ("jury_pairwise", "category", "pair_id") if pairwise else ("jury_pointwise", "criterion", "item_id")
    )
    jury = _query(
        con,
        f"SELECT {dim} AS criterion, jury_score, n_jurors_present, n_jurors_expected, below_quorum "
        f"FROM {view} WHERE run_id = ? AND {sid} = ? ORDER BY 1",
        [run["run_id"], subject_id],
    )
    humans = _query(
        con,
        "SELECT criterion, annotator, value, label, note FROM human_labels WHERE subject_id = ? "
        "AND subject_kind = ? ORDER BY criterion, annotator",
        [subject_id, "pair" if pairwise else "item"],
    )
    orders = _both_orders(con, run["run_id"], subject_id, jury) if pairwise else None
    return {
        "pairwise": pairwise,
        "shown": shown,
        "calls": calls,
        "jury": jury,
        "humans": humans,
        "id": subject_id,
        "orders": orders,
    }


def _both_orders(con: Connection, run_id: str, pair_id: str, jury: list[dict[str, object]]) -> dict[str, object]:
    """A pair as a pair: per category, each juror's mean score in each order (AB: A shown first;
    BA: B shown first, in that order's frame), its symmetrized ε = (AB - BA) / 2, whether it
    flipped (its verdict changes sign with the order), and the jury's ε."""
    # The jurors in the jury's order (rows in no given order would shuffle the columns between visits).
    rows = _query(
        con,
        """SELECT v.category, v.juror, v.juror_score_ab AS ab, v.juror_score_ba AS ba,
                                 v.juror_epsilon AS eps
                          FROM juror_pairwise v JOIN run_jurors rj ON rj.run_id = v.run_id AND rj.juror_key = v.juror_key
                          WHERE v.run_id = ? AND v.pair_id = ? ORDER BY v.category, rj.position""",
        [run_id, pair_id],
    )
    jurors = list(dict.fromkeys(r["juror"] for r in rows))
    jury_eps = {j["criterion"]: j["jury_score"] for j in jury}
    grid: dict[str, dict[str, Any]] = {}
    for r in rows:
        ab, ba = r["ab"], r["ba"]
        flip = ab is not None and ba is not None and ab != 0 and ba != 0 and (ab > 0) == (ba > 0)
        cell = {"ab": ab, "ba": ba, "eps": r["eps"], "flip": flip}
        grid.setdefault(r["category"], {"jurors": {}, "jury": jury_eps.get(r["category"])})["jurors"][r["juror"]] = cell
    return {"jurors": jurors, "categories": grid}


_POINTWISE_DISPUTES = """
SELECT item_id AS id, criterion, max(juror_score) - min(juror_score) AS spread, stddev_pop(juror_score) AS sd,
       count(juror_score) AS n_jurors, list(juror || '=' || CAST(round(juror_score, 2) AS VARCHAR) ORDER BY juror)
           FILTER (WHERE juror_score IS NOT NULL) AS scores,
       0 AS flips
FROM juror_pointwise WHERE run_id = ? GROUP BY ALL HAVING count(juror_score) >= 2
"""
_PAIRWISE_DISPUTES = """
WITH flips AS (
    SELECT s.pair_id, s.category, count(*) FILTER (WHERE s.epsilon IS NOT NULL
               AND sign(s.score_ab) <> sign(-s.score_ba)) AS flips
    FROM pairwise_symmetrized s JOIN run_jurors rj ON rj.juror_key = s.juror_key
    JOIN runs r ON r.run_id = rj.run_id AND r.rubric_hash = s.rubric_hash
    JOIN run_subjects rs ON rs.run_id = r.run_id AND rs.subject_kind = 'pair' AND rs.subject_id = s.pair_id
    WHERE r.run_id = ? GROUP BY ALL)
SELECT j.pair_id AS id, j.category AS criterion, max(juror_epsilon) - min(juror_epsilon) AS spread,
       stddev_pop(juror_epsilon) AS sd, count(juror_epsilon) AS n_jurors,
       list(juror || '=' || CAST(round(juror_epsilon, 2) AS VARCHAR) ORDER BY juror)
           FILTER (WHERE juror_epsilon IS NOT NULL) AS scores,
       coalesce(any_value(f.flips), 0) AS flips
FROM juror_pairwise j LEFT JOIN flips f ON f.pair_id = j.pair_id AND f.category = j.category
WHERE j.run_id = ? GROUP BY ALL
"""
SORTS = ("spread", "flips", "sd")


def disagreements(
    con: Connection, run: dict[str, object], *, sort: str = "spread", after: int = 0, limit: int = PAGE
) -> dict[str, object]:
    """The subject x criterion cells where the jurors disagree most (spread = highest minus lowest
    juror score, or sd) or, for pairwise runs, where jurors flip their verdict when the order is
    swapped; the top ``DISAGREEMENTS`` are kept per run and sort."""
    if sort not in SORTS:
        sort = "spread"
    pairwise = run["mode"] == "pairwise"

    def make() -> list[dict[str, object]]:
        sql = _PAIRWISE_DISPUTES if pairwise else _POINTWISE_DISPUTES
        params = [run["run_id"], run["run_id"]] if pairwise else [run["run_id"]]
        return _query(
            con,
            f"SELECT * FROM ({sql}) ORDER BY {sort} DESC NULLS LAST, spread DESC NULLS LAST, id, "
            f"criterion LIMIT {DISAGREEMENTS}",
            params,
        )

    rows = MEMO.get(("disputes", sort, *run_key(run)), make)
    start = max(0, after)
    page = rows[start : start + limit]
    return {
        "rows": page,
        "sort": sort,
        "pairwise": pairwise,
        "start": start,
        "next": start + limit if start + limit < len(rows) else None,
        "kept": len(rows),
    }


def results_page(con: Connection, *, name: str = "", after: str = "", limit: int = PAGE) -> dict[str, object]:
    where, params = ["TRUE"], []
    if name:
        where.append("name = ?")
        params.append(name)
    if after:
        where.append(
            "(created_at, result_id) < (SELECT (created_at, result_id) FROM stats_results WHERE result_id = ?)"
        )
        params.append(after)
    rows = _query(
        con,
        f"SELECT result_id, name, run_id, params, seed, created_at FROM stats_results "
        f"WHERE {' AND '.join(where)} ORDER BY created_at DESC, result_id DESC LIMIT ?",
        [*params, limit + 1],
    )
    more = len(rows) > limit
    rows = rows[:limit]
    for r in rows:
        r["params"] = _json(r["params"])
    names = [r[0] for r in con.execute("SELECT DISTINCT name FROM stats_results ORDER BY 1").fetchall()]
    return {"rows": rows, "next": rows[-1]["result_id"] if more and rows else None, "names": names, "name": name}


def result(con: Connection, result_id: str) -> dict[str, object]:
    rows = _query(con, "SELECT * FROM stats_results WHERE result_id = ?", [result_id])
    if not rows:
        raise NotFound(f"no statistics result '{result_id}'.")
    row = rows[0]
    row["params"], row["result"] = _json(row["params"]), _json(row["result"])
    return row


def calibrations(con: Connection) -> list[dict[str, object]]:
    rows = _query(
        con,
        "SELECT c.calibration_id, c.name, c.kind, c.path, c.created_at, r.name AS rubric "
        "FROM calibrations c LEFT JOIN rubrics r USING (rubric_hash) ORDER BY c.created_at DESC",
    )
    return rows


def calibration(con: Connection, calibration_id: str) -> dict[str, object]:
    """A calibration's weights with their CIs per criterion, and its held-out metrics against each
    juror and the plain jury."""
    rows = _query(
        con,
        "SELECT calibration_id, name, kind, path, created_at, body FROM calibrations WHERE calibration_id = ?",
        [calibration_id],
    )
    if not rows:
        raise NotFound(f"no calibration '{calibration_id}'.")
    row = rows[0]
    body = _json(row.pop("body")) or {}
    labels = {j.get("key"): j.get("label") or j.get("name") for j in body.get("jurors", [])}

    def label(feature: str) -> str:
        """A juror's label; 'criterion:juror key' (a cross-criterion feature) as 'criterion · label'."""
        crit, _, key = feature.rpartition(":")
        name = str(labels.get(key) or labels.get(feature) or feature)
        return f"{crit} · {name}" if crit and key in labels else name

    criteria = []
    for name, crit in (body.get("criteria") or {}).items():
        report = crit.get("report") or {}
        # Two sets of weights, said apart: the least-squares ones to report, with their intervals,
        # and the predictive winner's that scoring applies (no interval).
        ls = report.get("least_squares") or {}
        applied = crit.get("weights") or {}
        reported = ls.get("weights") or {}
        weights = [
            {
                "feature": label(f),
                "ls": reported.get(f),
                "low": ((ls.get("ci") or {}).get(f) or {}).get("low"),
                "high": ((ls.get("ci") or {}).get(f) or {}).get("high"),
                "applied": applied.get(f),
            }
            for f in dict.fromkeys([*reported, *applied])
        ]
        metrics = []
        if crit.get("test"):
            metrics.append({"rater": "calibrated jury", **crit["test"], "cv_rmse_mean": crit.get("cv_rmse_mean")})
        for rater, base in (report.get("baselines") or {}).items():
            metrics.append({"rater": rater, **(base.get("test") or {}), "cv_rmse_mean": base.get("cv_rmse_mean")})
        accuracy = report.get("held_out_accuracy") or {}
        criteria.append(
            {
                "criterion": name,
                "method": crit.get("method"),
                "intercept": crit.get("intercept"),
                "ls_intercept": ls.get("intercept"),
                "ls_groups": ls.get("n_groups"),
                "weights": weights,
                "metrics": metrics,
                "accuracy": accuracy,
                "winner": report.get("winner"),
                "n_train": report.get("n_train"),
                "n_test": report.get("n_test"),
            }
        )
    return {
        **row,
        "source_run": body.get("source_run"),
        "split": body.get("split"),
        "missing_rule": body.get("missing_rule"),
        "criteria": criteria,
        "rubric": (body.get("rubric") or {}).get("name"),
    }


def alignments(con: Connection) -> list[dict[str, object]]:
    """Every alignment, newest first: its run, juror, criterion, and what it kept."""
    return _query(
        con,
        "SELECT a.alignment_id, a.run_id, a.juror, a.criterion, a.chosen, a.n_labelled, a.n_groups, a.created_at, "
        "o.name AS rubric, r.version AS aligned_version FROM alignments a LEFT JOIN rubrics o ON o.rubric_hash = "
        "a.rubric_hash LEFT JOIN rubrics r ON r.rubric_hash = a.aligned_hash ORDER BY a.created_at DESC, a.alignment_id",
    )


def alignment(con: Connection, alignment_id: str) -> dict[str, object]:
    """An alignment's variants side by side: held-out error and gain with their intervals, the
    test, what was kept, and each variant's rubric against the original as a diff (the kept
    version's, else the first fold's)."""
    from jurybench.rubric import diff_rubrics, rubric_from_data

    rows = _query(
        con,
        "SELECT a.*, o.name AS rubric, o.version AS original_version, r.version AS aligned_version, "
        "(SELECT count(*) FROM label_uses u WHERE u.alignment_id = a.alignment_id) AS labels_used "
        "FROM alignments a LEFT JOIN rubrics o ON o.rubric_hash = a.rubric_hash "
        "LEFT JOIN rubrics r ON r.rubric_hash = a.aligned_hash WHERE a.alignment_id = ?",
        [alignment_id],
    )
    if not rows:
        raise NotFound(f"no alignment '{alignment_id}'.")
    row = rows[0]
    figures = _json(row.pop("variants")) or {}
    bodies = {
        h: rubric_from_data(json.loads(b))
        for h, b in con.execute(
            "SELECT rubric_hash, body FROM rubrics WHERE rubric_hash IN (SELECT unnest(?::VARCHAR[]))",
            [
                [
                    row["rubric_hash"],
                    row["aligned_hash"],
                    *[h for v in figures.get("variants", []) for h in v["fold_rubrics"][:1]],
                ]
            ],
        ).fetchall()
    }
    original = bodies.get(str(row["rubric_hash"]))
    variants = []
    for v in figures.get("variants", []):
        shown = row["aligned_hash"] if v["kept"] else (v["fold_rubrics"] or [None])[0]
        other = bodies.get(str(shown)) if shown else None
        diff = diff_rubrics(original, other) if original is not None and other is not None else ""
        variants.append({**v, "diff": diff.splitlines(), "diff_of": "the kept version" if v["kept"] else "fold 1"})
    scale = [f for v in [figures.get("original", {}), *variants] for f in (v.get("mae"),) if f]
    top = max((f["high"] for f in scale), default=1.0) or 1.0
    return {
        **row,
        "original": figures.get("original", {}),
        "variants": variants,
        "notes": figures.get("notes", []),
        "top": top,
    }
