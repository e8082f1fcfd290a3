"""Judgments made elsewhere, by a model or a person, stored as a run's calls and judgments exactly
as if the engine had made them, so every view, report, statistic, calibration and the viewer
work on them unchanged.

One row a judgment, long format (CSV, JSONL or Parquet):
- pointwise rubrics: ``item_id``, ``criterion``, ``score``;
- pairwise rubrics: ``pair_id``, ``criterion`` (the category), ``score`` (a whole number in -k..k);
- preference rubrics: ``pair_id`` and ``verdict`` (A, B or tie) or ``p_b``, the probability in
  [0, 1] that item_b is preferred (AlpacaEval's preference - 1).
Scores and verdicts are in the pair's stored frame (A = item_a), whatever was shown first.
Optional: ``shown`` (AB or BA: what the judge saw first), ``sample``, ``raw`` (the judge's text),
``reason``, ``status`` (ok, invalid, refusal), ``cost_usd``, ``model``.

Rows with the same subject, ``shown`` and ``sample`` are one call. The juror is ``import/<name>``.
Every row is checked before anything is written; re-importing the same file changes nothing,
and a stored judgment with another value is refused unless ``replace``.

Identity: the juror is the judge's name (and its model where the rows name it), the same in every
run, so a calibration fitted on one run applies to another; an imported judgment belongs to the
run it was imported into (its call key holds the run). A variant of the same judge's judgments
(another prompt, another release of the file) imported into a new run is stored beside the first,
and ``replace`` only ever overwrites judgments of the run named. (Runs imported before this rule
keep their stored keys: a re-import into such a run finds its judgments as before.)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.engine import call_key, register_jurors, register_rubric
from jurybench.errors import JurybenchError, brief
from jurybench.jurors import JurorSpec
from jurybench.jury import Jury, register_jury
from jurybench.rubric import AnyRubric, PairwiseRubric, PointwiseRubric, PreferenceRubric, by_kind, is_pairwise

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store import Row

IMPORTED_PREFIX = "import"
STATUSES = {"ok": "valid", "valid": "valid", "invalid": "invalid", "refusal": "refusal"}
COLUMNS = {
    "item_id",
    "pair_id",
    "criterion",
    "score",
    "verdict",
    "p_b",
    "shown",
    "sample",
    "raw",
    "reason",
    "status",
    "cost_usd",
    "model",
}
VERDICTS = {"a": 1, "b": -1, "tie": 0}


@dataclass
class _Call:
    subject: str
    shown: str  # "" pointwise, AB / BA
    sample: int
    first_row: int
    judgments: dict[str, dict[str, object]] = field(default_factory=dict)  # dimension -> row
    raw: str | None = None
    cost: float | None = None
    model: str | None = None


@dataclass(frozen=True)
class JudgmentImport:
    run_id: str
    juror: str
    calls: int
    judgments: int
    inserted: int
    unchanged: int
    replaced: int
    invalid: int
    orders: str
    probabilistic: bool

    def __str__(self) -> str:
        text = (
            f"run '{self.run_id}', juror '{self.juror}': {self.judgments} judgments in {self.calls} calls "
            f"({self.inserted} calls inserted, {self.unchanged} already present"
        )
        text += f", {self.replaced} replaced)" if self.replaced else ")"
        if self.invalid:
            text += f"; {self.invalid} invalid or refusals kept as such"
        if self.orders in ("one", "unknown"):
            text += "; one order per pair" + (
                " (the order shown is unknown: position bias cannot be measured)" if self.orders == "unknown" else ""
            )
        return text


def imported_juror(name: str, *, probabilistic: bool, model: str | None = None) -> JurorSpec:
    """The juror of imported judgments: ``import/<name>``; one with probabilities reads them as its
    expected scores (``scores=expected``); ``model``, the judge's model where the rows name it, is
    part of its identity (stored in ``jurors.params``)."""
    from jurybench.redact import redact

    if redact(name) != name:  # a key typed where the judge's name goes: never stored or printed
        raise JurybenchError(
            "--juror: the judge's name looks like a credential (an API key or token); it would be "
            "stored and shown as a name.",
            hint="Give the judge's name, e.g. -j gpt4-judge.",
        )
    params: dict[str, object] = {"scores": "expected"} if probabilistic else {}
    if model:
        params["judge_model"] = model
    return JurorSpec(model=f"{IMPORTED_PREFIX}/{name}", params=params, name=name)


def import_judgments(
    con: Connection,
    rows: Sequence[tuple[int, Row]],
    rubric: AnyRubric,
    *,
    run: str,
    juror: str,
    source: str,
    replace: bool = False,
    as_recording: str | None = None,
    continuous: bool = False,
) -> JudgmentImport:
    """Check every row, then write the run, its juror, calls and judgments in one transaction.
    ``continuous``: scores between the scale's points are accepted (panel means, averaged
    scores); otherwise a score is one of its points."""
    from jurybench.store import transaction

    if not rows:
        raise JurybenchError(f"{source}: no data rows.", hint="The file has a header but no rows.")
    if not isinstance(run, str) or not run.strip():
        raise JurybenchError("--run: a run name is needed for imported judgments.")
    if not isinstance(juror, str) or not juror.strip() or "/" in juror or "," in juror:
        raise JurybenchError(
            f"--juror {juror!r}: name the judge with a plain name (no '/' or ',').",
            hint="e.g. --juror gpt4-turbo-annotator",
        )
    if not rubric.answers_in_json:
        raise JurybenchError(
            f"rubric '{rubric.name}' is a {rubric.kind} rubric; judgments can be imported for rubrics "
            "answered in JSON (pointwise, pairwise, preference, ...)."
        )
    calls, probabilistic = _read_calls(rows, rubric, source, continuous)
    models = {c.model for c in calls.values() if c.model}
    if len(models) > 1:
        first = min((c for c in calls.values() if c.model), key=lambda c: c.first_row)
        raise JurybenchError(
            f"{source}: the rows name {len(models)} judge models ({', '.join(sorted(models)[:3])}); "
            f"one juror is one judge (first at row {first.first_row}).",
            hint="Import each model's rows as a juror of its own (--juror NAME).",
        )
    spec = imported_juror(juror, probabilistic=probabilistic, model=next(iter(models), None))
    pairwise = is_pairwise(rubric)
    orders = _orders(calls, pairwise)
    if pairwise and orders == "one" and not any(r.get("shown") not in (None, "") for _, r in rows):
        orders = "unknown"  # stored as shown AB, but nobody said: position bias cannot be measured
    with transaction(con):
        _check_subjects(con, calls, pairwise, source)
        register_rubric(con, rubric)
        register_jurors(con, [spec])
        jury = _register_run(con, run, rubric, spec, orders, source, len({c.subject for c in calls.values()}))
        inserted, unchanged, replaced = _write(con, calls, rubric, spec, run, pairwise, replace, source)
        register_jury(con, run, jury)
        if as_recording:
            _record(con, as_recording, calls, rubric)
    invalid = sum(j["status"] != "valid" for c in calls.values() for j in c.judgments.values())
    return JudgmentImport(
        run,
        juror,
        len(calls),
        sum(len(c.judgments) for c in calls.values()),
        inserted,
        unchanged,
        replaced,
        invalid,
        orders,
        probabilistic,
    )


def _read_calls(
    rows: Sequence[tuple[int, Row]], rubric: AnyRubric, source: str, continuous: bool = False
) -> tuple[dict[tuple[str, str, int], _Call], bool]:
    pairwise = is_pairwise(rubric)
    subject_col = rubric.subject_column
    columns = set().union(*(set(r) for _, r in rows))
    unknown = sorted(columns - COLUMNS)
    if unknown:
        raise JurybenchError(
            f"{source}: column '{unknown[0]}' is not a judgment column; its values would be dropped.",
            hint=f"Valid columns: {', '.join(sorted(COLUMNS))}.",
        )
    form = _form(rubric)
    missing = [c for c in (subject_col, *form.columns) if c not in columns]
    if form.one_of and not set(form.one_of) & columns:
        missing.append(" or ".join(form.one_of))
    if missing:
        raise JurybenchError(
            f"{source}: missing column(s) {', '.join(missing)} for a {rubric.kind} rubric.",
            hint=f"It has {', '.join(sorted(columns))}.",
        )
    calls: dict[tuple[str, str, int], _Call] = {}
    probabilistic = False
    for number, row in rows:
        where = f"{source} row {number}"
        subject = str(_text(row, subject_col, where, required=True))
        shown = _shown(row, where, pairwise)
        sample = _sample(row, where)
        dimension = _dimension(row, rubric, where)
        status = STATUSES.get(str(row.get("status") or "ok").strip().lower())
        if status is None:
            raise JurybenchError(
                f"{where}, field 'status': {row.get('status')!r} is not a status.", hint="Use ok, invalid or refusal."
            )
        judgment = _value(row, rubric, dimension, status, shown, where)
        score = judgment["score"]
        if score is not None and not continuous and score != int(score):
            raise JurybenchError(
                f"{where}, field 'score': {score:g} is not a whole number; the rubric's scale for "
                f"'{dimension}' has whole points.",
                hint="Fix the value, or import it with status invalid; for panel means or "
                "averaged scores between the points, import with --continuous.",
            )
        probabilistic |= judgment["expected"] is not None
        key = (subject, shown, sample)
        call = calls.setdefault(key, _Call(subject, shown, sample, number))
        if dimension in call.judgments:
            raise JurybenchError(
                f"{where}: a second judgment of {subject_col} {subject!r}, {dimension!r}, shown "
                f"{shown or 'once'}, sample {sample} (first at row "
                f"{call.judgments[dimension]['row']}).",
                hint="Give repeated judgments of one subject their own 'sample' numbers.",
            )
        call.judgments[dimension] = {**judgment, "row": number}
        raw = row.get("raw")
        if raw is not None:
            call.raw = str(raw)
        call.cost = _cost(row, where) if row.get("cost_usd") not in (None, "") else call.cost
        call.model = _text(row, "model", where, required=False) or call.model
    if probabilistic:
        plain = next(
            (
                j["row"]
                for c in calls.values()
                for j in c.judgments.values()
                if j["status"] == "valid" and j["expected"] is None
            ),
            None,
        )
        if plain is not None:
            raise JurybenchError(
                f"{source} row {plain}, field 'p_b': missing, while other rows give p_b.",
                hint="Give every valid row a p_b, or import verdicts and probabilities apart.",
            )
    return calls, probabilistic


def _text(row: Row, name: str, where: str, *, required: bool) -> str | None:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise JurybenchError(f"{where}, field '{name}': missing value.", hint=f"Every row needs a '{name}'.")
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise JurybenchError(f"{where}, field '{name}': expected text, got {type(value).__name__}.")
    return str(value).strip()


def _shown(row: Row, where: str, pairwise: bool) -> str:
    value = row.get("shown")
    if value is None or str(value).strip() == "":
        return "AB" if pairwise else ""
    if not pairwise:
        raise JurybenchError(f"{where}, field 'shown': items are judged alone; 'shown' is for pairs.")
    text = str(value).strip().upper()
    if text not in ("AB", "BA"):
        raise JurybenchError(
            f"{where}, field 'shown': {value!r} is not an order.", hint="AB: item_a was shown first; BA: item_b was."
        )
    return text


def _sample(row: Row, where: str) -> int:
    value = row.get("sample")
    if value is None or str(value).strip() == "":
        return 0
    from jurybench.store import plain_number

    try:
        number = plain_number(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number != int(number) or number < 0:
        raise JurybenchError(f"{where}, field 'sample': {value!r} is not a whole number >= 0.")
    return int(number)


def _cost(row: Row, where: str) -> float:
    from jurybench.store import plain_number

    try:
        cost = plain_number(row["cost_usd"])
    except (TypeError, ValueError):
        cost = math.nan
    if not math.isfinite(cost) or cost < 0:
        raise JurybenchError(f"{where}, field 'cost_usd': {brief(row['cost_usd'])} is not a cost in USD (>= 0).")
    return cost


def _number(row: Row, name: str, where: str) -> float:
    from jurybench.store import plain_number

    value = row.get(name)
    try:
        number = plain_number(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise JurybenchError(f"{where}, field '{name}': {brief(value)} is not a number.")
    return number


def _dimension(row: Row, rubric: AnyRubric, where: str) -> str:
    """The row's criterion (category); a rubric of one dimension (preference) may leave it out."""
    only = rubric.dimensions[0] if len(rubric.dimensions) == 1 and _form(rubric).one_of else None
    dimension = _text(row, "criterion", where, required=only is None) or only or ""
    if only is not None and dimension != only:
        raise JurybenchError(
            f"{where}, field 'criterion': {dimension!r}: a {rubric.kind} rubric judges '{only}' only.",
            hint=f"Leave criterion empty or write {only}.",
        )
    if dimension not in rubric.dimensions:
        raise JurybenchError(
            f"{where}, field 'criterion': {dimension!r} is not in rubric '{rubric.name}'.",
            hint=f"Valid: {', '.join(rubric.dimensions)}.",
        )
    return dimension


