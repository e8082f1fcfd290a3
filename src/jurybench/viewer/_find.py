"""Find and step: a run's items or pairs filtered by text, metadata, a criterion's jury score,
the jurors' disagreement, the calls' outcomes and the presence of human labels, in a chosen
order, and a subject's previous and next under the same filter and order.

A filter travels as the page's query string (``?q=...&criterion=...``), so the run page's
list, the subject pages it links to and their previous/next links all carry it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from jurybench.errors import JurybenchError
from jurybench.viewer._data import PAGE, _query

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

STATUSES = ("invalid", "refusal", "error")
FIELDS = ("q", "criterion", "min", "max", "spread", "status", "human", "model", "language", "dataset", "sort")
SORTS = ("id", "score", "-score", "spread")


@dataclass(frozen=True)
class Filter:
    """What the run page's find form asks for; empty fields do not filter."""

    q: str = ""  # text in the id, the prompt or a response (case-insensitive)
    criterion: str = ""  # the criterion (category) the score range, disagreement and sort refer to
    min: float | None = None  # the jury score on ``criterion`` at least ...
    max: float | None = None  # ... and at most
    spread: float | None = None  # the jurors' spread (highest - lowest) at least, on ``criterion`` or any
    status: str = ""  # a call or judgment of the subject ended invalid, refusal or error
    human: str = ""  # "with" or "without" human labels
    model: str = ""
    language: str = ""
    dataset: str = ""
    sort: str = "id"  # id, score (ascending), -score (descending), spread (descending)

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> Filter:
        """From a query string's values; a bad value is a one-line error naming the field."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = (query.get(f.name) or "").strip()
            if not raw:
                continue
            if f.name in ("min", "max", "spread"):
                try:
                    number = float(raw)
                except ValueError:
                    number = math.nan
                if not math.isfinite(number):
                    raise JurybenchError(f"find: {f.name}={raw!r} is not a number.", hint="Give a number, e.g. 3.5.")
                values[f.name] = number
            else:
                values[f.name] = raw[:500]
        found = cls(**values)
        if found.status and found.status not in STATUSES:
            raise JurybenchError(f"find: status={found.status!r} is not one of {', '.join(STATUSES)}.")
        if found.human and found.human not in ("with", "without"):
            raise JurybenchError(f"find: human={found.human!r} is not 'with' or 'without'.")
        if found.sort not in SORTS:
            raise JurybenchError(f"find: sort={found.sort!r} is not one of {', '.join(SORTS)}.")
        if (
            found.min is not None or found.max is not None or found.sort in ("score", "-score")
        ) and not found.criterion:
            raise JurybenchError(
                "find: a score range or a sort by score needs a criterion.",
                hint="Choose the criterion the scores are of.",
            )
        return found

    @property
    def active(self) -> bool:
        return self != Filter()

    def without_scores(self) -> Filter:
        """The filter with nothing that reads the jury (score range, spread, outcome, criterion,
        a sort by score or spread): what the run page finds by while labelling blind."""
        return Filter(q=self.q, human=self.human, model=self.model, language=self.language, dataset=self.dataset)

    def hidden(self) -> list[tuple[str, str]]:
        """The filter's fields as a form's hidden inputs carry them (empty ones left out)."""
        return [
            (k, f"{v:g}" if isinstance(v, float) else str(v))
            for k, v in asdict(self).items()
            if v not in ("", None) and not (k == "sort" and v == "id")
        ]

    def query(self, **extra: object) -> str:
        """The filter as a query string (empty fields left out), with ``extra`` added."""
        pairs = {k: v for k, v in asdict(self).items() if v not in ("", None) and not (k == "sort" and v == "id")}
        pairs |= {k: v for k, v in extra.items() if v not in ("", None)}
        return urlencode({k: (f"{v:g}" if isinstance(v, float) else v) for k, v in pairs.items()})


def _ordered(run: dict[str, object], want: Filter) -> tuple[str, list[object]]:
    """The SQL of the run's subjects under the filter: ``id``, ``score``, ``spread`` and ``pos``
    (the 1-based position in the chosen order), and its parameters."""
    pairwise = run["mode"] == "pairwise"
    run_id = run["run_id"]
    kind, jury, juror, sid, dim, value = (
        ("pair", "jury_pairwise", "juror_pairwise", "pair_id", "category", "juror_epsilon")
        if pairwise
        else ("item", "jury_pointwise", "juror_pointwise", "item_id", "criterion", "juror_score")
    )
    params: list[object] = [run_id, kind]
    if pairwise:
        texts = (
            "SELECT p.pair_id AS id, a.prompt, a.response AS response, b.response AS response_b, "
            "a.model || ' vs ' || b.model AS model, a.language, p.dataset, p.item_a, p.item_b "
            "FROM pairs p JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b"
        )
    else:
        texts = "SELECT item_id AS id, prompt, response, NULL AS response_b, model, language, dataset FROM items"
    score_sql = "NULL"
    if want.criterion:
        score_sql = f"(SELECT jury_score FROM {jury} j WHERE j.run_id = ? AND j.{sid} = s.id AND j.{dim} = ?)"
    spread_where = f" AND v.{dim} = ?" if want.criterion else ""
    spread_sql = (
        f"(SELECT max(d) FROM (SELECT max(v.{value}) - min(v.{value}) AS d FROM {juror} v "
        f"WHERE v.run_id = ? AND v.{sid} = s.id{spread_where} GROUP BY v.{dim}))"
    )
    need_spread = want.spread is not None or want.sort == "spread"
    select = [
        "s.id",
        f"{score_sql} AS score" if want.criterion else "NULL AS score",
        f"{spread_sql} AS spread" if need_spread else "NULL AS spread",
    ]
    select_params: list[object] = []
    if want.criterion:
        select_params += [run_id, want.criterion]
    if need_spread:
        select_params += [run_id] + ([want.criterion] if want.criterion else [])
    where: list[str] = []
    where_params: list[object] = []
    if want.q:
        # a conversation is found by a word in any of its messages or by a tool it called (a pair
        # by either side's): the item ids those match, then the subjects that hold them
        in_messages = (
            "SELECT item_id FROM messages WHERE content ILIKE ? UNION SELECT item_id FROM tool_calls WHERE tool ILIKE ?"
        )
        holds = (
            f"t.item_a IN ({in_messages}) OR t.item_b IN ({in_messages})" if pairwise else f"t.id IN ({in_messages})"
        )
        where.append(f"(t.id ILIKE ? OR t.prompt ILIKE ? OR t.response ILIKE ? OR t.response_b ILIKE ? OR {holds})")
        like = "%" + want.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where_params += [like] * (8 if pairwise else 6)
        where[-1] = where[-1].replace("ILIKE ?", "ILIKE ? ESCAPE '\\'")
    for name in ("model", "language", "dataset"):
        if getattr(want, name):
            where.append(f"t.{name} = ?")
            where_params.append(getattr(want, name))
    if want.status:
        judgments = "pairwise_judgments" if pairwise else "pointwise_judgments"
        where.append(f"""s.id IN (SELECT c.subject_id FROM run_calls rc JOIN calls c USING (call_key)
                                   WHERE rc.run_id = ? AND c.subject_kind = ? AND (c.status = ? OR EXISTS (
                                       SELECT 1 FROM {judgments} jd WHERE jd.call_key = c.call_key AND jd.status = ?)))""")
        where_params += [run_id, kind, want.status, want.status]
    if want.human:
        neg = "" if want.human == "with" else "NOT "
        where.append(f"{neg}EXISTS (SELECT 1 FROM human_labels h WHERE h.subject_kind = ? AND h.subject_id = s.id)")
        where_params.append(kind)
    outer: list[str] = []
    if want.min is not None:
        outer.append("score >= ?")
    if want.max is not None:
        outer.append("score <= ?")
    if want.spread is not None:
        outer.append("spread >= ?")
    outer_params = [v for v in (want.min, want.max, want.spread) if v is not None]
    order = {
        "id": "id",
        "score": "score ASC NULLS LAST, id",
        "-score": "score DESC NULLS LAST, id",
        "spread": "spread DESC NULLS LAST, id",
    }[want.sort]
    # The texts are joined only when the filter reads them (a scan of every text of the run).
    joined = f"JOIN ({texts}) t ON t.id = s.id" if (want.q or want.model or want.language or want.dataset) else ""
    sql = f"""
        WITH s AS (SELECT subject_id AS id FROM run_subjects WHERE run_id = ? AND subject_kind = ?),
             found AS (SELECT {", ".join(select)} FROM s {joined}
                       {"WHERE " + " AND ".join(where) if where else ""})
        SELECT id, score, spread, row_number() OVER (ORDER BY {order}) AS pos FROM found
        {"WHERE " + " AND ".join(outer) if outer else ""}"""
    return sql, [*params, *select_params, *where_params, *outer_params]


def find(con: Connection, run: dict[str, object], want: Filter, *, after: int = 0, limit: int = PAGE) -> dict[str, Any]:
    """A page of the subjects the filter keeps, in its order, from position ``after``; with how
    many it keeps in all."""
    sql, params = _ordered(run, want)
    rows = _query(
        con,
        f"SELECT *, count(*) OVER () AS total FROM ({sql}) ORDER BY pos LIMIT ? OFFSET ?",
        [*params, limit, max(after, 0)],
    )
    total = rows[0]["total"] if rows else _count(con, sql, params)
    return {
        "rows": rows,
        "total": total,
        "start": max(after, 0),
        "next": after + limit if after + limit < total else None,
    }


def _count(con: Connection, sql: str, params: list[object]) -> int:
    return int(con.execute(f"SELECT count(*) FROM ({sql})", params).fetchall()[0][0])


def neighbours(con: Connection, run: dict[str, object], want: Filter, subject_id: str) -> dict[str, object]:
    """The subject's position under the filter and order, and the ids before and after it
    (None at either end; ``position`` None when the filter leaves the subject out)."""
    if not want.active:  # the run's own order (by id): two lookups on the key
        kind = "pair" if run["mode"] == "pairwise" else "item"
        row = con.execute(
            """SELECT (SELECT max(subject_id) FROM run_subjects WHERE run_id = $1 AND subject_kind = $2
                                     AND subject_id < $3),
                                    (SELECT min(subject_id) FROM run_subjects WHERE run_id = $1 AND subject_kind = $2
                                     AND subject_id > $3)""",
            [run["run_id"], kind, subject_id],
        ).fetchall()[0]
        return {"position": None, "previous": row[0], "next": row[1], "total": None}
    sql, params = _ordered(run, want)
    rows = con.execute(
        f"SELECT pos, lag(id) OVER (ORDER BY pos), lead(id) OVER (ORDER BY pos), count(*) OVER () "
        f"FROM ({sql}) QUALIFY id = ?",
        [*params, subject_id],
    ).fetchall()
    if not rows:
        return {"position": None, "previous": None, "next": None, "total": _count(con, sql, params)}
    pos, previous, following, total = rows[0]
    return {"position": int(pos), "previous": previous, "next": following, "total": int(total)}


def choices(con: Connection, run: dict[str, object]) -> dict[str, list[str]]:
    """The values the form's lists offer: the run's criteria and its subjects' models, languages
    and datasets (the first 200 of each), kept per state of the run."""
    from jurybench.viewer._data import MEMO, run_key

    return dict(MEMO.get(("choices", *run_key(run)), lambda: _choices(con, run)))


def _choices(con: Connection, run: dict[str, Any]) -> dict[str, list[str]]:
    from jurybench.stats import run_dimensions

    pairwise = run["mode"] == "pairwise"
    kind = "pair" if pairwise else "item"
    source = (
        "SELECT a.model || ' vs ' || b.model AS model, a.language, p.dataset, p.pair_id AS id FROM pairs p "
        "JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b"
        if pairwise
        else "SELECT model, language, dataset, item_id AS id FROM items"
    )
    out: dict[str, list[str]] = {"criteria": list(run_dimensions(con, run["run_id"]))}
    for name in ("model", "language", "dataset"):
        out[name] = [
            r[0]
            for r in con.execute(
                f"SELECT DISTINCT t.{name} FROM ({source}) t WHERE t.{name} IS NOT NULL AND t.id IN "
                f"(SELECT subject_id FROM run_subjects WHERE run_id = ? AND subject_kind = ?) ORDER BY 1 LIMIT 200",
                [run["run_id"], kind],
            ).fetchall()
        ]
    return out
