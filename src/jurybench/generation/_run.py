"""Generate responses under paired treatments with the judge engine's machinery.

Each (prompt, arms, model, sample) is one call of the engine (same cache keys, batching,
retries, rate limits, resume, cost tracking and progress; ``runs.mode = 'generation'``).
When the run ends, answered responses are read back: refusals are marked (the provider's
signal, or the spec's patterns), the exclusion policy is applied, the remaining responses
become items carrying their treatment, and items that differ only in one pairing variable
are linked as pairs, ready for a pairwise rubric.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.engine import EngineOptions, Planned, RunResult, Task, call_key, run_tasks
from jurybench.errors import JurybenchError
from jurybench.generation._spec import GenerationSpec
from jurybench.jurors import JurorSpec, juror_from_mapping, parse_juror, unit_id
from jurybench.jury import as_jury

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store import Row


@dataclass
class Prompt:
    prompt_id: str
    prompt: str
    language: str | None
    metadata: dict[str, object]


@dataclass
class GenerationReport:
    run: RunResult
    n_units: int = 0
    n_answered: int = 0
    n_refused: int = 0
    n_excluded: int = 0
    n_unanswered: int = 0
    items_inserted: int = 0
    items_present: int = 0
    pairs_inserted: int = 0
    pairs_present: int = 0
    withdrawn: int = 0
    kept_judged: int = 0
    excluded_prompts: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            self.run.summary(),
            f"{self.n_answered} responses answered ({self.n_refused} refusals), {self.n_unanswered} without an answer; "
            f"{self.n_excluded} excluded",
            f"items: {self.items_present} ({self.items_inserted} new); pairs: {self.pairs_present} "
            f"({self.pairs_inserted} new)",
        ]
        if self.excluded_prompts:
            shown = ", ".join(self.excluded_prompts[:10]) + (" ..." if len(self.excluded_prompts) > 10 else "")
            out.append(f"prompts dropped for every model (a model refused them): {shown}")
        if self.withdrawn or self.kept_judged:
            out.append(
                f"{self.withdrawn} earlier items withdrawn under the exclusion policy"
                + (f"; {self.kept_judged} kept because they were already judged" if self.kept_judged else "")
            )
        return out


def load_prompts(path: Path) -> list[Prompt]:
    """A prompt set (CSV/JSONL/Parquet): prompt_id, prompt, optional language; other columns are metadata."""
    from jurybench.store import read_rows

    return prompts_from_rows(read_rows(path), str(path))


def prompts_from_rows(rows: list[tuple[int, Row]], source: str) -> list[Prompt]:
    """Prompts from rows (number, mapping); errors name ``source``, the row and the field."""
    from jurybench.store import require_columns, text_field

    path = Path(source)
    require_columns(path, rows, ("prompt_id", "prompt"))
    seen: dict[str, int] = {}
    prompts = []
    for number, row in rows:
        pid = text_field(path, number, row, "prompt_id", required=True)
        assert pid is not None
        if "|" in pid or "/" in pid:
            raise JurybenchError(f"{path} row {number}, field 'prompt_id': {pid!r} may not contain '|' or '/'.")
        if pid in seen:
            raise JurybenchError(
                f"{path} row {number}, field 'prompt_id': duplicate id '{pid}' (first at row {seen[pid]}).",
                hint="Prompt ids must be unique.",
            )
        seen[pid] = number
        text = text_field(path, number, row, "prompt", required=True)
        language = text_field(path, number, row, "language", required=False)
        meta = {k: v for k, v in row.items() if k not in ("prompt_id", "prompt", "language") and v is not None}
        prompts.append(Prompt(pid, text or "", language, meta))
    if not prompts:
        raise JurybenchError(f"{path}: no prompts.", hint="Add rows with prompt_id and prompt.")
    return prompts


def generators_of(spec: GenerationSpec, models: list[str] | None = None) -> list[JurorSpec]:
    """The response models: from ``models`` (CLI) or the spec, with the spec's sampling defaults."""
    entries: list[Any] = list(models) if models else list(spec.models)
    if not entries:
        raise JurybenchError(
            f"generation '{spec.name}' names no models.", hint="Add models: [...] to the spec or pass --model."
        )
    out = []
    for entry in entries:
        juror = parse_juror(entry) if isinstance(entry, str) else juror_from_mapping(dict(entry), where="models")
        params = dict(juror.params)
        for key in ("temperature", "top_p", "max_tokens"):
            value = getattr(spec, key)
            if value is not None and key not in params:
                params[key] = value
        samples = juror.samples if juror.samples > 1 else spec.samples
        out.append(JurorSpec(juror.model, params, juror.name, samples, juror.options))
    names = [g.display_name for g in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise JurybenchError(
            f"two response models are named '{twice[0]}'.", hint="Give each a name=... so their items stay apart."
        )
    return out


def render(spec: GenerationSpec, prompt: Prompt, arms: dict[str, str], language: str | None) -> list[dict[str, str]]:
    from jurybench.rubric import fill_template

    template = spec.templates.get(language or "")
    system, user = (template.system, template.user) if template else (spec.system, spec.user)
    values: dict[str, object] = {"prompt": prompt.prompt, "language": language}
    for name, arm in arms.items():
        values[name] = spec.treatments[name].text.get(arm, arm)
    label = f"prompt {prompt.prompt_id}"
    messages = []
    if system.strip():
        messages.append({"role": "system", "content": fill_template(system, values, prompt.metadata, label)})
    messages.append({"role": "user", "content": fill_template(user, values, prompt.metadata, label)})
    return messages


def item_id_of(spec: GenerationSpec, prompt_id: str, generator: JurorSpec, arms: dict[str, str], sample: int) -> str:
    arm_text = ",".join(f"{k}={v}" for k, v in arms.items())
    return f"{spec.name}/{prompt_id}/{generator.display_name}/{arm_text}/{sample}"


@dataclass
class _Planned:
    prompt: Prompt
    arms: dict[str, str]
    language: str | None
    generator: JurorSpec
    sample: int
    item_id: str
    messages: list[dict[str, str]]


def plan_generation(
    spec: GenerationSpec, generators: list[JurorSpec], prompts: list[Prompt]
) -> tuple[list[Task], dict[str, _Planned], int]:
    tasks: list[Task] = []
    planned: dict[str, _Planned] = {}
    language_variable = spec.language_variable
    n_units = 0
    for prompt in prompts:
        for arms in spec.arms():
            n_units += 1
            unit = unit_id(prompt.prompt_id, arms)
            language = arms[language_variable] if language_variable else prompt.language
            messages = render(spec, prompt, arms, language)
            # The rendered request is part of the key: an edited prompt text is a new call.
            digest = hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode()).hexdigest()[:16]
            for generator in generators:
                for sample in range(generator.samples):
                    key = call_key(spec.content_hash, generator.key, f"{unit}\x1f{digest}", "", sample)
                    tasks.append(Task(key, generator, unit, "", sample, messages, language))
                    item = item_id_of(spec, prompt.prompt_id, generator, arms, sample)
                    planned[key] = _Planned(prompt, arms, language, generator, sample, item, messages)
    return tasks, planned, n_units


