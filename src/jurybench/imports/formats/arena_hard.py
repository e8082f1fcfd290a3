"""Arena-Hard-Auto's judgments (``data/<bench>/model_judgment/<judge>/<model>.jsonl``): one line a
question, two games each, in the shapes its releases have written:

- v0.1 as first released: ``question_id``, ``model``, ``judge``, ``games``;
- the current ``gen_judgment.py`` (v2.0, and v0.1 files rewritten by it): ``uid``,
  ``category``, ``judge``, ``model``, ``baseline``, ``games``.

Game 1 shows the baseline's answer as A and the model's as B, game 2 the other way round. A game
holds ``score`` ("A>>B", "A>B", "A=B", "B>A", "B>>A", or the mirrored "B<A", "A<B", "B<<A",
"A<<B", in the order shown; null when no label was found) and the judge's text: v0.1 games
``user_prompt`` (the question and both answers) and ``judgment`` (text); v2.0 games ``prompt``
(the messages sent: the user message holds the question and both answers) and ``judgment`` (an
object whose ``answer`` is the text). A game that is null (the judge's call failed) is kept as
an invalid answer, as a null label is; Arena-Hard's ``show_result.py`` leaves both out.

The verdict is a score on -2..2 of the ``arena-hard`` rubric in the pair's frame (item_a the
baseline, item_b the model; 2 a decisive win for A): rank with ``stats leaderboard --strong 2:3``
to count a decisive win as three battles, as Arena-Hard does. The baseline is the record's
``baseline``; v0.1's first files do not name it: ``--option baseline=NAME`` (default gpt-4-0314,
and it overrides the record's). The record's ``category`` is kept as the items' metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from jurybench.errors import JurybenchError
from jurybench.imports import Bundle, JudgmentFormat, between, content_text, field, records

LABELS = {
    "A>>B": 2,
    "B<<A": 2,
    "A>B": 1,
    "B<A": 1,
    "A=B": 0,
    "B=A": 0,
    "B>A": -1,
    "A<B": -1,
    "B>>A": -2,
    "A<<B": -2,
}
DEFAULT_BASELINE = "gpt-4-0314"  # v0.1's, which its first files do not name


def read(path: Path, options: Mapping[str, str]) -> Bundle:
    bundle = Bundle()
    missing = 0
    baselines = set()
    for number, record in records(path):
        key = "uid" if isinstance(record, dict) and "uid" in record else "question_id"
        question = field(path, number, record, key, kind=(int, str))
        model = field(path, number, record, "model")
        baseline = (
            options.get("baseline") or field(path, number, record, "baseline", required=False) or DEFAULT_BASELINE
        )
        baselines.add(baseline)
        games = field(path, number, record, "games", kind=list)
        if len(games) != 2:
            raise JurybenchError(f"{path} record {number}, field 'games': {len(games)} games; Arena-Hard plays two.")
        for k, game in enumerate(games, start=1):
            if game is not None and not isinstance(game, dict):
                raise JurybenchError(f"{path} record {number}, game {k}: expected an object or null.")
        category = record.get("category")
        base_id, model_id = f"arena-{question}-{baseline}", f"arena-{question}-{model}"
        texts = [_shown_text(g) if g is not None else "" for g in games]
        first_game = bool(texts[0])
        shown = texts[0] or texts[1]
        prompt = between(shown, "<|User Prompt|>", "<|The Start of Assistant A's Answer|>")
        # game 1 shows the baseline as A; game 2 (read when game 1 is null) shows it as B
        sides = ("A", "B") if first_game else ("B", "A")
        for item, who, name in ((base_id, sides[0], baseline), (model_id, sides[1], model)):
            answer = between(
                shown, f"<|The Start of Assistant {who}'s Answer|>", f"<|The End of Assistant {who}'s Answer|>"
            )
            if answer is not None:
                row: dict[str, object] = {"item_id": item, "prompt": prompt, "response": answer, "model": name}
                if isinstance(category, str):
                    row["metadata"] = {"category": category}
                bundle.item(row)
        pid = bundle.pair(f"arena-{question}-{model}-vs-{baseline}", base_id, model_id)
        for k, (game, order) in enumerate(zip(games, ("AB", "BA"), strict=True), start=1):
            judgment = _judgment_text(game)
            label = game.get("score") if game is not None else None
            out: dict[str, object] = {"pair_id": pid, "criterion": "quality", "shown": order, "raw": judgment}
            if label is None:
                missing += 1
                out["status"] = "invalid"
            elif isinstance(label, str) and label.strip().upper() in LABELS:
                value = LABELS[label.strip().upper()]
                out["score"] = value if order == "AB" else -value  # in the pair's frame
            else:
                raise JurybenchError(
                    f"{path} record {number}, game {k}, field 'score': {label!r} is not a verdict label.",
                    hint=f"One of {', '.join(LABELS)}, or null.",
                )
            bundle.judge(str(record.get("judge") or "judge"), out)
    if missing:
        bundle.notes.append(f"{missing} games without a verdict label kept as invalid")
    named = ", ".join(sorted(baselines))
    bundle.notes.append(f"baseline model: {named} (--option baseline=NAME to change)")
    return bundle


def _shown_text(game: dict[str, object]) -> str:
    """The judge's prompt with the question and both answers: v0.1's ``user_prompt``, or the
    user message of v2.0's ``prompt``."""
    text = game.get("user_prompt")
    if isinstance(text, str):
        return text
    messages = game.get("prompt")
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "user":
                return content_text(message.get("content"))
    return ""


def _judgment_text(game: dict[str, object] | None) -> str | None:
    """The judge's answer: v0.1's text, or v2.0's ``judgment.answer``."""
    if game is None:
        return None
    judgment = game.get("judgment")
    if isinstance(judgment, dict):
        answer = judgment.get("answer")
        return answer if isinstance(answer, str) else None
    return judgment if isinstance(judgment, str) else None


FORMATS = [
    JudgmentFormat(
        name="arena-hard",
        description="Arena-Hard-Auto model_judgment JSONL (v0.1 and v2.0): two games a question, verdicts A>>B .. B>>A",
        rubric="arena-hard",
        read=read,
        detect=lambda path, head: (
            isinstance(head, dict) and "games" in head and "model" in head and ("question_id" in head or "uid" in head)
        ),
        fields={
            "items": "uid (v2.0) or question_id (v0.1), model, baseline; texts from games[i].user_prompt (v0.1) "
            "or the user message of games[i].prompt (v2.0)",
            "items.metadata": "category",
            "judgments.score": "games[i].score: A>>B 2, A>B 1, A=B 0, B>A -1, B>>A -2 and their mirrors "
            "(game 2 turned to the pair's frame); a null game or label: invalid",
            "judgments.shown": "game 1 AB (baseline first), game 2 BA",
            "judgments.raw": "games[i].judgment (v0.1) or games[i].judgment.answer (v2.0)",
            "juror": "judge",
        },
        options={"baseline": "the baseline model (default: the record's baseline, else gpt-4-0314)"},
    )
]
