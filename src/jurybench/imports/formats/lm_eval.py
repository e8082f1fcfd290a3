"""lm-evaluation-harness sample files (``--log_samples``: ``<output>/<model>/samples_<task>_<time>.jsonl``),
one line a document and filter: its per-sample metric becomes a judgment of the ``graded`` rubric.

Fields read, as lm-eval's evaluation tracker writes them (its ``SampleResult`` in
``lm_eval/result_schema.py``): ``doc_id``, ``doc`` (kept as the item's metadata), ``arguments``
(``{"gen_args_N": {"arg_0": ..., "arg_1": ...}}``; older files a list of lists: the prompt is
the first request's first argument), ``resps`` / ``filtered_resps``, ``filter``, ``target``
(the reference) and the metric (``--option metric=NAME``; default the first of the line's
``metrics`` list, else acc, exact_match). The response is the model's generation (the raw
``resps``; the filtered one when there is no raw one); on a multiple-choice task, where each
request scores one choice and the responses are ``[log-likelihood, is-greedy]``, it is the
choice the model ranked highest (that request's ``arg_1``). The metric must lie in [0, 1]
(accuracy, exact match, a 0..1 score). The judge is the metric's name, with the filter after a
colon where it is not ``none`` (``exact_match:strict-match``: lm-eval writes one line per
filter, each its own judge), and the model the folder the file is in (lm-eval names it after
the model), or ``--option model=NAME``. The task comes from the file's name. Items are named
``lm-eval-<task>-<doc_id>-<model>``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError, brief
from jurybench.imports import Bundle, JudgmentFormat, field, records
from jurybench.store import as_float


def _first_text(value: Any) -> str | None:
    """The first text inside nested lists (lm-eval wraps requests and responses in lists)."""
    while isinstance(value, list | tuple) and value:
        value = value[0]
    if isinstance(value, dict):
        value = value.get("arg_0", next(iter(value.values()), None))
        return _first_text(value)
    return None if value is None else str(value)


def read(path: Path, options: Mapping[str, str]) -> Bundle:
    found = re.match(r"samples_(.+?)_\d{4}-\d{2}-\d{2}T", path.name)
    task = options.get("task") or (found.group(1) if found else path.stem.removeprefix("samples_"))
    model = options.get("model") or path.parent.name or "model"
    bundle = Bundle(continuous=True)
    for number, record in records(path):
        doc = field(path, number, record, "doc_id", kind=(int, str))
        metrics = record.get("metrics") if isinstance(record.get("metrics"), list) else []
        metric = options.get("metric") or next((m for m in (*metrics, "acc", "exact_match") if m in record), None)
        if metric is None or metric not in record:
            raise JurybenchError(
                f"{path} line {number}: no metric {metric or ''} on the line.".replace("  ", " "),
                hint="Name it with --option metric=NAME (a field of each line, e.g. acc or exact_match).",
            )
        value = record[metric]
        item = f"lm-eval-{task}-{doc}-{model}"
        response = _response(record)
        target = record.get("target")
        bundle.item(
            {
                "item_id": item,
                "prompt": _first_text(record.get("arguments")),
                "response": response,
                "model": model,
                "reference": None if target is None else target if isinstance(target, str) else json.dumps(target),
                "doc": json.dumps(record.get("doc"), sort_keys=True, default=str)
                if record.get("doc") is not None
                else None,
            }
        )
        row: dict[str, object] = {"item_id": item, "criterion": "score"}
        if isinstance(value, bool):
            value = float(value)
        if isinstance(value, int | float):  # a whole number past a float's range is infinite
            value = as_float(value)
        if not isinstance(value, int | float) or math.isnan(value):
            row["status"] = "invalid"
        elif not 0 <= value <= 1:
            raise JurybenchError(
                f"{path} line {number}, field '{metric}': {brief(record.get(metric))} is outside 0..1, the graded "
                "rubric's scale.",
                hint="Import a metric in [0, 1] (--option metric=NAME), or give --rubric one whose scale fits.",
            )
        else:
            row["score"] = float(value)
        chosen = record.get("filter")
        bundle.judge(str(metric) if chosen in (None, "none") else f"{metric}:{chosen}", row)
    return bundle


def _loglikelihoods(value: Any) -> list[float] | None:
    """A multiple-choice line's per-choice log-likelihoods ([[log p, is greedy], ...], as numbers
    or as the text lm-eval sanitizes them to), else None."""
    if not isinstance(value, list) or not value:
        return None
    out = []
    for entry in value:
        while isinstance(entry, list) and len(entry) == 1 and isinstance(entry[0], list):
            entry = entry[0]
        if not (isinstance(entry, list) and len(entry) == 2):
            return None
        try:
            out.append(float(entry[0]))
        except (TypeError, ValueError):
            return None
        if str(entry[1]) not in ("True", "False", "true", "false"):
            return None
    return out


def _response(record: Mapping[str, object]) -> str:
    """The model's generation, or on a multiple-choice line the continuation it ranked highest."""
    scores = _loglikelihoods(record.get("filtered_resps"))
    arguments = record.get("arguments")
    if scores is not None:
        requests = list(arguments.values()) if isinstance(arguments, dict) else arguments
        best = max(range(len(scores)), key=lambda k: scores[k])
        if isinstance(requests, list) and best < len(requests):
            request = requests[best]
            second = request.get("arg_1") if isinstance(request, dict) else request[1] if len(request) > 1 else None
            if isinstance(second, str):
                return second.strip()
    return _first_text(record.get("resps")) or _first_text(record.get("filtered_resps")) or ""


FORMATS = [
    JudgmentFormat(
        name="lm-eval",
        description="lm-evaluation-harness samples_<task>_<time>.jsonl: a per-sample metric in [0, 1]",
        rubric="graded",
        read=read,
        detect=lambda path, head: (
            isinstance(head, dict) and {"doc_id", "doc"} <= set(head) and ("resps" in head or "filtered_resps" in head)
        ),
        fields={
            "items": "doc_id, the task (file name) and the model (folder); prompt from arguments (gen_args_0.arg_0)",
            "items.response": "resps (else filtered_resps); multiple choice: the arg_1 of the highest log-likelihood",
            "items.reference": "target",
            "judgments.score": "the metric (--option metric; default metrics[0], acc, exact_match)",
            "juror": "the metric's name, and the filter after a colon unless it is none",
        },
        options={"metric": "the per-sample metric to import", "model": "the model's name", "task": "the task's name"},
    )
]