def generate(
    store: str | Path | Connection,
    spec: GenerationSpec,
    generators: list[JurorSpec],
    prompts: list[Prompt],
    *,
    run_id: str | None = None,
    options: EngineOptions | None = None,
    source: str | None = None,
) -> GenerationReport:
    """Generate every (prompt, arms, model, sample) not yet answered, then build items and pairs."""
    from jurybench.jurors import check_juror

    plan_only = options is not None and options.plan_only
    for generator in generators:
        check_juror(generator, need_key=not plan_only)
    if options is not None and options.batch:
        from jurybench.engine import check_batch_jurors

        check_batch_jurors(list(generators))
    jury = as_jury(generators).resolved(spec)
    tasks, planned, n_units = plan_generation(spec, generators, prompts)
    holder: dict[str, GenerationReport] = {}

    def plan(con: Connection) -> Planned:
        planned_run = Planned.of(tasks, n_units)
        if not plan_only:  # --plan writes nothing
            planned_run.write = record
        return planned_run

    def record(con: Connection) -> None:
        import pyarrow as pa

        rows = {
            "call_key": list(planned),
            "study": [spec.name] * len(planned),
            "unit_id": [unit_id(p.prompt.prompt_id, p.arms) for p in planned.values()],
            "prompt_id": [p.prompt.prompt_id for p in planned.values()],
            "generator_key": [p.generator.key for p in planned.values()],
            "treatment": [json.dumps(p.arms, sort_keys=True) for p in planned.values()],
            "language": [p.language for p in planned.values()],
            "sample_index": [p.sample for p in planned.values()],
            "item_id": [p.item_id for p in planned.values()],
        }
        con.register("planned_generations", pa.table(rows))
        try:
            con.execute(
                """INSERT OR IGNORE INTO generations (call_key, study, unit_id, prompt_id, generator_key, treatment,
                                                      language, sample_index, item_id)
                   SELECT call_key, study, unit_id, prompt_id, generator_key, treatment::JSON, language,
                          sample_index, item_id FROM planned_generations"""
            )
        finally:
            con.unregister("planned_generations")

    def finish(con: Connection, result: RunResult) -> None:
        holder["report"] = materialize(con, spec, result, planned, source=source or spec.name)

    result = run_tasks(store, spec, jury, plan, finish, run_id=run_id, options=options)
    report = holder.get("report") or GenerationReport(result)
    report.n_units = n_units
    return report


