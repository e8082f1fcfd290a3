"""AlpacaEval's released annotations (``results/<model>/<annotator>/annotations.json``): a JSON
list, one record a comparison of a model's output with the reference model's on one instruction.

Upstream fields read: ``instruction`` (the prompt), ``output_1`` / ``generator_1`` (the
reference's output and name), ``output_2`` / ``generator_2`` (the model's), ``annotator`` (the
judge), ``preference`` (1: output_1 preferred, 2: output_2 preferred, anything between from a
weighted annotator, 0 a draw, null no usable answer) and, where present, ``raw_completion``
and ``price_per_example``. Items are named by generator and the instruction's hash, so the
reference's outputs are shared by every model's file; the pair's item_a is the reference and
item_b the model, and ``p_b`` = preference - 1 (a draw, 0, is 0.5). The model's item keeps the
record's position as ``alpaca_eval_index`` (metadata): AlpacaEval's instruction difficulty
table, which ``stats winrate --length-controlled alpaca-eval`` reads, is keyed by it. AlpacaEval shows the two
outputs in an order of its own that the file does not record: the run's order is unknown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.imports import Bundle, JudgmentFormat, field, records, short_hash


def read(path: Path, options: Mapping[str, str]) -> Bundle:
    bundle = Bundle()
    draws = 0
    for number, record in records(path):
        instruction = field(path, number, record, "instruction")
        reference, model = field(path, number, record, "generator_1"), field(path, number, record, "generator_2")
        key = short_hash(instruction)
        a = bundle.item(
            {
                "item_id": f"{reference}-{key}",
                "prompt": instruction,
                "response": field(path, number, record, "output_1"),
                "model": reference,
            }
        )
        b = bundle.item(
            {
                "item_id": f"{model}-{key}",
                "prompt": instruction,
                "response": field(path, number, record, "output_2"),
                "model": model,
                "alpaca_eval_index": number - 1,  # AlpacaEval's difficulty table is keyed by the instruction's place
            }
        )
        pair = bundle.pair(f"{model}-vs-{reference}-{key}", a, b)
        judge = options.get("judge") or field(path, number, record, "annotator", required=False) or "alpaca-eval"
        preference = record.get("preference")
        row: dict[str, object] = {"pair_id": pair}
        if isinstance(record.get("raw_completion"), str | dict | list):
            raw = record["raw_completion"]
            row["raw"] = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True)
        if isinstance(record.get("price_per_example"), int | float) and record["price_per_example"] >= 0:
            row["cost_usd"] = float(record["price_per_example"])
        if preference is None or (isinstance(preference, float) and math.isnan(preference)):
            row["status"] = "invalid"
        elif (
            isinstance(preference, bool)
            or not isinstance(preference, int | float)
            or not (preference == 0 or 1 <= preference <= 2)
        ):
            raise JurybenchError(
                f"{path} record {number}, field 'preference': {preference!r} is not an AlpacaEval preference.",
                hint="1: output_1 preferred, 2: output_2, between for a weighted annotator, 0 a draw.",
            )
        elif preference == 0:
            draws += 1
            row["p_b"] = 0.5
        else:
            row["p_b"] = float(preference) - 1
        bundle.judge(str(judge), row)
    if draws:
        bundle.notes.append(f"{draws} draws (preference 0) read as p_b 0.5")
    return bundle


def detect(path: Path, head: Any) -> bool:
    return (
        isinstance(head, list)
        and bool(head)
        and isinstance(head[0], dict)
        and {"instruction", "output_1", "output_2", "generator_2", "preference"} <= set(head[0])
    )


FORMATS = [
    JudgmentFormat(
        name="alpaca-eval",
        description="AlpacaEval annotations.json: a model against the reference, preference 1..2 (0 a draw)",
        rubric="preference",
        read=read,
        detect=detect,
        fields={
            "items.prompt": "instruction",
            "items.response": "output_1 (the reference, item_a), output_2 (the model, item_b)",
            "items.model": "generator_1, generator_2",
            "items.meta.alpaca_eval_index": "the record's position (the instruction's index in AlpacaEval)",
            "judgments.p_b": "preference - 1; 0 (a draw) -> 0.5; null -> status invalid",
            "judgments.raw": "raw_completion",
            "judgments.cost_usd": "price_per_example",
            "juror": "annotator",
        },
        options={"judge": "the judge's name where the records give no annotator"},
    )
]
