"""Inspect AI evaluation logs: a ``.json`` log, or a ``.eval`` log (a zip of ``header.json`` and
``samples/*.json``). Each sample's scores become judgments of the ``graded`` rubric, one juror a
scorer (``model_graded_qa``, ``model_graded_fact``, ...).

Fields read: ``eval.task`` and ``eval.model`` (the run's task and the model graded), each
sample's ``id`` and ``epoch``, ``input`` (the prompt: text, or the last user message),
``output.completion`` (else the first choice's message content: the response), ``target``
(the reference) and ``scores``: per scorer its ``value`` (C correct = 1, P partial = 0.5,
I incorrect = 0, N no answer = 0, as Inspect's value_to_float; a number in [0, 1] as is;
anything else, or a missing value, is stored invalid) and ``explanation`` (the judgment's text).
Items are named ``inspect-<task>-<sample id>-e<epoch>-<model>``.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.imports import Bundle, JudgmentFormat, content_text, load_json, obj, read_member, records

LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


def _log(path: Path) -> tuple[dict[str, object], list[tuple[str, Any]]]:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            try:
                header = load_json(read_member(archive, "header.json", str(path)), f"{path} header.json")
                samples = [
                    (n, load_json(read_member(archive, n, str(path)), f"{path} {n}"))
                    for n in sorted(names)
                    if n.startswith("samples/") and n.endswith(".json")
                ]
            except (KeyError, json.JSONDecodeError, zipfile.BadZipFile) as exc:
                raise JurybenchError(f"{path}: not an Inspect .eval log ({exc}).") from None
        if not isinstance(header, dict):
            raise JurybenchError(
                f"{path}: header.json is a {type(header).__name__}, not an object: not an Inspect log."
            )
        return header, samples
    ((_, data),) = records(path, expect="document")
    if not isinstance(data, dict) or "eval" not in data:
        raise JurybenchError(f"{path}: not an Inspect log (no 'eval' section).")
    return data, [(f"sample {k}", s) for k, s in enumerate(data.get("samples") or [], start=1)]


def read(path: Path, options: Mapping[str, str]) -> Bundle:
    header, samples = _log(path)
    spec = obj(header.get("eval"))
    task, model = str(spec.get("task") or path.stem), str(spec.get("model") or "model")
    if not samples:
        raise JurybenchError(f"{path}: the log has no samples (was it written with samples?).")
    bundle = Bundle(continuous=True)
    invalid = 0
    for where, sample in samples:
        if not isinstance(sample, dict) or "id" not in sample:
            raise JurybenchError(f"{path} {where}: not a sample (no 'id').")
        item = f"inspect-{task}-{sample['id']}-e{sample.get('epoch', 1)}-{model}"
        output = obj(sample.get("output"))
        response = output.get("completion")
        if response is None and output.get("choices"):
            response = content_text((output["choices"][0].get("message") or {}).get("content"))
        prompt = sample.get("input")
        if isinstance(prompt, list):  # messages: the last user message is the prompt
            users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
            prompt = content_text(users[-1].get("content")) if users else None
        target = sample.get("target")
        bundle.item(
            {
                "item_id": item,
                "prompt": prompt,
                "response": "" if response is None else str(response),
                "model": model,
                "reference": "\n".join(map(str, target)) if isinstance(target, list) else target,
            }
        )
        scores = obj(sample.get("scores"))
        for scorer, score in scores.items():
            value = _value(score.get("value") if isinstance(score, dict) else None)
            row: dict[str, object] = {"item_id": item, "criterion": "score"}
            if value is None:
                invalid += 1
                row["status"] = "invalid"
            else:
                row["score"] = value
            if isinstance(score, dict) and score.get("explanation"):
                row["raw"] = str(score["explanation"])
            bundle.judge(str(scorer), row)
    if invalid:
        bundle.notes.append(f"{invalid} scores that are not C, P, I, N or a number in [0, 1] kept as invalid")
    return bundle


def _value(value: Any) -> float | None:
    if isinstance(value, str):
        return LETTERS.get(value.strip().upper())
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and 0 <= value <= 1:
        return float(value)
    return None


def detect(path: Path, head: Any) -> bool:
    if path.suffix.lower() == ".eval":
        return zipfile.is_zipfile(path)
    return isinstance(head, dict) and isinstance(head.get("eval"), dict) and "samples" in head


FORMATS = [
    JudgmentFormat(
        name="inspect",
        description="Inspect AI eval logs (.json or .eval): each scorer's value per sample, C/P/I/N or 0..1",
        rubric="graded",
        read=read,
        detect=detect,
        fields={
            "items": "eval.task, sample id, epoch, eval.model; prompt from input, response from output.completion",
            "items.reference": "target",
            "judgments.score": "scores.<scorer>.value (C 1, P 0.5, I 0, N 0, or a number in [0, 1])",
            "judgments.raw": "scores.<scorer>.explanation",
            "juror": "the scorer's name",
        },
    )
]