def _value(row: Row, rubric: AnyRubric, dimension: str, status: str, shown: str, where: str) -> dict[str, Any]:
    """The judgment as stored: score (and expected) in the order shown, like the engine's (for a
    pair, 'how much more in the first-shown response'); the row gives them in the pair's frame."""
    flip = -1 if shown == "BA" else 1
    given = [n for n in ("score", "verdict", "p_b") if row.get(n) not in (None, "")]
    if status != "valid":
        if given:
            raise JurybenchError(
                f"{where}, field '{given[0]}': a judgment with status {status} has no value.",
                hint="Leave the value empty, or mark the row ok.",
            )
        return {
            "score": None,
            "expected": None,
            "distribution": None,
            "status": status,
            "reason": row.get("reason") or f"imported as {status}",
        }
    found = _form(rubric).value(row, rubric, dimension, flip, shown, where)
    return {"expected": None, "distribution": None, **found, "status": "valid", "reason": row.get("reason") or None}


def _verdict(
    row: Row, rubric: PreferenceRubric, dimension: str, flip: int, shown: str, where: str
) -> dict[str, object]:
    """A preference: a verdict (A, B, tie), or AlpacaEval's p_b with its discrete rule, or both."""
    verdict, p_b = row.get("verdict"), row.get("p_b")
    if verdict in (None, "") and p_b in (None, ""):
        raise JurybenchError(f"{where}, field 'verdict': missing value.", hint="Give verdict (A, B, tie) or p_b.")
    expected = distribution = None
    if p_b not in (None, ""):
        p = _number(row, "p_b", where)
        if not 0 <= p <= 1:
            raise JurybenchError(
                f"{where}, field 'p_b': {p:g} is not a probability in [0, 1].",
                hint="p_b is the probability that item_b is preferred (AlpacaEval's preference minus 1).",
            )
        in_a_frame = 1 - 2 * p  # +1 item_a surely better .. -1 item_b
        expected = flip * in_a_frame
        first = (1 - p) if shown != "BA" else p  # the first-shown response preferred
        distribution = json.dumps({"p": {"A": first, "B": 1 - first}, "coverage": 1.0}, sort_keys=True)
    if verdict not in (None, ""):
        found = VERDICTS.get(str(verdict).strip().lower())
        if found is None:
            raise JurybenchError(
                f"{where}, field 'verdict': {verdict!r} is not a verdict.",
                hint="Use A, B or tie (in the pair's frame: A = item_a).",
            )
        if found == 0 and not rubric.allow_tie:
            raise JurybenchError(
                f"{where}, field 'verdict': a tie, which rubric '{rubric.name}' does not allow.",
                hint="Import with a rubric that allows ties (allow_tie: true).",
            )
        if expected is not None and found != (0 if in_a_frame == 0 else math.copysign(1, in_a_frame)):
            raise JurybenchError(
                f"{where}: verdict {verdict!r} and p_b {p:g} disagree.",
                hint="p_b above 0.5 is B, below is A, 0.5 a tie.",
            )
        score = flip * found
    else:  # AlpacaEval's discrete rule: above 0.5 item_b wins, below item_a, 0.5 a draw
        score = flip * (0 if in_a_frame == 0 else int(math.copysign(1, in_a_frame)))
    return {"score": score, "expected": expected, "distribution": distribution}


