"""MT-Bench, as FastChat's llm_judge writes it and as LMSYS released its human judgments.

- ``mt-bench-single``: ``model_judgment/<judge>_single.jsonl``, one line a graded answer:
  ``question_id``, ``model``, ``turn``, ``judge`` ([judge model, prompt name]), ``score``
  (1..10; -1 where the rating could not be parsed: invalid), ``judgment`` (the judge's text),
  ``user_prompt`` (the judge's prompt, from which the answer and question are read).
- ``mt-bench-pair``: ``model_judgment/<judge>_pair.jsonl``: ``question_id``, ``model_1``,
  ``model_2``, ``turn``, ``judge``, ``g1_winner`` / ``g2_winner`` (model_1, model_2, tie or
  error: the verdict with model_1 shown first, and with model_2 shown first),
  ``g1_user_prompt``, ``g1_judgment``, ``g2_judgment``: both orders of each pair.
- ``mt-bench-human``: the ``mt_bench_human_judgments`` release (JSON lines or a JSON list), one
  record a verdict: ``question_id``, ``model_a``, ``model_b``, ``winner`` (model_a, model_b,
  tie), ``judge`` (an expert or author id; gpt4_pair for GPT-4's verdicts), ``turn``,
  ``conversation_a`` / ``conversation_b`` (the whole conversations). People's verdicts become
  human labels (annotator = judge), a judge model's (``judge`` starting with gpt) judgments.

Every MT-Bench reader names an answer ``mtbench-<question>-<model>-t<turn>`` and a pair
``mtbench-<question>-t<turn>-<first model>-vs-<second>``, the models in name order (verdicts are
turned to match), so files of one benchmark share their items and pairs. The question of turn 2
is its own user message; the conversation before it is not part of the item.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.imports import Bundle, JudgmentFormat, between, content_text, field, records

WINNERS = {"model_1": "A", "model_2": "B", "model_a": "A", "model_b": "B", "tie": "tie"}


def item_id(question: object, model: str, turn: int) -> str:
    return f"mtbench-{question}-{model}-t{turn}"


def _pair(bundle: Bundle, question: object, turn: int, first: str, second: str) -> tuple[str, bool]:
    """The pair of two models' answers, in name order; True when ``first`` is not item_a."""
    low, high = sorted((first, second))
    pid = bundle.pair(
        f"mtbench-{question}-t{turn}-{low}-vs-{high}", item_id(question, low, turn), item_id(question, high, turn)
    )
    return pid, low != first


def _turn(path: Path, number: int, record: Any) -> int:
    turn = field(path, number, record, "turn", required=False, kind=int)
    if turn is not None and turn < 1:  # MT-Bench counts turns from 1; 0 would read the last turn
        raise JurybenchError(f"{path} record {number}, field 'turn': {turn} is not a turn (they count from 1).")
    return 1 if turn is None else int(turn)


def _compared(path: Path, number: int, record: Any, first: str, second: str) -> tuple[object, str, str, int]:
    """A pairwise record's question, its two models (as the record names them) and its turn."""
    return (
        field(path, number, record, "question_id", kind=(int, str)),
        field(path, number, record, first),
        field(path, number, record, second),
        _turn(path, number, record),
    )


def _judge(record: Any) -> str:
    judge = record.get("judge")
    if isinstance(judge, list) and judge:
        return str(judge[0])
    return str(judge) if judge else "judge"


def _answer(prompt: str, who: str) -> tuple[str | None, str | None]:
    """(question, answer) as FastChat's judge prompts show them: single-answer ("[Question]",
    "[The Start of Assistant's Answer]") or pairwise ("Assistant A's Answer"), and the
    multi-turn forms ("<|The Start of Assistant A's Conversation with User|>" ... "### User:")."""
    answer = between(prompt, f"[The Start of {who} Answer]", f"[The End of {who} Answer]")
    if answer is not None:
        return between(prompt, "[User Question]", "[The Start of") or between(
            prompt, "[Question]", "[The Start of"
        ), answer
    name = who.replace("'s", "").strip()
    conversation = between(
        prompt, f"<|The Start of {name}'s Conversation with User|>", f"<|The End of {name}'s Conversation with User|>"
    )
    if conversation is None:
        return None, None
    question = between(conversation, "### User:", f"### {name}:")
    at = conversation.rfind(f"### {name}:")
    return question, conversation[at + len(f"### {name}:") :].strip() if at >= 0 else None


def _item(bundle: Bundle, question: object, model: str, turn: int, prompt: str | None, answer: str | None) -> None:
    if answer is not None:
        bundle.item({"item_id": item_id(question, model, turn), "prompt": prompt, "response": answer, "model": model})


def read_single(path: Path, options: Mapping[str, str]) -> Bundle:
    bundle = Bundle()
    failed = 0
    for number, record in records(path):
        question = field(path, number, record, "question_id", kind=(int, str))
        model, turn = field(path, number, record, "model"), _turn(path, number, record)
        score = field(path, number, record, "score", kind=(int, float))
        shown = str(record.get("user_prompt") or "")
        prompt, answer = _answer(shown, "Assistant's")
        if answer is None:  # the multi-turn single prompts show the conversation as Assistant A's
            prompt, answer = _answer(shown, "Assistant A's")
        _item(bundle, question, model, turn, prompt, answer)
        row: dict[str, object] = {
            "item_id": item_id(question, model, turn),
            "criterion": "rating",
            "raw": record.get("judgment"),
        }
        if score == -1:
            failed += 1
            row["status"] = "invalid"
        else:
            row["score"] = score
        bundle.judge(_judge(record), row)
    if failed:
        bundle.notes.append(f"{failed} ratings FastChat could not parse (score -1) kept as invalid")
    return bundle


