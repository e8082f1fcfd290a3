"""promptfoo result files (``promptfoo eval -o results.json``): each test's model-graded
assertions (``llm-rubric`` and the other model-graded types) become judgments of the ``graded``
rubric, one juror an assertion type.

Fields read: ``results.results`` (or a top-level ``results`` list, older files), each with
``provider.id`` (or ``provider.label``: the model), ``prompt.raw`` (the prompt), ``response.output``
(the response), ``testIdx`` / ``promptIdx`` and ``gradingResult.componentResults``: per
assertion ``assertion.type``, ``score`` (0..1), ``pass`` and ``reason`` (the judgment's text).
A component with no score takes its pass (1) or fail (0); a component with neither, or with a
score that is not a number from 0 to 1 (text such as "0.8", a list), is invalid: never coerced.
Items are named ``promptfoo-<test>-<prompt>-<provider>``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.imports import Bundle, JudgmentFormat, obj, records

MODEL_GRADED = (
    "llm-rubric",
    "model-graded-closedqa",
    "model-graded-factuality",
    "factuality",
    "g-eval",
    "answer-relevance",
    "context-faithfulness",
)


def _results(path: Path) -> list[object]:
    ((_, data),) = records(path, expect="document")
    inner = data.get("results") if isinstance(data, dict) else None
    if isinstance(inner, dict):
        inner = inner.get("results")
    if not isinstance(inner, list):
        raise JurybenchError(f"{path}: not a promptfoo results file (no results list).")
    return inner


def read(path: Path, options: Mapping[str, str]) -> Bundle:
    wanted = tuple(t.strip() for t in options["assertions"].split(",")) if options.get("assertions") else MODEL_GRADED
    bundle = Bundle(continuous=True)
    for number, result in enumerate(_results(path), start=1):
        if not isinstance(result, dict):
            raise JurybenchError(f"{path} result {number}: expected an object.")
        provider = obj(result.get("provider"))
        model = str(provider.get("id") or provider.get("label") or "model")
        prompt = obj(result.get("prompt"))
        response = obj(result.get("response"))
        output = response.get("output")
        grading = obj(result.get("gradingResult"))
        components = [
            c
            for c in grading.get("componentResults") or []
            if isinstance(c, dict) and isinstance(c.get("assertion"), dict) and c["assertion"].get("type") in wanted
        ]
        if not components:
            continue
        item = f"promptfoo-{result.get('testIdx', number)}-{result.get('promptIdx', 0)}-{model}"
        bundle.item(
            {
                "item_id": item,
                "prompt": prompt.get("raw"),
                "response": output
                if isinstance(output, str)
                else json.dumps(output, sort_keys=True)
                if output is not None
                else "",
                "model": model,
            }
        )
        for component in components:
            score, passed = component.get("score"), component.get("pass")
            row: dict[str, object] = {"item_id": item, "criterion": "score"}
            if isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1:
                row["score"] = float(score)
            elif score is None and isinstance(passed, bool):  # a score given but unusable is not a pass
                row["score"] = float(passed)
            else:
                row |= {"score": None, "status": "invalid"}
            if component.get("reason"):
                row["raw"] = str(component["reason"])
            bundle.judge(str(component["assertion"]["type"]), row)
    if not bundle.judgments:
        bundle.notes.append(f"no model-graded assertions ({', '.join(wanted)}) in the file")
    return bundle


def detect(path: Path, head: Any) -> bool:
    if not isinstance(head, dict):
        return False
    inner = head.get("results")
    inner = inner.get("results") if isinstance(inner, dict) else inner
    return isinstance(inner, list) and bool(inner) and isinstance(inner[0], dict) and "gradingResult" in inner[0]


FORMATS = [
    JudgmentFormat(
        name="promptfoo",
        description="promptfoo results.json: llm-rubric (and other model-graded) assertion scores",
        rubric="graded",
        read=read,
        detect=detect,
        fields={
            "items": "testIdx, promptIdx, provider.id; prompt.raw, response.output",
            "judgments.score": "gradingResult.componentResults[].score (else pass 1 / fail 0)",
            "judgments.raw": "gradingResult.componentResults[].reason",
            "juror": "componentResults[].assertion.type",
        },
        options={"assertions": "the assertion types to read, comma-separated (default: the model-graded ones)"},
    )
]