def materialize(
    con: Connection, spec: GenerationSpec, result: RunResult, planned: dict[str, _Planned], *, source: str
) -> GenerationReport:
    """Refusals, exclusion, items and pairs from the run's answered generations."""
    import pyarrow as pa

    from jurybench.store import write_items, write_pairs

    report = GenerationReport(result)
    con.register("run_keys", pa.table({"call_key": list(planned)}))
    try:
        rows = con.execute(
            """SELECT k.call_key, c.status, c.reason, c.response_text, c.finish_reason
               FROM run_keys k LEFT JOIN calls c USING (call_key)"""
        ).fetchall()
    finally:
        con.unregister("run_keys")
    refused: dict[str, str | None] = {}
    texts: dict[str, str] = {}
    for key, status, reason, text, finish_reason in rows:
        if status not in ("ok", "refusal", "invalid"):
            report.n_unanswered += 1
            continue
        report.n_answered += 1
        texts[key] = text or ""
        provider = reason if status == "refusal" and (reason or "").startswith("provider") else None
        refused[key] = provider or spec.is_refusal(text or "", finish_reason)
    report.n_refused = sum(1 for why in refused.values() if why)
    excluded: dict[str, str] = {}
    for key, why in refused.items():
        if why:
            excluded[key] = "refused"
        elif not texts[key].strip():
            excluded[key] = "empty response"
    if spec.refusal.exclusion == "prompt":
        by_prompt: dict[str, str] = {}
        for key, why in refused.items():
            if why:
                p = planned[key]
                by_prompt.setdefault(p.prompt.prompt_id, f"prompt refused by {p.generator.display_name}")
        for key in refused:
            pid = planned[key].prompt.prompt_id
            if pid in by_prompt and key not in excluded:
                excluded[key] = by_prompt[pid]
        report.excluded_prompts = sorted(by_prompt)
    report.n_excluded = len(excluded)
    update = pa.table(
        {
            "call_key": list(refused),
            "refused": [bool(why) for why in refused.values()],
            "refusal_reason": list(refused.values()),
            "excluded": [excluded.get(k) for k in refused],
        }
    )
    con.execute("BEGIN TRANSACTION")
    try:
        con.register("gen_update", update)
        con.execute(
            """UPDATE generations SET refused = u.refused, refusal_reason = u.refusal_reason, excluded = u.excluded
               FROM gen_update u WHERE generations.call_key = u.call_key"""
        )
        con.unregister("gen_update")
        report.withdrawn, report.kept_judged = _withdraw(con, [planned[k].item_id for k in excluded])
        kept = [k for k in refused if k not in excluded]
        records = []
        for n, key in enumerate(kept, start=1):
            p = planned[key]
            meta = {**p.prompt.metadata, "study": spec.name, "prompt_id": p.prompt.prompt_id, "sample": p.sample}
            records.append(
                (
                    n,
                    {
                        "item_id": p.item_id,
                        "prompt": p.messages[-1]["content"],
                        "response": texts[key],
                        "reference": None,
                        "model": p.generator.display_name,
                        "language": p.language,
                        "treatment": json.dumps(p.arms, sort_keys=True),
                        "metadata": json.dumps(meta, sort_keys=True, default=str),
                        "dataset": spec.name,
                        "source_file": source,
                    },
                )
            )
        if records:
            result_items = write_items(con, records, source=source, in_transaction=True)
            report.items_inserted = result_items.inserted
        report.items_present = len(records)
        pairs = _pairs(spec, [planned[k] for k in kept])
        if pairs:
            result_pairs = write_pairs(con, list(enumerate(pairs, start=1)), source=source, in_transaction=True)
            report.pairs_inserted = result_pairs.inserted
        report.pairs_present = len(pairs)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return report