def _category_score(
    row: Row, rubric: PairwiseRubric, dimension: str, flip: int, shown: str, where: str
) -> dict[str, object]:
    value = _number(row, "score", where)
    if value != int(value) or abs(value) > rubric.k:
        raise JurybenchError(
            f"{where}, field 'score': {value:g} is not a whole number in -{rubric.k}..{rubric.k}.",
            hint="Pairwise category scores are whole points of the rubric's scale.",
        )
    return {"score": flip * int(value)}


def _criterion_score(
    row: Row, rubric: PointwiseRubric, dimension: str, flip: int, shown: str, where: str
) -> dict[str, object]:
    value = _number(row, "score", where)
    low, high = rubric.scale_for(dimension) or (-math.inf, math.inf)
    if not low <= value <= high:
        raise JurybenchError(
            f"{where}, field 'score': {value:g} is outside {low}..{high} for '{dimension}'.",
            hint="Fix the value, or import it with status invalid.",
        )
    return {"score": value}


def _verdict_answer(judgments: dict[str, dict[str, Any]]) -> dict[str, object]:
    verdicts = [{1: "A", -1: "B", 0: "tie"}[int(j["score"])] for j in judgments.values()]
    return {"verdict": verdicts[-1]} if verdicts else {}


def _scores_answer(judgments: dict[str, dict[str, Any]]) -> dict[str, object]:
    # a rubric's answer holds whole numbers (a mean is written as is)
    return {d: int(v) if (v := float(j["score"])) == int(v) else v for d, j in judgments.items()}


