"""HANNA (Chhun et al., COLING 2022 / TACL 2024): 1,056 stories rated by three humans and
five LLMs on six criteria.

The import makes:

- each story an item ``hanna/<system>/<prompt>`` (model = the generating system,
  metadata ``prompt_id``, ``story_id``); the file holds scores only, so the response
  text is a marker naming the story, and calibration groups by ``meta.prompt_id``;
- each rater's scores human labels (annotators ``human1`` .. ``human3``);
- each LLM a juror ``import/hanna:<LLM>`` whose four prompt variants become samples
  0..3, stored as judgments of the run ``hanna`` under the ``story-quality`` rubric
  (whose six criteria are HANNA's). Upstream LLM scores are means of three samples with
  0 for an unparseable answer: values outside 1..5 are stored as invalid with that
  reason; means inside 1..5 that include a 0 cannot be told apart and are kept.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError
from jurybench.store import transaction, write_items

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

CRITERIA = {
    "RE": "relevance",
    "CH": "coherence",
    "EM": "empathy",
    "SU": "surprise",
    "EG": "engagement",
    "CX": "complexity",
}
LLMS = {
    "Beluga-13B": "Beluga-13B",
    "OrcaPlatypus": "OrcaPlatypus-13B",
    "Mistral-7B": "Mistral-7B",
    "Llama-13B": "Llama-13B",
    "ChatGPT": "ChatGPT",
}
RUN_ID = "hanna"
STORIES_PER_SYSTEM = 96


@dataclass(frozen=True)
class HannaImport:
    stories: int
    labels: int
    judgments: int
    invalid: int

    def __str__(self) -> str:
        return (
            f"{self.stories} stories, {self.labels} human labels, {self.judgments} LLM judgments "
            f"({self.invalid} outside 1..5 stored as invalid) in run '{RUN_ID}'"
        )


def hanna_file(data: Path) -> Path:
    path = data / "hanna" / "hanna_metric_scores_llm.csv"
    if not path.exists():
        raise JurybenchError(
            f"no HANNA data at {path}.",
            hint="Pass --data DIR or set JURYBENCH_DATA to the folder holding hanna/ (from the "
            "dig-team/hanna-benchmark-asg repository).",
        )
    return path


def read_hanna(path: Path) -> list[dict[str, Any]]:
    """One dict per story: system, prompt_id, story_id, human scores, LLM scores per variant."""
    csv.field_size_limit(1 << 30)
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    stories = []
    for r, row in enumerate(rows):
        system = row["Model"]

        def column(name: str, line: int = r + 2, row: dict[str, str] = row) -> list[float]:
            if name not in row:
                raise JurybenchError(f"{path}: missing column {name!r}.")
            try:
                values = ast.literal_eval(row[name])
            except (ValueError, SyntaxError):
                raise JurybenchError(f"{path} line {line}, field {name!r}: not a list of numbers.") from None
            if len(values) != STORIES_PER_SYSTEM:
                raise JurybenchError(f"{path} line {line}, field {name!r}: {len(values)} values, expected 96.")
            return [float(v) for v in values]

        humans = {(k, code): column(f"Human {k} {code}") for k in (1, 2, 3) for code in CRITERIA}
        llm = {(llm, code, v): column(f"{llm} {code} {v}") for llm in LLMS for code in CRITERIA for v in (1, 2, 3, 4)}
        for p in range(STORIES_PER_SYSTEM):
            stories.append(
                {
                    "system": system,
                    "prompt_id": p,
                    "story_id": r * STORIES_PER_SYSTEM + p,
                    "humans": {key: values[p] for key, values in humans.items()},
                    "llm": {key: values[p] for key, values in llm.items()},
                }
            )
    return stories


def import_hanna(con: Connection, data: Path) -> HannaImport:
    """Import stories, human ratings and LLM ratings in one transaction (idempotent)."""
    import pyarrow as pa

    from jurybench.engine import call_key, register_jurors, register_rubric
    from jurybench.jurors import JurorSpec
    from jurybench.jury import Jury, register_jury
    from jurybench.rubric import load_rubric

    path = hanna_file(data)
    stories = read_hanna(path)
    rubric = load_rubric("story-quality")
    jurors = {
        llm: JurorSpec(
            model=f"import/hanna:{name}", params={"source": "HANNA", "prompt_variants": 4}, name=name, samples=4
        )
        for llm, name in LLMS.items()
    }
    items, labels, calls, judgments = [], [], [], []
    invalid = 0
    for s in stories:
        item_id = f"hanna/{s['system']}/{s['prompt_id']:02d}"
        items.append(
            (
                s["story_id"] + 1,
                {
                    "item_id": item_id,
                    "prompt": f"HANNA writing prompt {s['prompt_id']}",
                    "response": f"(HANNA story {s['story_id']}: text not in hanna_metric_scores_llm.csv)",
                    "reference": None,
                    "model": s["system"],
                    "language": "en",
                    "treatment": None,
                    "metadata": json.dumps({"prompt_id": s["prompt_id"], "story_id": s["story_id"]}),
                    "dataset": "hanna",
                    "source_file": str(path),
                },
            )
        )
        for (k, code), value in s["humans"].items():
            labels.append(
                {
                    "subject_kind": "item",
                    "subject_id": item_id,
                    "criterion": CRITERIA[code],
                    "annotator": f"human{k}",
                    "value": value,
                    "label": f"{value:g}",
                    "source_file": str(path),
                }
            )
        for llm, spec in jurors.items():
            for variant in (1, 2, 3, 4):
                key = call_key(rubric.content_hash, spec.key, item_id, "", variant - 1)
                scores = {CRITERIA[code]: s["llm"][(llm, code, variant)] for code in CRITERIA}
                bad = [c for c, v in scores.items() if not 1 <= v <= 5]
                calls.append(
                    {
                        "call_key": key,
                        "rubric_hash": rubric.content_hash,
                        "juror_key": spec.key,
                        "subject_kind": "item",
                        "subject_id": item_id,
                        "sample_index": variant - 1,
                        "status": "ok",
                        "reason": f"imported from HANNA (prompt variant {variant})",
                    }
                )
                for criterion, value in scores.items():
                    ok = criterion not in bad
                    invalid += not ok
                    judgments.append(
                        {
                            "call_key": key,
                            "rubric_hash": rubric.content_hash,
                            "juror_key": spec.key,
                            "item_id": item_id,
                            "sample_index": variant - 1,
                            "criterion": criterion,
                            "score": value if ok else None,
                            "status": "valid" if ok else "invalid",
                            "reason": None
                            if ok
                            else f"upstream mean {value:g} is outside 1..5 (HANNA scores unparseable answers 0)",
                        }
                    )
    with transaction(con):
        write_items(con, items, source=str(path), in_transaction=True)
        register_rubric(con, rubric)
        register_jurors(con, list(jurors.values()))
        juror_keys = json.dumps(sorted(j.key for j in jurors.values()))
        con.execute(
            "INSERT OR IGNORE INTO runs (run_id, rubric_hash, mode, jurors, selection, n_subjects, status) "
            "VALUES (?, ?, 'pointwise', ?, 'imported from HANNA', ?, 'finished')",
            [RUN_ID, rubric.content_hash, juror_keys, len(items)],
        )
        register_jury(con, RUN_ID, Jury(tuple(jurors.values())).resolved(rubric))
        for name, rows in (("new_labels", labels), ("new_calls", calls), ("new_judgments", judgments)):
            con.register(name, pa.Table.from_pylist(rows))
        con.execute(
            "INSERT OR IGNORE INTO human_labels (subject_kind, subject_id, criterion, annotator, value, label, source_file) "
            "SELECT subject_kind, subject_id, criterion, annotator, value, label, source_file FROM new_labels"
        )
        # calls, judgments and run_calls keep no key index (migration m010): a re-import adds
        # only the calls not stored yet, with their rows.
        con.execute(
            """CREATE OR REPLACE TEMP TABLE _jb_fresh AS
               SELECT DISTINCT call_key FROM new_calls ANTI JOIN calls USING (call_key)"""
        )
        con.execute(
            """INSERT INTO calls (call_key, rubric_hash, juror_key, subject_kind, subject_id, presented_order,
                   sample_index, messages, response_text, finish_reason, status, reason, attempts, run_id)
               SELECT call_key, rubric_hash, juror_key, subject_kind, subject_id, NULL, sample_index, '[]', NULL,
                   NULL, status, reason, 0, ? FROM new_calls SEMI JOIN _jb_fresh USING (call_key)""",
            [RUN_ID],
        )
        con.execute(
            """INSERT INTO pointwise_judgments (call_key, rubric_hash, juror_key, item_id, sample_index,
                   criterion, score, status, reason)
               SELECT call_key, rubric_hash, juror_key, item_id, sample_index, criterion, score, status, reason
               FROM new_judgments SEMI JOIN _jb_fresh USING (call_key)"""
        )
        con.execute(
            """INSERT INTO run_calls SELECT DISTINCT ?, call_key FROM new_calls
               WHERE call_key NOT IN (SELECT call_key FROM run_calls WHERE run_id = ?)""",
            [RUN_ID, RUN_ID],
        )
        con.execute("DROP TABLE temp._jb_fresh")
        for name in ("new_labels", "new_calls", "new_judgments"):
            con.unregister(name)
    return HannaImport(len(items), len(labels), len(judgments), invalid)


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
