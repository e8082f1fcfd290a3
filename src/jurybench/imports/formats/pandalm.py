"""PandaLM's human-annotated test set (``data/testset-v1.json``) and its judges' outputs on it
(``data/gpt-3.5-turbo-testset-v1.json``, ``data/pandalm-7b-testset-v1.json``), read as released.

The test set is a JSON list, one record a comparison: ``idx``, ``instruction`` and ``input``
(the prompt), ``response1`` / ``response2`` (item_a / item_b), ``annotator1`` .. ``annotator3``
(0 a tie, 1 response1 better, 2 response2 better), which become human labels, and
``motivation_app`` / ``cmp_key`` (kept as the items' metadata; ``cmp_key`` names the two models,
``bloom-7b_llama-7b``). Six of its responses are JSON ``true``/``false`` rather than text; they
are kept as the text ``true`` / ``false`` and counted in a note.

A judge's file holds, per record, ``idx`` and the judge's ``<name>_result`` (PandaLM-7B: 0, 1, 2
as above; gpt-3.5-turbo: "1", "2", "Tie", or "garbage" where its answer could not be parsed),
``<name>_reason`` and ``<name>_reference``. It names no instruction or response, so it is
joined to the test set by ``idx``: give the test set with ``--option testset=FILE``. A verdict
that is not 0/1/2/Tie is stored invalid with its text (``agreement --invalid tie`` counts it as
a tie, as PandaLM's own tables do). Records that carry the test set's fields and a result field
(``pandalm_result``, ``result``, ``prediction``, ``verdict`` or any ``*_result``) are read in
one go. Items are named ``pandalm-<idx>-1`` / ``-2`` and pairs ``pandalm-<idx>`` (the record's
position when there is no ``idx``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.imports import Bundle, JudgmentFormat, field, records

CODES = {0: "tie", 1: "A", 2: "B"}
WORDS = {"tie": "tie", "0": "tie", "1": "A", "2": "B"}
RESULT_FIELDS = ("pandalm_result", "result", "prediction", "verdict")
TEST_SET_FIELDS = ("instruction", "response1", "response2")


def read(path: Path, options: Mapping[str, str]) -> Bundle:
    bundle = Bundle()
    judge = options.get("judge") or path.stem
    rows = records(path)
    test_set = options.get("testset")
    if rows and not _is_test_set(rows[0][1]):
        if not test_set:
            raise JurybenchError(
                f"{path}: a PandaLM judge's file holds only idx and the judge's verdicts; name the test set "
                "they refer to with --option testset=FILE.",
                hint="PandaLM's data/testset-v1.json.",
            )
        by_index, booleans = _test_set(bundle, Path(test_set))
    else:
        if test_set:
            raise JurybenchError(f"{path}: --option testset is for a judge's file; this file is the test set itself.")
        by_index, booleans = None, 0
    unusable = 0
    for number, record in rows:
        index = field(path, number, record, "idx", required=False, kind=int)
        n = number - 1 if index is None else index
        if by_index is None:
            booleans += _comparison(bundle, path, number, record, n)
        elif n not in by_index:
            raise JurybenchError(
                f"{path} record {number}, field 'idx': {n} is not in the test set {test_set}.",
                hint="Give the test set these verdicts were made on.",
            )
        result_field = next((f for f in RESULT_FIELDS if f in record), None) or next(
            (k for k in record if isinstance(k, str) and k.endswith("_result")), None
        )
        if result_field is None:
            if by_index is not None:
                raise JurybenchError(
                    f"{path} record {number}: no verdict field (pandalm_result, gpt_result or another *_result)."
                )
            continue
        given = record[result_field]
        verdict = _code(given)
        reason = record.get(result_field.removesuffix("result") + "reason")
        row: dict[str, object] = {"pair_id": f"pandalm-{n}"}
        if verdict is None:
            unusable += 1
            row["status"] = "invalid"
            row["raw"] = str(given) + (f"\n\n{reason}" if isinstance(reason, str) and reason else "")
        else:
            row["verdict"] = verdict
            if isinstance(reason, str) and reason:
                row["raw"] = reason
        bundle.judge(judge, row)
    if booleans:
        bundle.notes.append(f"{booleans} responses given as JSON true/false kept as the text true/false")
    if unusable:
        bundle.notes.append(
            f"{unusable} unusable judge answers kept as invalid (agreement --invalid tie counts them as PandaLM does)"
        )
    return bundle


def _is_test_set(record: Any) -> bool:
    return isinstance(record, dict) and all(k in record for k in TEST_SET_FIELDS)


def _test_set(bundle: Bundle, path: Path) -> tuple[set[int], int]:
    """The test set's comparisons added to ``bundle`` (items, pairs, the annotators' labels): the
    indices a judge's file may name, and how many responses were JSON booleans."""
    found = set()
    booleans = 0
    for number, record in records(path):
        if not _is_test_set(record):
            raise JurybenchError(
                f"{path} record {number}: not a PandaLM test set record (instruction, response1, response2).",
                hint="--option testset= names PandaLM's data/testset-v1.json.",
            )
        index = field(path, number, record, "idx", required=False, kind=int)
        n = number - 1 if index is None else index
        booleans += _comparison(bundle, path, number, record, n)
        found.add(n)
    return found, booleans