@dataclass(frozen=True)
class _Format:
    """How judgments of one rubric kind are imported: the columns a file needs (``one_of``: at
    least one of them), a row's value as stored, and the answer a replay juror gives back."""

    columns: tuple[str, ...]
    one_of: tuple[str, ...]
    value: Callable[..., dict[str, object]]
    answer: Callable[[dict[str, dict[str, object]]], dict[str, object]]


def _form(rubric: AnyRubric) -> _Format:
    form = by_kind(_FORMATS, rubric)
    assert form is not None, rubric.name  # the kinds judgments import takes are checked before
    return form


_FORMATS: dict[str, _Format] = {
    "pointwise": _Format(("criterion", "score"), (), _criterion_score, _scores_answer),
    "pairwise": _Format(("criterion", "score"), (), _category_score, _scores_answer),
    "preference": _Format((), ("verdict", "p_b"), _verdict, _verdict_answer),
}


def _orders(calls: dict[tuple[str, str, int], _Call], pairwise: bool) -> str:
    """both: every pair judged in both orders; one: in one order each; unknown: no 'shown' given."""
    if not pairwise:
        return "both"
    shown: dict[tuple[str, int], set[str]] = {}
    for subject, order, sample in calls:
        shown.setdefault((subject, sample), set()).add(order)
    if all(len(s) == 2 for s in shown.values()):
        return "both"
    if any(len(s) == 2 for s in shown.values()):
        raise JurybenchError(
            "some pairs are judged in both orders and others in one: a run has one design.",
            hint="Import the one-order judgments into a run of their own.",
        )
    return "one"


