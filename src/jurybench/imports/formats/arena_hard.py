"""Arena-Hard-Auto's judgments (``data/<bench>/model_judgment/<judge>/<model>.jsonl``): one line a
question, two games each: ``question_id``, ``model``, ``judge``, ``games`` (game 1 shows the
baseline's answer as A and the model's as B, game 2 the other way round), each game with
``user_prompt`` (the judge's prompt: the question and both answers), ``judgment`` (its text) and
``score`` ("A>>B", "A>B", "A=B", "B>A", "B>>A" in the order shown, null when the judge gave none).

The verdict is a score on -2..2 of the ``arena-hard`` rubric in the pair's frame (item_a the
baseline, item_b the model; 2 a decisive win for A): rank with ``stats leaderboard --strong 2:3``
to count a decisive win as three battles, as Arena-Hard does. ``--option baseline=NAME`` names
the baseline model (default gpt-4-0314: the files do not name it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.imports._formats import Bundle, JudgmentFormat
from jurybench.imports.formats._common import between, field, records

LABELS = {"A>>B": 2, "A>B": 1, "A=B": 0, "B=A": 0, "B>A": -1, "A<B": -1, "B>>A": -2, "A<<B": -2}


def read(path: Path, options: Mapping[str, str]) -> Bundle:
    bundle = Bundle()
    baseline = options.get("baseline") or "gpt-4-0314"
    missing = 0
    for number, record in records(path):
        question = field(path, number, record, "question_id", kind=(int, str))
        model = field(path, number, record, "model")
        games = field(path, number, record, "games", kind=list)
        if len(games) != 2:
            raise JurybenchError(f"{path} record {number}, field 'games': {len(games)} games; Arena-Hard plays two.")
        base_id, model_id = f"arena-{question}-{baseline}", f"arena-{question}-{model}"
        first = str(games[0].get("user_prompt") or "") if isinstance(games[0], dict) else ""
        prompt = between(first, "<|User Prompt|>", "<|The Start of Assistant A's Answer|>")
        for item, who, name in ((base_id, "A", baseline), (model_id, "B", model)):
            answer = between(
                first, f"<|The Start of Assistant {who}'s Answer|>", f"<|The End of Assistant {who}'s Answer|>"
            )
            if answer is not None:
                bundle.item({"item_id": item, "prompt": prompt, "response": answer, "model": name})
        pid = bundle.pair(f"arena-{question}-{model}-vs-{baseline}", base_id, model_id)
        for k, (game, shown) in enumerate(zip(games, ("AB", "BA"), strict=True), start=1):
            if not isinstance(game, dict):
                raise JurybenchError(f"{path} record {number}, game {k}: expected an object.")
            label = game.get("score")
            row: dict[str, Any] = {"pair_id": pid, "criterion": "quality", "shown": shown, "raw": game.get("judgment")}
            if label is None:
                missing += 1
                row["status"] = "invalid"
            elif isinstance(label, str) and label in LABELS:
                row["score"] = LABELS[label] if shown == "AB" else -LABELS[label]  # in the pair's frame
            else:
                raise JurybenchError(
                    f"{path} record {number}, game {k}, field 'score': {label!r} is not a verdict label.",
                    hint=f"One of {', '.join(LABELS)}, or null.",
                )
            bundle.judge(str(record.get("judge") or "judge"), row)
    if missing:
        bundle.notes.append(f"{missing} games without a verdict label kept as invalid")
    bundle.notes.append(f"baseline model: {baseline} (--option baseline=NAME to change)")
    return bundle


FORMATS = [
    JudgmentFormat(
        name="arena-hard",
        description="Arena-Hard-Auto model_judgment JSONL: two games a question, verdicts A>>B .. B>>A",
        rubric="arena-hard",
        read=read,
        detect=lambda path, head: isinstance(head, dict) and {"question_id", "model", "games"} <= set(head),
        fields={
            "items": "question_id, model (and the baseline); texts read from games[0].user_prompt",
            "judgments.score": "games[i].score: A>>B 2, A>B 1, A=B 0, B>A -1, B>>A -2 (game 2 turned to the pair's frame)",
            "judgments.shown": "game 1 AB (baseline first), game 2 BA",
            "judgments.raw": "games[i].judgment",
            "juror": "judge",
        },
        options={"baseline": "the baseline model (default gpt-4-0314)"},
    )
]