def _comparison(bundle: Bundle, path: Path, number: int, record: Any, n: int) -> int:
    """One test-set record's two items, its pair and its annotators' labels; returns how many of
    its responses were JSON booleans (kept as text)."""
    prompt = field(path, number, record, "instruction")
    extra = field(path, number, record, "input", required=False)
    if extra:
        prompt = f"{prompt}\n\n{extra}"
    meta = {k: record[k] for k in ("motivation_app", "cmp_key") if isinstance(record.get(k), str)}
    models = str(record.get("cmp_key") or "").split("_") if "cmp_key" in meta else []
    a, b = f"pandalm-{n}-1", f"pandalm-{n}-2"
    booleans = 0
    for k, (item, name) in enumerate(((a, "response1"), (b, "response2"))):
        value = record.get(name)
        if isinstance(value, bool):
            booleans += 1
            value = "true" if value else "false"
        else:
            value = field(path, number, record, name)
        row: dict[str, object] = {"item_id": item, "prompt": prompt, "response": value}
        if len(models) == 2:
            row["model"] = models[k]
        if meta:
            row["metadata"] = meta
        bundle.item(row)
    pid = bundle.pair(f"pandalm-{n}", a, b)
    for k in (1, 2, 3):
        code = record.get(f"annotator{k}")
        if code is not None:
            value = _code(code)
            if value is None:
                raise JurybenchError(
                    f"{path} record {number}, field 'annotator{k}': {code!r} is not a label.",
                    hint="0 a tie, 1 response1 better, 2 response2 better.",
                )
            bundle.labels.append(
                {"pair_id": pid, "annotator": f"annotator{k}", "criterion": "preference", "value": value}
            )
    return booleans


def _code(value: Any) -> str | None:
    """0/1/2 (numbers or their text) and "Tie", as PandaLM writes verdicts; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return WORDS.get(value.strip().lower())
    return CODES.get(value) if isinstance(value, int) else None


def _detect(path: Path, head: Any) -> bool:
    if not (isinstance(head, list) and head and isinstance(head[0], dict)):
        return False
    first = head[0]
    return _is_test_set(first) or ("idx" in first and any(str(k).endswith("_result") for k in first))


FORMATS = [
    JudgmentFormat(
        name="pandalm",
        description="PandaLM's test set (annotator1..3: 0 tie, 1, 2) and its judges' outputs, joined by idx",
        rubric="preference-tie",
        read=read,
        detect=_detect,
        fields={
            "items.prompt": "instruction (+ input)",
            "items.response": "response1 (item_a), response2 (item_b); JSON true/false kept as text",
            "items.model": "cmp_key's two names (bloom-7b_llama-7b: response1 bloom-7b)",
            "items.metadata": "motivation_app, cmp_key",
            "labels.value": "annotator1, annotator2, annotator3 (0 tie, 1 A, 2 B)",
            "judgments.verdict": '<judge>_result: 0/1/2 or "1"/"2"/"Tie" (else invalid, its text kept)',
            "judgments.raw": "<judge>_reason",
            "join": "a judge's file: by idx to the test set given with --option testset=FILE",
            "juror": "--option judge=NAME (default: the file's name)",
        },
        options={
            "judge": "the judge's name (default: the file's name)",
            "testset": "the test set a judge's file refers to (data/testset-v1.json): its records by idx",
        },
    )
]