def read_pair(path: Path, options: Mapping[str, str]) -> Bundle:
    bundle = Bundle()
    for number, record in records(path):
        question, first, second, turn = _compared(path, number, record, "model_1", "model_2")
        for who, model in (("Assistant A's", first), ("Assistant B's", second)):
            prompt, answer = _answer(str(record.get("g1_user_prompt") or ""), who)
            _item(bundle, question, model, turn, prompt, answer)
        pid, turned = _pair(bundle, question, turn, first, second)
        for game, shown in (("g1", "AB"), ("g2", "BA")):  # g2 shows model_2 first; its winner still names the model
            winner = field(path, number, record, f"{game}_winner")
            row: dict[str, object] = {
                "pair_id": pid,
                "shown": _flip_order(shown, turned),
                "raw": record.get(f"{game}_judgment"),
            }
            if winner == "error":
                row["status"] = "invalid"
            elif winner in WINNERS:
                row["verdict"] = _flip(WINNERS[winner], turned)
            else:
                raise JurybenchError(
                    f"{path} record {number}, field '{game}_winner': {winner!r} is not a verdict.",
                    hint="model_1, model_2, tie or error.",
                )
            bundle.judge(_judge(record), row)
    return bundle


def read_human(path: Path, options: Mapping[str, str]) -> Bundle:
    bundle = Bundle()
    for number, record in records(path):
        question, first, second, turn = _compared(path, number, record, "model_a", "model_b")
        for side, model in (("conversation_a", first), ("conversation_b", second)):
            conversation = field(path, number, record, side, kind=list)
            said = [content_text(m.get("content")) if isinstance(m, dict) else "" for m in conversation]
            if len(said) < 2 * turn:
                raise JurybenchError(f"{path} record {number}, field '{side}': turn {turn} is not in the conversation.")
            _item(bundle, question, model, turn, said[2 * turn - 2], said[2 * turn - 1])
        pid, turned = _pair(bundle, question, turn, first, second)
        winner = field(path, number, record, "winner")
        if winner not in WINNERS:
            raise JurybenchError(
                f"{path} record {number}, field 'winner': {winner!r} is not a verdict.", hint="model_a, model_b or tie."
            )
        verdict, judge = _flip(WINNERS[winner], turned), str(field(path, number, record, "judge"))
        if judge.lower().startswith("gpt"):
            bundle.judge(judge, {"pair_id": pid, "verdict": verdict})
        else:
            bundle.labels.append({"pair_id": pid, "annotator": judge, "criterion": "preference", "value": verdict})
    return bundle


def _flip(verdict: str, turned: bool) -> str:
    return {"A": "B", "B": "A"}.get(verdict, verdict) if turned else verdict


def _flip_order(shown: str, turned: bool) -> str:
    return ("BA" if shown == "AB" else "AB") if turned else shown


def _detect(keys: set[str]) -> Any:
    return lambda path, head: isinstance(head, dict) and keys <= set(head)


FORMATS = [
    JudgmentFormat(
        name="mt-bench-single",
        description="FastChat llm_judge single-answer grading (model_judgment/*_single.jsonl), ratings 1..10",
        rubric="single-grade",
        dataset="mt-bench",
        read=read_single,
        detect=_detect({"question_id", "model", "score", "user_prompt", "judgment"}),
        fields={
            "items": "question_id, model, turn; prompt and response read from user_prompt",
            "judgments.score": "score (-1 -> status invalid)",
            "judgments.raw": "judgment",
            "juror": "judge[0]",
        },
    ),
    JudgmentFormat(
        name="mt-bench-pair",
        description="FastChat llm_judge pairwise judgments (model_judgment/*_pair.jsonl), both orders",
        rubric="preference-tie",
        dataset="mt-bench",
        read=read_pair,
        detect=_detect({"question_id", "model_1", "model_2", "g1_winner", "g2_winner"}),
        fields={
            "items": "question_id, model_1 / model_2, turn; texts read from g1_user_prompt",
            "judgments.verdict": "g1_winner (shown model_1 first), g2_winner (model_2 first); error -> invalid",
            "judgments.raw": "g1_judgment, g2_judgment",
            "juror": "judge[0]",
        },
    ),
    JudgmentFormat(
        name="mt-bench-human",
        description="LMSYS mt_bench_human_judgments: people's and GPT-4's verdicts with the conversations",
        rubric="preference-tie",
        dataset="mt-bench",
        read=read_human,
        detect=_detect({"question_id", "model_a", "model_b", "winner", "conversation_a"}),
        fields={
            "items": "question_id, model_a / model_b, turn; texts from conversation_a / conversation_b",
            "labels.value": "winner, for a person's judge id",
            "judgments.verdict": "winner, for judge gpt4_pair (a judge model)",
        },
    ),
]