def _check_subjects(con: Connection, calls: dict[tuple[str, str, int], _Call], pairwise: bool, source: str) -> None:
    import pyarrow as pa

    from jurybench.store import first_row, registered

    table, column = ("pairs", "pair_id") if pairwise else ("items", "item_id")
    firsts: dict[str, int] = {}
    for call in calls.values():
        firsts.setdefault(call.subject, call.first_row)
    wanted = pa.table({"subject": list(firsts), "row": list(firsts.values())})
    with registered(con, "_jb_wanted", wanted):
        missing = first_row(
            con, f"SELECT subject, row FROM _jb_wanted ANTI JOIN {table} ON {column} = subject ORDER BY row LIMIT 1"
        )
    if missing:
        raise JurybenchError(
            f"{source} row {missing[1]}, field '{column}': no {table[:-1]} {missing[0]!r} in the store.",
            hint=f"Import the {table} first (jurybench {table} import), or fix the id.",
        )


def _register_run(
    con: Connection, run: str, rubric: AnyRubric, spec: JurorSpec, orders: str, source: str, n_subjects: int
) -> Jury:
    from jurybench.store import first_row

    stored = first_row(con, "SELECT rubric_hash, jurors, orders FROM runs WHERE run_id = ?", [run])
    keys = [spec.key]
    if stored:
        if stored[0] != rubric.content_hash:
            raise JurybenchError(
                f"run '{run}' exists with another rubric.",
                hint="Import into a new --run, or give the rubric that run used.",
            )
        keys = sorted(set(json.loads(stored[1])) | {spec.key})
        if stored[2] != orders and is_pairwise(rubric):
            raise JurybenchError(
                f"run '{run}' holds judgments in {stored[2]} order(s); these are in {orders}.",
                hint="A run has one design: import these into a run of their own.",
            )
        con.execute("UPDATE runs SET jurors = ? WHERE run_id = ?", [json.dumps(keys), run])
    else:
        con.execute(
            "INSERT INTO runs (run_id, rubric_hash, mode, jurors, selection, n_subjects, status, orders, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?, 'finished', ?, current_timestamp)",
            [
                run,
                rubric.content_hash,
                rubric.store_kind,
                json.dumps(keys),
                f"imported from {source}",
                n_subjects,
                orders,
            ],
        )
    # The run's other jurors (imported earlier, or the engine's) as stored: the same keys.
    stored_jurors = {
        key: (model, json.loads(params), name)
        for key, model, params, name in con.execute(
            f"SELECT juror_key, model, params, name FROM jurors WHERE juror_key IN ({', '.join('?' * len(keys))})", keys
        ).fetchall()
    }
    members = [
        spec
        if key == spec.key
        else JurorSpec(model=stored_jurors[key][0], params=stored_jurors[key][1], name=stored_jurors[key][2])
        for key in keys
    ]
    probabilistic = any(m.params.get("scores") == "expected" for m in members)
    jury = Jury(
        tuple(members),
        aggregation="mean" if probabilistic else None,
        scores="expected" if probabilistic else "discrete",
    )
    return jury.resolved(rubric)


