"""LLMBar (Zeng et al., ICLR 2024): instruction-following pairs with gold labels and the
raw completions of real judge models in both orders.

The import turns the data folder into store rows:

- each instance's two outputs become items ``llmbar/<subset>/<nnnn>/1`` and ``/2``
  and a pair ``llmbar/<subset>/<nnnn>`` (A = output_1, B = output_2);
- the gold label becomes a human label (annotator ``gold``, criterion ``preference``,
  +1 when output_1 is better, -1 when output_2 is);
- every judge's raw completions become recordings of source
  ``llmbar:<JUDGE>:<STRATEGY>``, served by the juror ``replay/llmbar:<JUDGE>:<STRATEGY>``
  (order AB = upstream "swap = False", BA = "swap = True").

The data is read where it lies (``--data``, ``JURYBENCH_DATA`` or ``../shared/datasets``)
and never copied into the repository.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.store import scalar, transaction, write_items, write_pairs

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store import Row

ORDERS = {"swap = False": "AB", "swap = True": "BA"}


@dataclass(frozen=True)
class LLMBarImport:
    pairs: int
    labels: int
    recordings: int
    sources: list[str]
    skipped: list[str] = field(default_factory=list)  # judge/strategy result files not read, and why

    def __str__(self) -> str:
        text = (
            f"{self.pairs} pairs, {self.labels} gold labels, {self.recordings} recorded "
            f"completions from {len(self.sources)} judge/strategy sources"
        )
        return text + "".join(f"\n  skipped {line}" for line in self.skipped)


def available_subsets(folder: Path) -> list[str]:
    """Every folder below ``folder`` that holds a dataset.json, by its path (e.g. 'Natural',
    'Adversarial/Neighbor'): LLMBar's published subsets and any others laid out the same way."""
    return sorted(str(path.parent.relative_to(folder)) for path in folder.rglob("dataset.json"))


def _recorded_results(entries: object, n: int) -> str | None:
    """Why a judge/strategy result file cannot be read as both-order completions (None: it can).
    Upstream keeps other evaluators' outputs (metrics, references, ratings) in other shapes."""
    if not isinstance(entries, list) or len(entries) != n:
        return f"{len(entries) if isinstance(entries, list) else 'no'} entries, dataset.json has {n}"
    for index, entry in enumerate(entries):
        results = entry.get("results") if isinstance(entry, dict) else None
        if not isinstance(results, list):
            return f"entry {index + 1} has no 'results' list"
        for result in results:
            for key in ORDERS:
                completion = result.get(key, {}).get("completion") if isinstance(result, dict) else None
                if not (isinstance(completion, list) and len(completion) == 2 and isinstance(completion[0], str)):
                    return f"entry {index + 1} has no '{key}' completion [text, finish_reason]"
    return None


def llmbar_dir(data: Path) -> Path:
    folder = data / "llmbar"
    if not folder.is_dir() or not available_subsets(folder):
        raise JurybenchError(
            f"no LLMBar data at {folder}.",
            hint="Pass --data DIR or set JURYBENCH_DATA to the folder holding llmbar/ "
            "(LLMBar's Dataset/LLMBar/Natural and Dataset/LLMBar/Adversarial layout, from "
            "github.com/princeton-nlp/LLMBar).",
        )
    return folder


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JurybenchError(f"{path}: not readable JSON ({exc}).") from None


def pair_id(subset: str, index: int) -> str:
    return f"llmbar/{subset}/{index:04d}"