def _pairs(spec: GenerationSpec, kept: list[_Planned]) -> list[dict[str, Any]]:
    """Items that differ only in one pairing variable, linked arm by arm (arms in spec order)."""
    out = []
    for variable in spec.pair_variables:
        groups: dict[tuple[Any, ...], dict[str, _Planned]] = defaultdict(dict)
        for p in kept:
            others = tuple((k, v) for k, v in p.arms.items() if k != variable)
            groups[(p.generator.key, p.prompt.prompt_id, p.sample, others)][p.arms[variable]] = p
        for (_, prompt_id, sample, others), by_arm in sorted(
            groups.items(), key=lambda g: (g[0][1], g[0][2], g[0][3], g[0][0])
        ):
            for first, second in combinations(spec.treatments[variable].arms, 2):
                if first not in by_arm or second not in by_arm:
                    continue
                a, b = by_arm[first], by_arm[second]
                rest = ",".join(f"{k}={v}" for k, v in others)
                pair_id = (
                    f"{spec.name}/{prompt_id}/{a.generator.display_name}/{variable}:{first}-{second}/{rest}/{sample}"
                )
                meta = {"variable": variable, "arm_a": first, "arm_b": second, "generator": a.generator.display_name}
                out.append(
                    {
                        "pair_id": pair_id,
                        "item_a": a.item_id,
                        "item_b": b.item_id,
                        "dataset": spec.name,
                        "metadata": json.dumps(meta, sort_keys=True),
                        "source_file": None,
                    }
                )
    return out


def _withdraw(con: Connection, item_ids: list[str]) -> tuple[int, int]:
    """Remove items (and their pairs) the exclusion policy now drops, unless they were judged."""
    import pyarrow as pa

    if not item_ids:
        return 0, 0
    con.register("dropped", pa.table({"item_id": item_ids}))
    try:
        present = con.execute("SELECT item_id FROM items WHERE item_id IN (SELECT item_id FROM dropped)").fetchall()
        if not present:
            return 0, 0
        judged = {
            r[0]
            for r in con.execute(
                """SELECT DISTINCT item_id FROM pointwise_judgments WHERE item_id IN (SELECT item_id FROM dropped)
                   UNION SELECT DISTINCT p.item_a FROM pairs p JOIN pairwise_judgments j USING (pair_id)
                   WHERE p.item_a IN (SELECT item_id FROM dropped)
                   UNION SELECT DISTINCT p.item_b FROM pairs p JOIN pairwise_judgments j USING (pair_id)
                   WHERE p.item_b IN (SELECT item_id FROM dropped)"""
            ).fetchall()
        }
        free = [r[0] for r in present if r[0] not in judged]
        if free:
            con.register("free_items", pa.table({"item_id": free}))
            con.execute(
                "DELETE FROM pairs WHERE item_a IN (SELECT item_id FROM free_items) "
                "OR item_b IN (SELECT item_id FROM free_items)"
            )
            con.execute("DELETE FROM items WHERE item_id IN (SELECT item_id FROM free_items)")
            con.unregister("free_items")
        return len(free), len(present) - len(free)
    finally:
        con.unregister("dropped")


def refusal_table(con: Connection, study: str) -> list[tuple[Any, ...]]:
    """(generator, variable, arm, answered, refused, rate) for a study, from the refusal_rates view."""
    rows: list[tuple[Any, ...]] = con.execute(
        """SELECT generator, variable, arm, n_answered, n_refused, refusal_rate FROM refusal_rates
           WHERE study = ? ORDER BY generator, variable, arm""",
        [study],
    ).fetchall()
    return rows