def _write(
    con: Connection,
    calls: dict[tuple[str, str, int], _Call],
    rubric: AnyRubric,
    spec: JurorSpec,
    run: str,
    pairwise: bool,
    replace: bool,
    source: str,
) -> tuple[int, int, int]:
    import pyarrow as pa

    from jurybench.engine import CALL_COLUMNS, JUDGMENT_COLUMNS, write_calls, write_members
    from jurybench.store import registered

    call_rows: dict[str, list[object]] = {name: [] for name, _ in CALL_COLUMNS}
    judgment_rows: dict[str, list[object]] = {name: [] for name, _ in JUDGMENT_COLUMNS}
    keys: list[str] = []
    legacy = _legacy_keys(con, run, spec.key)
    for (subject, shown, sample), call in calls.items():
        key = imported_call_key(rubric.content_hash, spec.key, subject, shown, sample, run, legacy)
        keys.append(key)
        valid = any(j["status"] == "valid" for j in call.judgments.values())
        status = "ok" if valid else next(iter(call.judgments.values()))["status"]
        row = {
            "call_key": key,
            "rubric_hash": rubric.content_hash,
            "juror_key": spec.key,
            "subject_kind": rubric.subject_kind,
            "subject_id": subject,
            "presented_order": shown or None,
            "sample_index": sample,
            "messages": "[]",
            "response_text": call.raw,
            "finish_reason": None,
            "status": status,
            "reason": None if valid else next(iter(call.judgments.values()))["reason"],
            "attempts": 0,
            "prompt_tokens": None,
            "completion_tokens": None,
            "cost_usd": call.cost,
            "latency_ms": None,
            "run_id": run,
            "presentation": None,
            "structured": "imported",
            "cached_tokens": None,
            "cache_write_tokens": None,
        }
        for name in call_rows:
            call_rows[name].append(row[name])
        for dimension, j in call.judgments.items():
            values = {
                "call_key": key,
                "rubric_hash": rubric.content_hash,
                "juror_key": spec.key,
                "subject_id": subject,
                "presented_order": shown or None,
                "sample_index": sample,
                "dimension": dimension,
                "score": j["score"],
                "status": j["status"],
                "reason": j["reason"],
                "rationale": None,
                "label": None,
                "raw_value": None,
                "shown_position": None,
                "expected": j["expected"],
                "distribution": j["distribution"],
            }
            for name in judgment_rows:
                judgment_rows[name].append(values[name])
    target, dim = rubric.judgment_table, rubric.dimension_column
    new = pa.table(
        {
            "call_key": judgment_rows["call_key"],
            "dimension": judgment_rows["dimension"],
            "score": pa.array(judgment_rows["score"], pa.float64()),
            "expected": pa.array(judgment_rows["expected"], pa.float64()),
            "status": judgment_rows["status"],
        }
    )
    with registered(con, "_jb_new", new):
        stored_keys = {
            r[0]
            for r in con.execute(
                "SELECT DISTINCT call_key FROM calls WHERE call_key IN (SELECT call_key FROM _jb_new)"
            ).fetchall()
        }
        changed = con.execute(
            f"""SELECT DISTINCT n.call_key FROM _jb_new n
                LEFT JOIN {target} s ON s.call_key = n.call_key AND s.{dim} = n.dimension
                WHERE n.call_key IN (SELECT call_key FROM calls WHERE call_key IN (SELECT call_key FROM _jb_new))
                  AND (s.call_key IS NULL OR s.score IS DISTINCT FROM n.score
                       OR s.expected IS DISTINCT FROM n.expected OR s.status <> n.status)"""
        ).fetchall()
    changed_keys = {r[0] for r in changed}
    if changed_keys and not replace:
        first = min(
            calls.values(),
            key=lambda c: (
                c.first_row
                if imported_call_key(rubric.content_hash, spec.key, c.subject, c.shown, c.sample, run, legacy)
                in changed_keys
                else math.inf
            ),
        )
        raise JurybenchError(
            f"{source} row {first.first_row}: juror '{spec.display_name}' already has another "
            f"judgment of {first.subject!r} stored in run '{run}'.",
            hint="Pass --replace to overwrite that run's judgments with the file's, or import the "
            "variant into a run of its own (--run NAME): judgments belong to their run.",
        )
    if changed_keys:
        with registered(con, "_jb_replaced", pa.table({"call_key": sorted(changed_keys)})):
            for table in ("pointwise_judgments", "pairwise_judgments", "calls"):
                con.execute(f"DELETE FROM {table} WHERE call_key IN (SELECT call_key FROM _jb_replaced)")
    write_calls(con, call_rows, judgment_rows, pairwise)
    write_members(con, [run] * len(keys), keys)
    unchanged = len(stored_keys - changed_keys)
    return len(keys) - len(stored_keys), unchanged, len(changed_keys)


