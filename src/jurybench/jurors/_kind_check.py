"""Deterministic checks as jurors (``check/<name>``): computed from the store without any model,
stored as a juror's answers are, so agreement, calibration, bias and PPI treat a check as any
other rater.

``check/tool-match`` compares a conversation's tool calls with its reference actions
(``conversations.reference_actions``, e.g. tau-bench's task actions):

- a call *matches* a reference action when the tool names are equal and the arguments compare:
  ``arguments=equal`` (the default), the same JSON value (objects by key, numbers by value, so
  ``1`` equals ``1.0``); ``arguments=contains``, every key the reference gives is in the call with
  an equal value (the call may give more);
- ``order=strict`` (the default): the matched calls must come in the reference's order (the
  longest common subsequence of the two lists under *matches*); ``order=any``: any order (the
  largest one-to-one matching);
- with ``matched`` the number matched, ``recall`` = matched / reference actions (1 when there are
  none), ``precision`` = matched / calls (1 when there are none), ``f1`` their harmonic mean (0
  when both are 0), and ``exact`` 1 when every reference action is matched and no call is left
  over, else 0;
- ``score=recall`` (the default: tau-bench's references list only the calls that change its
  database, so an agent's look-ups would count against precision), ``precision``, ``f1`` or
  ``exact`` is the figure answered: on each dimension of the rubric, its scale's lowest point
  plus the figure times the scale's range, rounded half up (0/1 scales: the figure >= 0.5).

The answer's rationale says what was matched, missing and left over.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.jurors._completion import Backend, Completion, Messages, PermanentError, Slot
from jurybench.jurors._kinds import JurorKind
from jurybench.jurors._spec import JurorSpec

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.rubric import AnyRubric

CHECKS = ("tool-match",)
CHOICES = {
    "order": ("strict", "any"),
    "arguments": ("equal", "contains"),
    "score": ("recall", "precision", "f1", "exact"),
}


def _same(a: Any, b: Any) -> bool:
    """Equal JSON values: objects by key, lists in order, numbers by value (not bool as 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(type(a) is type(b) and a == b)


def call_matches(call: dict[str, Any], reference: dict[str, Any], arguments: str = "equal") -> bool:
    """Whether a tool call (``{tool, arguments}``) matches a reference action."""
    if call.get("tool") != reference.get("tool"):
        return False
    got, want = call.get("arguments"), reference.get("arguments")
    if arguments == "contains" and isinstance(got, dict) and isinstance(want, dict):
        return all(k in got and _same(got[k], v) for k, v in want.items())
    return _same(got, want)


def matched_count(calls: list[dict[str, Any]], reference: list[dict[str, Any]], order: str, arguments: str) -> int:
    """How many reference actions the calls match one to one: in order (the longest common
    subsequence) or in any order (the largest matching, by augmenting paths)."""
    fits = [[call_matches(c, r, arguments) for r in reference] for c in calls]
    if order == "strict":
        best = [[0] * (len(reference) + 1) for _ in range(len(calls) + 1)]
        for i in range(1, len(calls) + 1):
            for j in range(1, len(reference) + 1):
                best[i][j] = best[i - 1][j - 1] + 1 if fits[i - 1][j - 1] else max(best[i - 1][j], best[i][j - 1])
        return best[len(calls)][len(reference)]
    owner: list[int | None] = [None] * len(reference)

    def place(i: int, seen: set[int]) -> bool:
        for j, fit in enumerate(fits[i]):
            if fit and j not in seen:
                seen.add(j)
                held = owner[j]
                if held is None or place(held, seen):
                    owner[j] = i
                    return True
        return False

    return sum(place(i, set()) for i in range(len(calls)))


def tool_match(
    calls: list[dict[str, Any]], reference: list[dict[str, Any]], order: str = "strict", arguments: str = "equal"
) -> dict[str, float]:
    """matched, recall, precision, f1 and exact for one conversation (see the module's text)."""
    matched = matched_count(calls, reference, order, arguments)
    recall = matched / len(reference) if reference else 1.0
    precision = matched / len(calls) if calls else 1.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    exact = float(matched == len(reference) == len(calls))
    return {"matched": float(matched), "recall": recall, "precision": precision, "f1": f1, "exact": exact}


def on_scale(figure: float, low: int, high: int) -> int:
    """A figure in [0, 1] as a point of the scale low..high, rounded half up."""
    return low + math.floor(figure * (high - low) + 0.5)


class CheckBackend(Backend):
    """Answers each conversation with the check's figure on every dimension of the rubric."""

    def __init__(self, spec: JurorSpec, answers: dict[str, str]) -> None:
        self.name = spec.model
        self.answers = answers

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        text = self.answers.get(slot.subject_id)
        if text is None:
            raise PermanentError(f"{self.name} has no answer for this subject")
        return Completion(text=text, finish_reason="stop", prompt_tokens=0, completion_tokens=0, latency_ms=0.0)


def _options(spec: JurorSpec) -> dict[str, str]:
    return {key: str(spec.params.get(key, choices[0])) for key, choices in CHOICES.items()}


def check_spec(spec: JurorSpec, label: str) -> None:
    name = spec.model.split("/", 1)[1] if "/" in spec.model else ""
    if name not in CHECKS:
        raise JurybenchError(
            f"{label}: there is no check named {name!r}.", hint=f"Checks: {', '.join('check/' + c for c in CHECKS)}."
        )
    for key, value in _options(spec).items():
        if value not in CHOICES[key]:
            raise JurybenchError(f"{label}: {key}={value} is not one of {', '.join(CHOICES[key])}.")


def make_check(spec: JurorSpec, rubric: AnyRubric, con: Connection, subject_ids: list[str] | None) -> Backend:
    check_spec(spec, f"juror '{spec.model}'")
    if rubric.pairwise or not rubric.scores_items:
        from jurybench.rubric import kind_name

        raise JurybenchError(
            f"juror '{spec.model}' answers one conversation at a time with scores; rubric '{rubric.name}' "
            f"is kind {kind_name(type(rubric))}.",
            hint="Use it with a conversation rubric (task-completion, tool-use) or another rubric of scores.",
        )
    options = _options(spec)
    import pyarrow as pa

    from jurybench.store import registered

    wanted = (
        subject_ids if subject_ids is not None else [r[0] for r in con.execute("SELECT item_id FROM items").fetchall()]
    )
    with registered(con, "_jb_check_ids", pa.table({"id": pa.array(list(dict.fromkeys(wanted)), pa.string())})):
        references = dict(
            con.execute(
                "SELECT i.id, c.reference_actions::VARCHAR FROM _jb_check_ids i "
                "LEFT JOIN conversations c ON c.item_id = i.id ORDER BY i.id"
            ).fetchall()
        )
        calls: dict[str, list[dict[str, Any]]] = {}
        for item_id, tool, arguments in con.execute(
            "SELECT t.item_id, t.tool, t.arguments::VARCHAR FROM tool_calls t "
            "WHERE t.item_id IN (SELECT id FROM _jb_check_ids) ORDER BY t.item_id, t.position, t.call_index"
        ).fetchall():
            calls.setdefault(item_id, []).append({"tool": tool, "arguments": json.loads(arguments)})
    missing = sorted(i for i, ref in references.items() if ref is None)
    if missing:
        raise JurybenchError(
            f"juror '{spec.model}': {len(missing)} of the {len(references)} selected subjects have no reference "
            f"actions (the first: {missing[0]!r}).",
            hint="Import conversations whose tasks give them (--map reference_actions=FIELD; tau-bench's actions are "
            'read), or select those that have them (--where "item_id IN (SELECT item_id FROM conversations WHERE '
            'reference_actions IS NOT NULL)").',
        )
    answers = {}
    for item_id, text in references.items():
        reference = json.loads(text)
        made = calls.get(item_id, [])
        figures = tool_match(made, reference, options["order"], options["arguments"])
        figure = figures[options["score"]]
        answer: dict[str, object] = {}
        for dimension in rubric.dimensions:
            low, high = rubric.scale_for(dimension) or (0, 1)
            answer[dimension] = on_scale(figure, low, high)
        answer["rationale"] = _rationale(made, reference, figures, options)
        answers[item_id] = json.dumps(answer, ensure_ascii=False)
    return CheckBackend(spec, answers)


def _rationale(
    made: list[dict[str, Any]], reference: list[dict[str, Any]], figures: dict[str, float], options: dict[str, str]
) -> str:
    matched = int(figures["matched"])
    left = [r["tool"] for r in reference if not any(call_matches(c, r, options["arguments"]) for c in made)]
    return (
        f"{matched} of {len(reference)} reference actions matched ({options['order']} order, arguments "
        f"{options['arguments']}) among {len(made)} calls"
        + (f"; never made as given: {', '.join(left)}" if left else "")
        + f"; {options['score']} {figures[options['score']]:.3f}"
    )


KIND = JurorKind(
    "check",
    make_check,
    "deterministic checks computed from the store (check/tool-match: tool calls against reference actions)",
    parameters=frozenset(CHOICES),
    offline=True,
    reads_store=True,
    reaskable=False,
    check=check_spec,
)
