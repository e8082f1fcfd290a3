"""PandaLM's human-annotated test set (``data/testset-v1.json``) and a judge's outputs on it.

The test set is a JSON list, one record a comparison: ``instruction`` and ``input`` (the
prompt), ``response1`` / ``response2`` (item_a / item_b), ``annotator1`` .. ``annotator3``
(0 a tie, 1 response1 better, 2 response2 better), which become human labels. A judge's
outputs are the same records (or records in the same order with ``idx``) carrying the judge's
verdict in one of ``pandalm_result``, ``result``, ``prediction``, ``verdict`` (0, 1, 2 as above;
anything else is an unusable answer, stored invalid: ``agreement --invalid tie`` counts them as
ties, as PandaLM's own tables do). Items are named ``pandalm-<n>-1`` / ``-2`` from the record's
position (or ``idx``), so a judge's file finds the test set's items.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.imports._formats import Bundle, JudgmentFormat
from jurybench.imports.formats._common import field, records

CODES = {0: "tie", 1: "A", 2: "B"}
RESULT_FIELDS = ("pandalm_result", "result", "prediction", "verdict")


def read(path: Path, options: Mapping[str, str]) -> Bundle:
    bundle = Bundle()
    judge = options.get("judge") or path.stem
    unusable = 0
    for number, record in records(path):
        index = field(path, number, record, "idx", required=False, kind=int)
        n = number - 1 if index is None else index
        prompt = field(path, number, record, "instruction")
        extra = field(path, number, record, "input", required=False)
        if extra:
            prompt = f"{prompt}\n\n{extra}"
        a, b = f"pandalm-{n}-1", f"pandalm-{n}-2"
        for item, name in ((a, "response1"), (b, "response2")):
            bundle.item({"item_id": item, "prompt": prompt, "response": field(path, number, record, name)})
        pid = bundle.pair(f"pandalm-{n}", a, b)
        for k in (1, 2, 3):
            code = record.get(f"annotator{k}")
            if code is not None:
                value = _code(code)
                if value is None:
                    from jurybench.errors import JurybenchError

                    raise JurybenchError(
                        f"{path} record {number}, field 'annotator{k}': {code!r} is not a label.",
                        hint="0 a tie, 1 response1 better, 2 response2 better.",
                    )
                bundle.labels.append(
                    {"pair_id": pid, "annotator": f"annotator{k}", "criterion": "preference", "value": value}
                )
        result_field = next((f for f in RESULT_FIELDS if f in record), None)
        if result_field is not None:
            verdict = _code(record[result_field])
            row: dict[str, Any] = {"pair_id": pid}
            if verdict is None:
                unusable += 1
                row["status"] = "invalid"
                row["raw"] = str(record[result_field])
            else:
                row["verdict"] = verdict
            bundle.judge(judge, row)
    if unusable:
        bundle.notes.append(
            f"{unusable} unusable judge answers kept as invalid (agreement --invalid tie counts them as PandaLM does)"
        )
    return bundle


def _code(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return CODES.get(value) if isinstance(value, int) else None


FORMATS = [
    JudgmentFormat(
        name="pandalm",
        description="PandaLM's test set (annotator1..3: 0 tie, 1, 2) and a judge's outputs on it",
        rubric="preference-tie",
        read=read,
        detect=lambda path, head: (
            isinstance(head, list)
            and bool(head)
            and isinstance(head[0], dict)
            and {"instruction", "response1", "response2"} <= set(head[0])
        ),
        fields={
            "items.prompt": "instruction (+ input)",
            "items.response": "response1 (item_a), response2 (item_b)",
            "labels.value": "annotator1, annotator2, annotator3 (0 tie, 1 A, 2 B)",
            "judgments.verdict": "pandalm_result / result / prediction / verdict (else invalid)",
            "juror": "--option judge=NAME (default: the file's name)",
        },
        options={"judge": "the judge's name (default: the file's name)"},
    )
]