def imported_call_key(
    rubric_hash: str, juror_key: str, subject: str, shown: str, sample: int, run: str, legacy: set[str]
) -> str:
    """An imported judgment's call key: the engine's key with the run in the subject, so each run
    holds its own; the run-less key where the run already holds it (imported before the rule)."""
    plain = call_key(rubric_hash, juror_key, subject, shown, sample)
    if plain in legacy:
        return plain
    return call_key(rubric_hash, juror_key, f"{subject}\x1frun\x1f{run}", shown, sample)


def _legacy_keys(con: Connection, run: str, juror_key: str) -> set[str]:
    """The run's calls of this juror stored under run-less keys (every call key it holds: a
    run-scoped key never equals a run-less one)."""
    return {
        str(r[0])
        for r in con.execute(
            "SELECT rc.call_key FROM run_calls rc JOIN calls c USING (call_key) WHERE rc.run_id = ? AND c.juror_key = ?",
            [run, juror_key],
        ).fetchall()
    }


def _record(con: Connection, source: str, calls: dict[tuple[str, str, int], _Call], rubric: AnyRubric) -> None:
    """The judgments as recordings a replay/<source> juror serves: the raw text where given, else
    the JSON answer the rubric asks for (in the order shown)."""
    rows = []
    for (subject, shown, sample), call in calls.items():
        text = call.raw
        if text is None:
            valid = {d: j for d, j in call.judgments.items() if j["status"] == "valid"}
            answer = _form(rubric).answer(valid)
            if not answer:
                continue
            text = json.dumps(answer)
        rows.append((source, subject, shown, sample, text, None))
    con.executemany("INSERT OR REPLACE INTO recordings VALUES (?, ?, ?, ?, ?, ?)", rows)


def read_judgment_rows(path: str | Path, fmt: str | None = None) -> list[tuple[int, Row]]:
    from jurybench.store import read_rows

    return list(read_rows(Path(path), fmt))