def import_llmbar(con: Connection, data: Path, subsets: tuple[str, ...] | None = None) -> LLMBarImport:
    """Import pairs, gold labels and recorded completions in one transaction. ``subsets`` are
    folders below llmbar/ holding a dataset.json (default: every one). A judge/strategy whose
    result file is not a list of both-order completions is skipped and named."""
    import pyarrow as pa

    folder = llmbar_dir(data)
    found = available_subsets(folder)
    for subset in subsets or ():
        if subset not in found:
            raise JurybenchError(
                f"no LLMBar subset '{subset}' at {folder}.", hint=f"Subsets there: {', '.join(found)}."
            )
    skipped: list[str] = []
    item_records: list[tuple[int, Row]] = []
    pair_records: list[tuple[int, Row]] = []
    labels: list[dict[str, object]] = []
    recordings: list[dict[str, object]] = []
    sources: set[str] = set()
    for subset in subsets or found:
        sub = folder / subset
        dataset_file = sub / "dataset.json"
        instances = _load_json(dataset_file)
        for index, inst in enumerate(instances):
            pid = pair_id(subset, index)
            for k in (1, 2):
                item_records.append(
                    (
                        index + 1,
                        {
                            "item_id": f"{pid}/{k}",
                            "prompt": inst["input"],
                            "response": inst[f"output_{k}"],
                            "reference": None,
                            "model": None,
                            "language": "en",
                            "treatment": None,
                            "metadata": None,
                            "dataset": f"llmbar-{subset}",
                            "source_file": str(dataset_file),
                        },
                    )
                )
            pair_records.append(
                (
                    index + 1,
                    {
                        "pair_id": pid,
                        "item_a": f"{pid}/1",
                        "item_b": f"{pid}/2",
                        "dataset": f"llmbar-{subset}",
                        "metadata": None,
                        "source_file": str(dataset_file),
                    },
                )
            )
            label = inst.get("label")
            if label not in (1, 2):
                raise JurybenchError(
                    f"{dataset_file} entry {index + 1}, field 'label': expected 1 or 2, got {label!r}."
                )
            labels.append(
                {
                    "subject_kind": "pair",
                    "subject_id": pid,
                    "criterion": "preference",
                    "annotator": "gold",
                    "value": 1.0 if label == 1 else -1.0,
                    "label": "A" if label == 1 else "B",
                    "source_file": str(dataset_file),
                }
            )
        for result_file in sorted(sub.glob("evaluators/*/*/result.json")):
            judge, strategy = result_file.parent.parent.name, result_file.parent.name
            source = f"llmbar:{judge}:{strategy}"
            entries = _load_json(result_file)
            why = _recorded_results(entries, len(instances))
            if why is not None:
                skipped.append(f"{subset} {judge}/{strategy}: {why}")
                continue
            sources.add(source)
            for index, entry in enumerate(entries):
                if entry.get("input") != instances[index]["input"]:
                    raise JurybenchError(f"{result_file} entry {index + 1}: input differs from dataset.json.")
                for sample, result in enumerate(entry["results"]):
                    for key, order in ORDERS.items():
                        text, finish = result[key]["completion"]
                        recordings.append(
                            {
                                "source": source,
                                "subject_id": pair_id(subset, index),
                                "presented_order": order,
                                "sample_index": sample,
                                "response_text": text,
                                "finish_reason": finish or None,
                            }
                        )
    with transaction(con):
        write_items(con, item_records, source=str(folder), in_transaction=True)
        write_pairs(con, pair_records, source=str(folder), in_transaction=True)
        con.register("new_labels", pa.Table.from_pylist(labels))
        con.execute(
            "INSERT OR IGNORE INTO human_labels "
            "(subject_kind, subject_id, criterion, annotator, value, label, source_file) "
            "SELECT subject_kind, subject_id, criterion, annotator, value, label, source_file FROM new_labels"
        )
        con.unregister("new_labels")
        if recordings:  # a subset may have no judge results that can be read
            con.register("new_recordings", pa.Table.from_pylist(recordings))
            con.execute("INSERT OR IGNORE INTO recordings SELECT * FROM new_recordings")
            con.unregister("new_recordings")
    n_rec = scalar(con, "SELECT count(*) FROM recordings WHERE source LIKE 'llmbar:%'")
    return LLMBarImport(len(pair_records), len(labels), int(n_rec), sorted(sources), skipped)


UPSTREAM_FIGURES = {
    "correct_False": "correct_ab",
    "correct_True": "correct_ba",
    "correct_both": "both_correct",
    "equal": "consistent",
}


def upstream_counts(data: Path, subset: str, judge: str, strategy: str) -> dict[str, int]:
    """The counts in LLMBar's statistics.json ("94 / 100 = 94.0%" -> 94), by our figure names."""
    path = llmbar_dir(data) / subset / "evaluators" / judge / strategy / "statistics.json"
    stats = _load_json(path)
    return {ours: int(str(stats[theirs]).split("/")[0]) for theirs, ours in UPSTREAM_FIGURES.items()}


def compare_with_upstream(
    con: Connection, run_id: str, data: Path, subset: str, strategy: str
) -> tuple[list[str], bool]:
    """Lines comparing each replayed judge's figures with statistics.json, and whether all match."""
    from jurybench.annotations import preference_accuracy

    report = preference_accuracy(con, run_id, annotator="gold")
    lines = []
    all_ok = True
    checked = 0
    for row in report.jurors:
        prefix = "replay/llmbar:"
        if not row.model.startswith(prefix):
            continue
        judge, juror_strategy = row.model[len(prefix) :].split(":")
        if juror_strategy != strategy:
            continue
        expected = upstream_counts(data, subset, judge, strategy)
        got = {k: row.counts.get(k, 0) for k in expected}
        ok = got == expected
        all_ok &= ok
        checked += 1
        detail = ", ".join(
            f"{k} {got[k]}" + ("" if got[k] == expected[k] else f" (upstream {expected[k]})") for k in expected
        )
        lines.append(f"{'match' if ok else 'MISMATCH'} {judge}/{strategy}: {detail}")
    if checked == 0:
        lines.append(f"no replayed LLMBar {strategy} jurors in run {run_id}")
        all_ok = False
    else:
        lines.append(
            f"{checked} judges checked against statistics.json: {'all match' if all_ok else 'mismatches above'}"
        )
    return lines, all_ok
