"""The command line: each command opens the store and calls one library function.

Heavy modules (litellm, pandas, duckdb, scipy) are imported inside commands so
``jurybench --help`` starts fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from jurybench.errors import JurybenchError

app = typer.Typer(
    name="jurybench",
    help="Judge generations with a jury of LLMs, keep every judgment in DuckDB, query it with SQL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
items_app = typer.Typer(help="Import generations to be judged.", no_args_is_help=True)
pairs_app = typer.Typer(help="Import pairs of items for pairwise rubrics.", no_args_is_help=True)
rubrics_app = typer.Typer(help="List, show and check rubric files.", no_args_is_help=True)
datasets_app = typer.Typer(help="Import reference datasets (LLMBar) and the offline example set.", no_args_is_help=True)
report_app = typer.Typer(help="Figures over stored judgments.", no_args_is_help=True)
recordings_app = typer.Typer(help="Recorded completions served by replay/<source> jurors.", no_args_is_help=True)
app.add_typer(items_app, name="items")
app.add_typer(pairs_app, name="pairs")
app.add_typer(rubrics_app, name="rubrics")
app.add_typer(datasets_app, name="datasets")
app.add_typer(report_app, name="report")
app.add_typer(recordings_app, name="recordings")
annotations_app = typer.Typer(help="Import human annotations.", no_args_is_help=True)
calibrate_app = typer.Typer(
    help="Fit juror weights against human labels (jurybench calibrate --run R), or apply a calibration.",
    invoke_without_command=True,
)
app.add_typer(annotations_app, name="annotations")


def _register_stats() -> None:
    from jurybench.cli_stats import plot, stats_app

    app.add_typer(stats_app, name="stats")
    app.command("plot")(plot)


_register_stats()
app.add_typer(calibrate_app, name="calibrate")

DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="DuckDB file (default: $JURYBENCH_DB or ./jurybench.duckdb)."),
]
FormatOption = Annotated[str, typer.Option("--format", "-f", help="table, csv, json or parquet.")]
# The engine's options, shared by score and generate.
RunOption = Annotated[str | None, typer.Option("--run", help="Run name; repeating it resumes that run.")]
ConcurrencyOption = Annotated[int, typer.Option(help="Parallel requests per provider.")]
RetriesOption = Annotated[int, typer.Option(help="Retries on 5xx and timeouts (rate limits wait instead).")]
MaxCostOption = Annotated[
    float | None,
    typer.Option("--max-cost", min=0, help="Budget in USD for the run's spend; it stops (exit 4) before passing it."),
]
GiveUpOption = Annotated[
    float,
    typer.Option("--give-up-after", min=1, help="Seconds a call may wait out rate limits (429) before it errs."),
]
ProgressOption = Annotated[bool, typer.Option("--progress/--no-progress", help="Show the progress bar.")]
BatchOption = Annotated[
    bool,
    typer.Option("--batch", help="Send calls through the providers' batch APIs (about half the price, within 24 h)."),
]
PollOption = Annotated[
    float, typer.Option("--poll-every", help="--batch: seconds between looks at open batches.", min=0.01)
]


def _console() -> Any:
    from rich.console import Console

    return Console()


def _connect(db: Path | None, *, read_only: bool = False) -> Any:
    from jurybench.store import connect

    return connect(db, read_only=read_only)


def _check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise JurybenchError(f"--format {fmt!r} is not valid.", hint=f"Valid: {', '.join(allowed)}.")


@app.command()
def migrate(db: DbOption = None) -> None:
    """Create the store or bring its schema up to date."""
    from jurybench.store import connect
    from jurybench.store import migrate as apply

    con = connect(db)
    applied = apply(con)
    names = [r[0] for r in con.execute("SELECT name FROM migrations ORDER BY name").fetchall()]
    typer.echo(f"schema current: {', '.join(names)}" + (f" (applied {', '.join(applied)})" if applied else ""))


@items_app.command("import")
def items_import(
    file: Annotated[Path, typer.Argument(help="CSV, JSONL or Parquet with item_id and response.")],
    treatment: Annotated[str, typer.Option(help="Comma-separated columns holding treatment attributes.")] = "",
    dataset: Annotated[str | None, typer.Option(help="Dataset name stored with every item.")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="csv, jsonl or parquet (default: by suffix).")] = None,
    db: DbOption = None,
) -> None:
    """Import generations: item_id, response, and optionally prompt, reference, model, language.

    Other columns are kept as metadata. The import is all-or-nothing, and
    importing the same file again changes nothing.
    """
    from jurybench.store import import_items

    con = _connect(db)
    columns = [c.strip() for c in treatment.split(",") if c.strip()]
    result = import_items(con, file, fmt=fmt, treatment_columns=columns, dataset=dataset)
    typer.echo(f"items from {file}: {result}")


@pairs_app.command("import")
def pairs_import(
    file: Annotated[Path, typer.Argument(help="CSV, JSONL or Parquet with pair_id, item_a, item_b.")],
    dataset: Annotated[str | None, typer.Option(help="Dataset name stored with every pair.")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="csv, jsonl or parquet.")] = None,
    db: DbOption = None,
) -> None:
    """Import pairs of already imported items (A = item_a, B = item_b)."""
    from jurybench.store import import_pairs

    con = _connect(db)
    typer.echo(f"pairs from {file}: {import_pairs(con, file, fmt=fmt, dataset=dataset)}")


@rubrics_app.command("list")
def rubrics_list() -> None:
    """Rubrics found in ./rubrics and the shipped ones."""
    from jurybench.config import rubric_dirs
    from jurybench.rubric import load_rubric

    seen: set[str] = set()
    for folder in rubric_dirs():
        for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
            if path.stem in seen:
                continue
            seen.add(path.stem)
            rubric = load_rubric(path)
            typer.echo(
                f"{path.stem:20s} {rubric.kind:14s} {len(rubric.dimensions):3d} dims  "
                f"{rubric.content_hash[:12]}  {path}"
            )


@rubrics_app.command("show")
def rubrics_show(
    name: Annotated[str, typer.Argument(help="Rubric name or YAML path.")],
    language: Annotated[str | None, typer.Option(help="Show the template for this language.")] = None,
) -> None:
    """Validate a rubric and print its hash, dimensions and answer schema (or labels / structure)."""
    from jurybench.rubric import (
        ClassificationRubric,
        InventoryRubric,
        answer_format,
        load_rubric,
        presentation,
        render_classification,
        render_inventory,
        response_model,
    )

    rubric = load_rubric(name)
    typer.echo(f"{rubric.name} v{rubric.version} ({rubric.kind}) hash {rubric.content_hash}")
    typer.echo(f"dimensions: {', '.join(rubric.dimensions)}")
    typer.echo(f"languages: {', '.join(sorted(rubric.templates))}")
    if isinstance(rubric, ClassificationRubric | InventoryRubric):
        lang = language or rubric.default_language
        if isinstance(rubric, ClassificationRubric):
            typer.echo("labels: " + ", ".join(f"{lab.name} ({lab.shown(lang)})" for lab in rubric.labels))
            messages = render_classification(rubric, {"item_id": "example", "response": "<text>", "language": lang})
        else:
            for item_id, facet, factor, reverse in rubric.structure():
                typer.echo(
                    f"  {item_id}: facet {facet}, factor {factor or '(interstitial)'}{', reversed' if reverse else ''}"
                )
            arm = next(iter(rubric.placeholders.get(lang, {})), None)
            treatment = json.dumps({rubric.treatment_variable: arm}) if arm and rubric.treatment_variable else None
            item = {"item_id": "example", "response": "<target>", "language": lang, "treatment": treatment}
            messages = render_inventory(rubric, item, presentation(rubric, "example"))
        typer.echo(
            f"-- an example prompt ({lang}{f', {rubric.treatment_variable}={arm}' if isinstance(rubric, InventoryRubric) and arm else ''}):"
        )
        for message in messages:
            typer.echo(f"[{message['role']}] {message['content']}")
        return
    typer.echo(json.dumps(response_model(rubric).model_json_schema(), indent=2))
    if language:
        template = rubric.template_for(language)
        typer.echo(template.system)
        typer.echo(template.user)
    typer.echo(answer_format(rubric))


@rubrics_app.command("check")
def rubrics_check(paths: Annotated[list[Path], typer.Argument(help="Rubric YAML files.")]) -> None:
    """Validate rubric files; exit 2 at the first invalid one."""
    from jurybench.rubric import load_rubric

    for path in paths:
        rubric = load_rubric(path)
        typer.echo(f"ok {path}: {rubric.kind}, {len(rubric.dimensions)} dims, hash {rubric.content_hash[:12]}")


@app.command()
def score(
    rubric: Annotated[str, typer.Option("--rubric", "-r", help="Rubric name (rubrics/<name>.yaml) or path.")],
    juror: Annotated[
        list[str] | None,
        typer.Option(
            "--juror",
            "-j",
            help="MODEL[,key=value...]; repeat for a jury. e.g. openai/gpt-4o-mini,temperature=0,samples=3",
        ),
    ] = None,
    jury: Annotated[
        Path | None,
        typer.Option(
            help="YAML jury: 'jurors' (added to --juror) and optionally aggregation, quorum, tie, calibration."
        ),
    ] = None,
    aggregate: Annotated[
        str | None,
        typer.Option(
            "--aggregate",
            help="Jury rule: mean (of juror means), median, weighted, majority or calibrated "
            "(default: the jury file's, else majority for preference rubrics and mean otherwise).",
        ),
    ] = None,
    quorum: Annotated[
        int | None, typer.Option(help="Jurors with a valid score an item needs for a jury score (default 1).")
    ] = None,
    tie: Annotated[str | None, typer.Option(help="Majority with equal votes: tie (0) or abstain (no verdict).")] = None,
    calibration: Annotated[
        Path | None, typer.Option(help="Calibration file for --aggregate calibrated (applied when the run ends).")
    ] = None,
    where: Annotated[
        str | None,
        typer.Option(help="SQL predicate choosing items or pairs, e.g. \"dataset = 'x'\"."),
    ] = None,
    run: RunOption = None,
    concurrency: ConcurrencyOption = 16,
    retries: RetriesOption = 4,
    give_up_after: GiveUpOption = 3600.0,
    max_cost: MaxCostOption = None,
    plan: Annotated[
        bool, typer.Option("--plan", help="Count calls, tokens and cost per juror; call and change nothing.")
    ] = False,
    batch: BatchOption = False,
    poll_every: PollOption = 30.0,
    progress: ProgressOption = True,
    db: DbOption = None,
) -> None:
    """Judge items (pointwise) or pairs in both orders (pairwise) with a jury.

    Judgments already stored for the same rubric, juror, subject, order and
    sample are reused, so re-running a finished or interrupted run makes no
    call for them.
    """
    from dataclasses import replace

    from jurybench.jury import Jury, load_jury_file, parse_juror
    from jurybench.jury import score as run_score
    from jurybench.rubric import load_rubric

    spec_rubric = load_rubric(rubric)
    panel = load_jury_file(jury) if jury else Jury(())
    panel = replace(panel, jurors=(*[parse_juror(text) for text in juror or []], *panel.jurors))
    panel = replace(
        panel,
        aggregation=aggregate or panel.aggregation,
        quorum=quorum if quorum is not None else panel.quorum,
        tie=tie or panel.tie,
        calibration=str(calibration) if calibration else panel.calibration,
    )
    from jurybench.config import db_path

    options = _engine_options(concurrency, retries, give_up_after, max_cost, plan, batch, poll_every, progress)
    # By path: the engine releases the file between flushes so other processes can read it.
    result = run_score(db_path(db), spec_rubric, panel, where=where, run_id=run, options=options)
    if plan:
        _print_plan(result)
        return
    typer.echo(result.summary())
    _exit_on_call_errors(result)


def _echo_plain(rows: list[list[str]], left: int) -> None:
    """A plain text table, whole values and no wrapping (the first ``left`` columns left-aligned)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo(
            "  ".join(
                cell.ljust(w) if i < left else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )


def _engine_options(concurrency: int, retries: int, give_up_after: float, max_cost: float | None, plan: bool,
                    batch: bool, poll_every: float, progress: bool) -> Any:  # fmt: skip
    """The engine's options from the flags score and generate share (the bar only in a terminal)."""
    from jurybench.jury import EngineOptions

    return EngineOptions(concurrency=concurrency, retries=retries, progress=progress and sys.stderr.isatty(),
                         give_up_after_s=give_up_after, plan_only=plan, max_cost=max_cost, batch=batch,
                         batch_poll_s=poll_every)  # fmt: skip


def _print_plan(result: Any) -> None:
    """The cost plan as a plain table: per juror and in total; an unknown price says so."""

    def money(value: float | None) -> str:
        return "unknown" if value is None else f"${value:.4f}"

    rows = [["juror", "model", "calls", "cached", "input tokens", "output tokens (expected)", "cost", "batch cost"]]
    for p in result.plan:
        rows.append([p.juror, p.model, str(p.calls), str(p.cached), f"{p.input_tokens:,}",
                     f"{p.output_tokens:,.0f} ({p.output_basis})", money(p.cost_usd), money(p.cost_batch_usd)])  # fmt: skip

    def total(values: list[float | None]) -> float | None:
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    plans = result.plan
    rows.append(["total", "", str(sum(p.calls for p in plans)), str(sum(p.cached for p in plans)),
                 f"{sum(p.input_tokens for p in plans):,}", f"{sum(p.output_tokens for p in plans):,.0f}",
                 money(total([p.cost_usd for p in plans])), money(total([p.cost_batch_usd for p in plans]))])  # fmt: skip
    _echo_plain(rows, left=2)
    unknown = [p.juror for p in plans if p.cost_usd is None]
    if unknown:
        typer.echo(f"price unknown for {', '.join(unknown)}: litellm's price map does not list the model "
                   "(the total is unknown, not 0).")  # fmt: skip
    typer.echo("plan only: nothing was called and no run was written.")


def _exit_on_call_errors(result: Any) -> None:
    """A run whose calls ended in error: the reasons on stderr, exit 3 (re-running retries them).
    A run stopped by its budget: one line, exit 4 (a higher --max-cost resumes it)."""
    if result.status == "stopped_budget":
        from jurybench.jury import EXIT_BUDGET

        left = result.n_tasks - result.n_cached - result.n_called
        typer.echo(
            f"budget reached: the run has spent ${result.budget.spent:.4f} of ${result.budget.max_cost:.4f}; "
            f"{left} calls were not made. Run the same command with a higher --max-cost to go on.",
            err=True,
        )
        raise typer.Exit(EXIT_BUDGET)
    report = result.error_report()
    if report:
        from jurybench.jury import EXIT_CALL_ERRORS

        for line in report:
            typer.echo(line, err=True)
        raise typer.Exit(EXIT_CALL_ERRORS)


@app.command()
def generate(
    spec: Annotated[Path, typer.Argument(help="Generation spec YAML (or a study file with a 'generation' section).")],
    prompts: Annotated[
        Path | None, typer.Option(help="Prompt set (CSV/JSONL: prompt_id, prompt[, language]); overrides the spec's.")
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", "-m", help="MODEL[,key=value...]; repeatable; replaces the spec's models."),
    ] = None,
    samples: Annotated[int | None, typer.Option(help="Responses per prompt, arm and model.")] = None,
    exclusion: Annotated[
        str | None,
        typer.Option(help="response: drop refused responses; prompt: drop a prompt for every model if any refused."),
    ] = None,
    run: RunOption = None,
    concurrency: ConcurrencyOption = 16,
    retries: RetriesOption = 4,
    give_up_after: GiveUpOption = 3600.0,
    max_cost: MaxCostOption = None,
    plan: Annotated[
        bool, typer.Option("--plan", help="Count calls, tokens and cost per model; call and change nothing.")
    ] = False,
    batch: BatchOption = False,
    poll_every: PollOption = 30.0,
    progress: ProgressOption = True,
    db: DbOption = None,
) -> None:
    """Generate responses: prompts x treatment arms x models x samples, stored as items with their
    treatment, linked as pairs across arms; refusals detected and reported per model and arm.

    Uses the judge engine (cache, resume, retries, rate limits, cost); re-running makes no call
    for responses already stored.
    """
    from jurybench.config import db_path
    from jurybench.generate import generate as run_generate
    from jurybench.generate import generators_of, load_prompts, load_spec_file, refusal_table

    gen_spec, _ = load_spec_file(spec)
    changes: dict[str, Any] = {}
    if samples is not None:
        changes["samples"] = samples
    if exclusion is not None:
        if exclusion not in ("response", "prompt"):
            raise JurybenchError(f"--exclusion {exclusion!r} is not valid.", hint="Valid: response, prompt.")
        changes["refusal"] = gen_spec.refusal.model_copy(update={"exclusion": exclusion})
    if changes:
        gen_spec = gen_spec.model_validate({**gen_spec.model_dump(), **changes})
    prompt_file = prompts or (spec.parent / gen_spec.prompts if gen_spec.prompts else None)
    if prompt_file is None:
        raise JurybenchError(f"{spec}: no prompt set.", hint="Add prompts: FILE to the spec, or pass --prompts FILE.")
    generators = generators_of(gen_spec, model)
    options = _engine_options(concurrency, retries, give_up_after, max_cost, plan, batch, poll_every, progress)
    report = run_generate(
        db_path(db), gen_spec, generators, load_prompts(prompt_file), run_id=run, options=options, source=str(spec)
    )
    if plan:
        _print_plan(report.run)
        return
    for line in report.lines():
        typer.echo(line)
    con = _connect(db, read_only=True)
    try:
        rows = refusal_table(con, gen_spec.name)
    finally:
        con.close()
    from jurybench.store._query import rich_table

    shown = [(g, v, a, n, r, None if rate is None else round(rate, 3)) for g, v, a, n, r, rate in rows]
    _console().print(rich_table(["model", "variable", "arm", "answered", "refused", "refusal_rate"], shown,
                                title=f"refusals ({gen_spec.name})"))  # fmt: skip
    _exit_on_call_errors(report.run)


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="A SQL query over the store's tables and views.")],
    fmt: FormatOption = "table",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (required for parquet)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Query the store (read-only). JSON output is an array of row objects."""
    from jurybench.store._query import rich_table, run_query, to_csv, to_json, to_parquet

    _check_format(fmt, ("table", "csv", "json", "parquet"))
    con = _connect(db, read_only=True)
    if fmt == "parquet":
        if output is None:
            raise JurybenchError("--format parquet needs --output FILE.parquet.")
        n = to_parquet(con, query, output)
        typer.echo(f"{n} rows written to {output}")
        return
    names, rows = run_query(con, query)
    if fmt == "table":
        if output:
            raise JurybenchError("--output is for csv, json and parquet.")
        _console().print(rich_table(names, rows))
        return
    text = to_json(names, rows) if fmt == "json" else to_csv(names, rows)
    if output:
        output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        typer.echo(f"{len(rows)} rows written to {output}")
    else:
        typer.echo(text, nl=not text.endswith("\n"))


@app.command()
def schema(fmt: FormatOption = "markdown") -> None:
    """Print the store's tables and views (markdown or json), from a freshly migrated database."""
    from jurybench.store._schema_doc import schema_json, schema_markdown

    _check_format(fmt, ("markdown", "json"))
    typer.echo(schema_markdown() if fmt == "markdown" else schema_json())


@datasets_app.command("import")
def datasets_import(
    name: Annotated[str, typer.Argument(help="Dataset: llmbar or hanna.")],
    data: Annotated[
        Path | None,
        typer.Option(help="Folder holding llmbar/ (default: $JURYBENCH_DATA or ../shared/datasets)."),
    ] = None,
    subset: Annotated[list[str] | None, typer.Option(help="Subsets to import (default: all).")] = None,
    db: DbOption = None,
) -> None:
    """Import a reference dataset's pairs, gold labels and recorded judge completions."""
    from jurybench.config import data_path
    from jurybench.datasets import LLMBAR_SUBSETS, import_llmbar

    if name == "hanna":
        from jurybench.datasets import import_hanna

        typer.echo(f"hanna: {import_hanna(_connect(db), data_path(data))}")
        return
    if name != "llmbar":
        raise JurybenchError(f"unknown dataset '{name}'.", hint="Available: llmbar, hanna.")
    subsets = tuple(subset or LLMBAR_SUBSETS)
    for s in subsets:
        if s not in LLMBAR_SUBSETS:
            raise JurybenchError(f"unknown LLMBar subset '{s}'.", hint=f"Valid: {', '.join(LLMBAR_SUBSETS)}.")
    con = _connect(db)
    typer.echo(f"llmbar: {import_llmbar(con, data_path(data), subsets)}")


@datasets_app.command("example")
def datasets_example(
    out: Annotated[Path, typer.Option(help="Folder to write items.csv and pairs.csv into.")] = Path("example-data"),
) -> None:
    """Write the small offline example set (our own texts) used when no real data is present."""
    from jurybench.datasets.example import write_example

    for path in write_example(out):
        typer.echo(f"wrote {path}")


@datasets_app.command("llmbar-check")
def datasets_llmbar_check(
    run: Annotated[str, typer.Option("--run", help="A run of an LLMBar replay jury.")],
    subset: Annotated[str, typer.Option(help="Natural or MT-Bench.")],
    strategy: Annotated[str, typer.Option(help="Vanilla, Vanilla_NoRules or CoT.")],
    data: Annotated[Path | None, typer.Option(help="Folder holding llmbar/.")] = None,
    db: DbOption = None,
) -> None:
    """Compare a replay run's per-juror figures with LLMBar's statistics.json; exit 1 on a mismatch."""
    from jurybench.config import data_path
    from jurybench.datasets.llmbar import compare_with_upstream

    con = _connect(db, read_only=True)
    lines, ok = compare_with_upstream(con, run, data_path(data), subset, strategy)
    for line in lines:
        typer.echo(line)
    if not ok:
        raise typer.Exit(1)


def preference_rows(report: Any) -> tuple[list[str], list[list[str]]]:
    """The preference report's table: one header per value, in the same order."""
    columns = ["juror", "correct AB", "correct BA", "both", "consistent", "consistent (valid)", "kappa AB/BA",
               "no verdict AB/BA", "jury ties AB/BA"]  # fmt: skip

    def cell(counts: dict[str, int], key: str) -> str:
        n = report.n_pairs or 1
        return f"{counts.get(key, 0)} ({100 * counts.get(key, 0) / n:.1f}%)"

    rows = []
    for row in [*report.jurors, report.jury]:
        c = row.counts
        rows.append([
            row.juror, cell(c, "correct_ab"), cell(c, "correct_ba"), cell(c, "both_correct"), cell(c, "consistent"),
            cell(c, "consistent_valid"),
            f"{row.kappa.get('kappa_ab', float('nan')):.3f}/{row.kappa.get('kappa_ba', float('nan')):.3f}",
            f"{c.get('invalid_ab', 0)}/{c.get('invalid_ba', 0)}",
            f"{c.get('tie_ab', 0)}/{c.get('tie_ba', 0)}" if row is report.jury else "",
        ])  # fmt: skip
    return columns, rows


@report_app.command("preference")
def report_preference(
    run: Annotated[str, typer.Option("--run", help="Run id of a preference (A/B) run.")],
    annotator: Annotated[
        str | None, typer.Option(help="Compare with this annotator only (default: human majority).")
    ] = None,
    fmt: FormatOption = "table",
    db: DbOption = None,
) -> None:
    """Per-juror and jury accuracy against human labels in both orders, and order consistency."""
    from jurybench.annotations import preference_accuracy

    _check_format(fmt, ("table", "json"))
    con = _connect(db, read_only=True)
    report = preference_accuracy(con, run, annotator=annotator)
    if fmt == "json":
        typer.echo(json.dumps(report.as_dict(), indent=2))
        return
    from rich.table import Table

    table = Table(title=f"{run}: verdicts vs {report.reference} ({report.n_pairs} pairs)")
    columns, rows = preference_rows(report)
    for col in columns:
        table.add_column(col, justify="left" if col == "juror" else "right")
    for values in rows:
        table.add_row(*values)
    _console().print(table)
    rule = report.jury_rule
    typer.echo(
        f"jury rule {rule['aggregation']} (tie: {rule['tie']}), quorum {rule['quorum']}, "
        f"{rule['n_jurors_expected']} jurors expected; {rule['pair_orders_below_quorum']} pair-orders below quorum"
    )
    if report.n_without_reference or report.n_reference_ties:
        typer.echo(
            f"left out: {report.n_without_reference} pairs without a human label, "
            f"{report.n_reference_ties} where humans tie"
        )


@recordings_app.command("from-run")
def recordings_from_run(
    run: Annotated[str, typer.Option("--run", help="The run whose raw answers to record.")],
    juror: Annotated[str, typer.Option(help="Juror name in that run.")],
    source: Annotated[str, typer.Option(help="Name for the recording set (serve it as replay/<source>).")],
    db: DbOption = None,
) -> None:
    """Save a juror's raw answers from a run so the run can be re-executed offline."""
    from jurybench.jury._store_io import record_run

    con = _connect(db)
    typer.echo(f"{record_run(con, run, juror, source)} completions recorded as replay/{source}")


@recordings_app.command("list")
def recordings_list(db: DbOption = None) -> None:
    """Recording sources and how many completions each holds."""
    con = _connect(db, read_only=True)
    for source, n in con.execute("SELECT source, count(*) FROM recordings GROUP BY 1 ORDER BY 1").fetchall():
        typer.echo(f"replay/{source}\t{n}")


batches_app = typer.Typer(help="Provider batches sent by score/generate --batch.", no_args_is_help=True)
app.add_typer(batches_app, name="batches")
KeyEnvOption = Annotated[
    str | None, typer.Option("--api-key-env", help="Variable holding the provider's key (default PROVIDER_API_KEY).")
]


@batches_app.command("list")
def batches_list(
    run: Annotated[str | None, typer.Option("--run", help="Only this run's batches.")] = None,
    open_only: Annotated[bool, typer.Option("--open", help="Only batches whose results are not stored yet.")] = False,
    fmt: FormatOption = "table",
    db: DbOption = None,
) -> None:
    """Every batch in the store: provider id, juror, run, status, counts, times."""
    from jurybench.jury._batches import list_batches
    from jurybench.store._query import to_csv, to_json

    _check_format(fmt, ("table", "csv", "json"))
    names, rows = list_batches(_connect(db, read_only=True), run, open_only)
    if fmt == "table":
        shown = ["batch_id", "provider_batch_id", "juror", "run_id", "round", "status", "n_requests", "n_completed",
                 "n_failed", "submitted_at", "collected_at"]  # fmt: skip
        at = [names.index(n) for n in shown]

        def cell(value: Any) -> str:
            if value is None:
                return "-"
            return value.strftime("%Y-%m-%d %H:%M:%S") if hasattr(value, "strftime") else str(value)

        _echo_plain([shown, *[[cell(row[i]) for i in at] for row in rows]], left=6)
        if not rows:
            typer.echo("no batches.")
    else:
        typer.echo(to_json(names, rows) if fmt == "json" else to_csv(names, rows), nl=False)


@batches_app.command("status")
def batches_status(
    batch_id: Annotated[str, typer.Argument(help="jurybench's batch id or the provider's.")],
    api_key_env: KeyEnvOption = None,
    db: DbOption = None,
) -> None:
    """Ask the provider where a batch stands (the store's row is updated)."""
    from jurybench.jury._batches import refresh_batch

    info = refresh_batch(_connect(db), batch_id, api_key_env)
    typer.echo("  ".join(f"{k}={v}" for k, v in info.items() if v is not None))


@batches_app.command("cancel")
def batches_cancel(
    batch_id: Annotated[str, typer.Argument(help="jurybench's batch id or the provider's.")],
    api_key_env: KeyEnvOption = None,
    db: DbOption = None,
) -> None:
    """Cancel a batch at its provider; its unanswered calls are left for the next run.

    The run that sent it ends interrupted; running it again sends those calls in a new batch."""
    from jurybench.jury._batches import cancel_batch

    info = cancel_batch(_connect(db), batch_id, api_key_env)
    typer.echo("  ".join(f"{k}={v}" for k, v in info.items() if v is not None))


def _pairs(text: str, option: str) -> dict[str, str]:
    out = {}
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        if "=" not in part:
            raise JurybenchError(
                f"{option} '{part}' is not target=column.", hint=f"e.g. {option} item_id=story,value=score"
            )
        target, source = part.split("=", 1)
        out[target.strip()] = source.strip()
    return out


@annotations_app.command("import")
def annotations_import(
    file: Annotated[Path, typer.Argument(help="CSV, JSONL or Parquet with human labels.")],
    rubric: Annotated[
        str, typer.Option("--rubric", "-r", help="The rubric the annotators used (checks criteria and scales).")
    ],
    layout: Annotated[str, typer.Option(help="auto, long, wide-criterion or wide-annotator.")] = "auto",
    map_: Annotated[str, typer.Option("--map", help="Rename columns: item_id=story,annotator=rater,value=score.")] = "",
    annotator_columns: Annotated[
        str, typer.Option(help="Wide-annotator files: comma-separated annotator columns.")
    ] = "",
    criterion: Annotated[str | None, typer.Option(help="Wide-annotator files: the criterion they rate.")] = None,
    replace: Annotated[bool, typer.Option(help="Overwrite stored labels that differ.")] = False,
    fmt: Annotated[str | None, typer.Option("--format", help="csv, jsonl or parquet.")] = None,
    db: DbOption = None,
) -> None:
    """Import human labels: pointwise scores, A/B/tie preferences or pairwise category scores.

    Validated against the rubric's criteria and scales, all or nothing; importing the
    same file again changes nothing.
    """
    from jurybench.annotations import import_annotations
    from jurybench.rubric import load_rubric

    spec = load_rubric(rubric)
    columns = [c.strip() for c in annotator_columns.split(",") if c.strip()]
    result = import_annotations(
        _connect(db), file, spec, fmt=fmt, layout=layout, mapping=_pairs(map_, "--map"),
        annotator_columns=columns, criterion=criterion, replace=replace,
    )  # fmt: skip
    typer.echo(f"annotations from {file}: {result}")


@annotations_app.command("simulate")
def annotations_simulate(
    rubric: Annotated[str, typer.Option("--rubric", "-r", help="Pointwise rubric whose criteria are labelled.")],
    where: Annotated[str | None, typer.Option(help="SQL predicate choosing the items.")] = None,
    fraction: Annotated[float, typer.Option(help="Share of the items that get labels (a seeded subset).")] = 1.0,
    annotators: Annotated[int, typer.Option(help="Simulated annotators per item.")] = 3,
    noise: Annotated[float, typer.Option(help="SD of each annotator's noise, in scale points.")] = 0.5,
    seed: Annotated[int, typer.Option(help="Seed for the subset and the noise.")] = 0,
    truth_seed: Annotated[int, typer.Option(help="The simulated jurors' truth_seed (the same known truth).")] = 0,
    db: DbOption = None,
) -> None:
    """Offline studies: human labels drawn from the simulated jurors' known truth (annotators sim-human-N)."""
    from jurybench.jury._sim import simulate_human_labels
    from jurybench.rubric import load_rubric

    n = simulate_human_labels(
        _connect(db), load_rubric(rubric), where=where, fraction=fraction, annotators=annotators, noise=noise,
        seed=seed, truth_seed=truth_seed,
    )  # fmt: skip
    typer.echo(f"{n} simulated human labels written (annotators sim-human-1..{annotators})")


baselines_app = typer.Typer(
    help="Human reference values (effect sizes, means) used by the statistics.", no_args_is_help=True
)
app.add_typer(baselines_app, name="baselines")


@baselines_app.command("import")
def baselines_import(
    file: Annotated[Path, typer.Argument(help="CSV/JSONL: target, value[, cell][, statistic].")],
    name: Annotated[str, typer.Option(help="The name statistics refer to (--baselines NAME).")],
    statistic: Annotated[str | None, typer.Option(help="d or mean, for rows without a statistic column.")] = None,
    db: DbOption = None,
) -> None:
    """Import human baselines under a name (replacing an earlier import of that name), all or nothing."""
    from jurybench.store._imports import import_baselines

    result = import_baselines(_connect(db), file, name=name, statistic=statistic)
    typer.echo(
        f"baselines '{name}' from {file}: {result.inserted} values"
        + (f" (replacing {result.updated})" if result.updated else "")
    )


study_app = typer.Typer(help="Run study files (generate, judge, analyse in one YAML).", no_args_is_help=True)
app.add_typer(study_app, name="study")


@study_app.command("run")
def study_run(
    file: Annotated[Path, typer.Argument(help="A study YAML file.")],
    out: Annotated[
        Path | None, typer.Option(help="Output folder for plots and calibrations (default: beside the store).")
    ] = None,
    db: DbOption = None,
) -> None:
    """Run a study's steps in order against one store, printing each as the command it is."""
    from jurybench.config import db_path
    from jurybench.studies import run_study

    store = db_path(db)
    code = run_study(file, out or store.parent / f"{file.stem}-out", store, echo=typer.echo)
    if code:
        raise typer.Exit(code)


@app.command()
def serve(
    db: DbOption = None,
    host: Annotated[str, typer.Option(help="Address to listen on (non-loopback needs a token).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    workers: Annotated[int, typer.Option(help="Jobs run at the same time.")] = 2,
    token_file: Annotated[
        Path | None, typer.Option(help="File holding the bearer token (else $JURYBENCH_TOKEN; else no token).")
    ] = None,
    max_body_mb: Annotated[float, typer.Option(help="Largest request body accepted, in MB.")] = 10.0,
    sql_timeout: Annotated[float, typer.Option(help="Seconds a /v1/sql query may run.")] = 10.0,
    sql_rows: Annotated[int, typer.Option(help="Most rows a /v1/sql query returns.")] = 10_000,
    sql_memory_mb: Annotated[
        int, typer.Option(min=64, help="Memory DuckDB may use for queries in the server, in MB (413 beyond).")
    ] = 512,
    demo_mode: Annotated[
        bool, typer.Option("--demo", help="A fresh store with the example items and a simulated default jury.")
    ] = False,
) -> None:
    """Serve the store over HTTP (/v1: jobs, items, annotations, calibration, statistics, read-only SQL).

    The server owns the store while it runs; CLI commands on the same file say so. Without a
    token it listens on loopback only. OpenAPI: /openapi.json.
    """
    import ipaddress
    import os

    from jurybench.config import db_path
    from jurybench.redact import register_secret

    token = None
    if token_file is not None:
        if not token_file.is_file():
            raise JurybenchError(f"--token-file {token_file}: no such file.")
        token = token_file.read_text(encoding="utf-8").strip()
        if not token:
            raise JurybenchError(f"--token-file {token_file} is empty.")
    elif os.environ.get("JURYBENCH_TOKEN", "").strip():
        token = os.environ["JURYBENCH_TOKEN"].strip()
    register_secret(token)
    loopback = host in ("localhost",) or _is_loopback(host, ipaddress)
    if token is None and not loopback:
        raise JurybenchError(
            f"--host {host}: without a token the server listens on loopback only.",
            hint="Set JURYBENCH_TOKEN or --token-file to serve on another address.",
        )
    store = db_path(db)
    default_jury = None
    if demo_mode:
        store = db or Path("demo-out") / "serve-demo.duckdb"
        _prepare_serve_demo(store)
        default_jury = {"jurors": ["sim/steady,noise=0.4,seed=1", "sim/lenient,leniency=0.5,noise=0.6,seed=2"]}
    from jurybench.service._app import ServiceConfig, create_app

    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    config = ServiceConfig(
        db=store, token=token, workers=workers, max_body_bytes=int(max_body_mb * 1024 * 1024),
        sql_timeout_s=sql_timeout, sql_max_rows=sql_rows, sql_memory_mb=sql_memory_mb, default_jury=default_jury,
        url=url,
    )  # fmt: skip
    from jurybench.service import Store

    # Opened before uvicorn starts: a store another process holds is one line and exit 2.
    opened = Store(store, url, sql_memory_mb=sql_memory_mb, sql_timeout_s=sql_timeout)
    typer.echo(f"jurybench serving {store} at {url} (OpenAPI: {url}/openapi.json)")
    typer.echo("bearer token required" if token else "no token configured: listening on loopback only")
    if demo_mode:
        _print_demo_calls(url)
    import uvicorn

    try:
        # Idle keep-alive connections are kept 75 s (uvicorn's default is 5): a client reusing a
        # connection the server is closing at that moment sees a reset.
        uvicorn.run(create_app(config, store=opened, close_store=True), host=host, port=port, log_level="warning",
                    timeout_keep_alive=75)  # fmt: skip
    finally:
        opened.close()


def _is_loopback(host: str, ipaddress: Any) -> bool:
    try:
        return bool(ipaddress.ip_address(host).is_loopback)
    except ValueError:
        return False


def _prepare_serve_demo(store: Path) -> None:
    from jurybench.datasets.example import write_example
    from jurybench.store import connect, import_items, import_pairs

    store.parent.mkdir(parents=True, exist_ok=True)
    for stale in (store, Path(f"{store}.wal")):
        stale.unlink(missing_ok=True)
    folder = store.parent / "serve-demo-example"
    write_example(folder)
    con = connect(store)
    try:
        import_items(con, folder / "items.csv", dataset="example")
        import_pairs(con, folder / "pairs.csv", dataset="example")
    finally:
        con.close()


def _print_demo_calls(url: str) -> None:
    typer.echo(f"""Try it (the default jury is simulated, so no key is needed):
  curl -s {url}/v1/health
  curl -s -X POST {url}/v1/jobs -H 'content-type: application/json' \\
       -d '{{"rubric": "story-quality", "where": "dataset = \\u0027example\\u0027"}}'
  curl -s {url}/v1/jobs/<job_id>
  curl -s -X POST {url}/v1/sql -H 'content-type: application/json' \\
       -d '{{"query": "SELECT criterion, round(avg(jury_score), 2) AS mean FROM jury_pointwise GROUP BY 1"}}'
  curl -s -X POST {url}/v1/stats/ttest -H 'content-type: application/json' \\
       -d '{{"run": "job-<job_id>", "by": "model", "baseline": 3}}'""")


@app.command()
def demo(
    name: Annotated[str, typer.Argument(help="persuasion, inventory, culture or emotion.")],
    out: Annotated[Path, typer.Option(help="Output folder: the store <name>.duckdb, plots, calibrations.")] = Path(
        "demo-out"
    ),
    copy: Annotated[
        Path | None, typer.Option(help="Copy the study file and its data to this folder instead of running it.")
    ] = None,
) -> None:
    """Run a shipped study end to end offline on simulated models (a fresh store each time), or copy it."""
    import shutil

    from jurybench.studies import run_study, shipped_study

    path = shipped_study(name)
    if copy is not None:
        if copy.exists() and any(copy.iterdir()):
            raise JurybenchError(f"{copy} exists and is not empty.", hint="Choose a new folder for the copy.")
        shutil.copytree(path.parent, copy, dirs_exist_ok=True)
        typer.echo(
            f"copied study '{name}' to {copy}; edit its models and jurors, then: jurybench study run {copy / 'study.yaml'}"
        )
        return
    out.mkdir(parents=True, exist_ok=True)
    store = out / f"{name}.duckdb"
    for stale in (store, Path(f"{store}.wal")):
        stale.unlink(missing_ok=True)
    code = run_study(path, out / name, store, echo=typer.echo)
    if code:
        raise typer.Exit(code)


@app.command()
def agreement(
    run: Annotated[str, typer.Option("--run", help="A pointwise run whose items have human labels.")],
    criterion: Annotated[list[str] | None, typer.Option(help="Only these criteria (repeatable).")] = None,
    boot: Annotated[int, typer.Option(help="Bootstrap resamples for the CIs.")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    fmt: FormatOption = "table",
    db: DbOption = None,
) -> None:
    """Human agreement (alpha, Fleiss' kappa, Spearman), the human ceiling, and each juror and the jury vs humans."""
    from jurybench.annotations import agreement_report, to_jsonable

    _check_format(fmt, ("table", "json"))
    report = agreement_report(_connect(db, read_only=True), run, criteria=criterion, n_boot=boot, seed=seed)
    if fmt == "json":
        typer.echo(json.dumps(to_jsonable(report), indent=2))
        return
    from rich.table import Table

    console = _console()
    for block in report:
        h = block["humans"]
        console.print(
            f"[bold]{block['criterion']}[/bold]: {block['n_items']} items, {block['n_annotators']} annotators; "
            f"alpha interval {h['alpha_interval']}, ordinal {h['alpha_ordinal']}, Fleiss kappa {h['fleiss_kappa']}, "
            f"mean pairwise Spearman {h['mean_pairwise_spearman']}"
        )
        table = Table(show_lines=False)
        for col in ("vs human mean", "pearson [95% CI]", "spearman", "kendall", "MAE", "exact", "within 1",
                    "jury - juror pearson [95% CI]"):  # fmt: skip
            table.add_column(col)
        for row in [*block["jurors"], block["jury"]]:
            diff = row.get("jury_minus_juror_pearson")
            table.add_row(
                row["juror"], str(row["pearson_ci"]), f"{row['spearman']:.3f}", f"{row['kendall']:.3f}",
                f"{row['mae']:.3f}", f"{row['exact']:.3f}", f"{row['within_one']:.3f}", str(diff) if diff else "",
            )  # fmt: skip
        ceiling = block["human_ceiling"]["mean"]
        table.add_row(
            "human ceiling (one vs rest)", f"{ceiling['pearson']:.3f}", f"{ceiling['spearman']:.3f}",
            f"{ceiling['kendall']:.3f}", f"{ceiling['mae']:.3f}", f"{ceiling['exact']:.3f}", f"{ceiling['within_one']:.3f}", "",
        )  # fmt: skip
        console.print(table)
        rule = block["jury_rule"]
        console.print(
            f"jury: {rule['aggregation']}, quorum {rule['quorum']}; jurors expected {rule['n_jurors_expected']}, "
            f"present {rule['mean_jurors_present']:.2f} per item on average; {rule['items_below_quorum']} items below quorum"
        )
        verdict = "yes" if block["jury_beats_best_juror"] else "not significantly"
        console.print(f"does the jury beat its best juror ({block['best_juror']}) on Pearson? {verdict}\n")


@calibrate_app.callback()
def calibrate(
    ctx: typer.Context,
    run: Annotated[str | None, typer.Option("--run", help="Run with human labels to fit on.")] = None,
    name: Annotated[str | None, typer.Option(help="Calibration name (file calibration/<name>.json).")] = None,
    criterion: Annotated[list[str] | None, typer.Option(help="Only these criteria (repeatable).")] = None,
    covariate: Annotated[list[str] | None, typer.Option(help="language, length or meta.<field> (repeatable).")] = None,
    method: Annotated[
        list[str] | None, typer.Option(help="Variants to compare: ols, ridge, nnls, cross (default all).")
    ] = None,
    group_by: Annotated[str, typer.Option(help="Split groups: prompt, item or meta.<field>.")] = "prompt",
    test_size: Annotated[float, typer.Option(help="Share of groups held out for testing.")] = 0.2,
    folds: Annotated[int, typer.Option(help="Grouped k-fold cross-validation inside the training split.")] = 10,
    seed: Annotated[int, typer.Option(help="Split and bootstrap seed.")] = 0,
    boot: Annotated[int, typer.Option(help="Bootstrap resamples for weight CIs.")] = 200,
    out: Annotated[Path | None, typer.Option(help="Folder for the calibration file (default ./calibration).")] = None,
    fmt: FormatOption = "table",
    db: DbOption = None,
) -> None:
    """Fit per-criterion juror weights by least squares against the human mean, validated on held-out prompts."""
    if ctx.invoked_subcommand is not None:
        return
    if run is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    from jurybench.calibration import fit_calibration

    _check_format(fmt, ("table", "json"))
    artifact, path = fit_calibration(
        _connect(db), run, name=name, criteria=criterion, covariates=covariate, methods=method, group_by=group_by,
        test_size=test_size, folds=folds, seed=seed, n_boot=boot, out_dir=out,
    )  # fmt: skip
    if fmt == "json":
        typer.echo(json.dumps(artifact, indent=2, default=str))
        return
    _print_calibration(artifact)
    typer.echo(f"calibration written to {path}")


def _print_calibration(artifact: dict[str, Any]) -> None:
    from rich.table import Table

    console = _console()
    labels = {j["key"]: j.get("label", j["name"]) for j in artifact["jurors"]}

    def feature_label(feature: str) -> str:
        crit, _, key = feature.rpartition(":")
        return f"{crit}:{labels.get(key, key)}" if crit else labels.get(feature, feature)

    for criterion, spec in artifact["criteria"].items():
        report = spec["report"]
        if artifact["kind"] == "preference":
            console.print(f"[bold]preference[/bold]: held-out accuracy over {report['n_test']} pairs")
            for who, acc in report["held_out_accuracy"].items():
                console.print(f"  {who}: {acc:.3f}")
            console.print(f"  weights: {', '.join(f'{feature_label(k)} {v:.3f}' for k, v in spec['weights'].items())}")
            continue
        table = Table(title=f"{criterion}: {report['n_train']} train / {report['n_test']} test items, "
                      f"{report['n_groups']} groups; winner {report['winner']} (lowest CV RMSE)")  # fmt: skip
        for col in ("model", "test RMSE", "MAE", "R²", "pearson", "spearman", "kendall", "CV RMSE (train)"):
            table.add_column(col)
        for label, entry in [*(("calibrated " + m, v) for m, v in report["variants"].items()),
                             *(("rescaled " + b, v) for b, v in report["baselines"].items())]:  # fmt: skip
            t = entry["test"]
            table.add_row(label, f"{t['rmse']:.4f}", f"{t['mae']:.4f}", f"{t['r2']:.3f}", f"{t['pearson']:.3f}",
                          f"{t['spearman']:.3f}", f"{t['kendall']:.3f}", f"{entry['cv_rmse_mean']:.4f}")  # fmt: skip
        console.print(table)
        ci = spec.get("coefficient_ci", {})
        weights = ", ".join(
            f"{feature_label(k)} {v:+.3f}" + (f" [{ci[k]['low']:+.3f}, {ci[k]['high']:+.3f}]" if k in ci else "")
            for k, v in spec["weights"].items()
        )
        console.print(f"  weights ({spec['method']}): {weights}; intercept {spec['intercept']:+.3f}\n")


@calibrate_app.command("apply")
def calibrate_apply(
    calibration: Annotated[Path, typer.Argument(help="A calibration JSON (or its name under calibration/).")],
    run: Annotated[str, typer.Option("--run", help="The run to score with it.")],
    db: DbOption = None,
) -> None:
    """Write calibrated scores for a run (table calibrated_scores, view calibrated_items)."""
    from jurybench.calibration import apply_calibration

    result = apply_calibration(_connect(db), calibration, run)
    typer.echo(
        f"{result['rows']} calibrated scores written for run {result['run_id']} with {result['calibration']} "
        f"({result['imputed']} juror votes imputed)"
    )


def _click_exceptions() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(usage errors, other click errors) from every click typer may use: the installed
    ``click`` and the copy newer typer releases vendor as ``typer._click``."""
    import importlib

    usage: list[type[BaseException]] = []
    other: list[type[BaseException]] = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        usage.append(module.UsageError)
        other.append(module.ClickException)
    return tuple(usage), tuple(other)


def usage_text(exc: BaseException) -> str:
    format_message = getattr(exc, "format_message", None)
    return str(format_message()) if callable(format_message) else str(exc)


def usage_line(exc: BaseException) -> str:
    """A click usage error as one line: what is wrong (with click's own 'did you mean')
    and where to read more."""
    message = " ".join(usage_text(exc).split())
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or "jurybench"
    if message and not message.endswith((".", "?", "!")):
        message += "."
    return f"{message} See '{command} --help'."


def _sigterm_as_interrupt() -> Any:
    """SIGTERM ends a command like Ctrl-C from the start (the engine keeps its own handler while
    it runs): stored work is kept and the exit is 130, whenever the signal comes. Returns the
    handler it replaced (None off the main thread, where signals are the host's)."""
    import signal

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:
        return None


def main() -> None:
    """Entry point: one line and exit 2 for user errors and usage mistakes, 130 on Ctrl-C."""
    from jurybench.redact import install_log_redaction, redact

    install_log_redaction()
    previous = _sigterm_as_interrupt()
    try:
        # Without standalone mode typer returns exit codes instead of exiting; it turns
        # Ctrl-C (and SIGTERM, which the engine maps to it) into 130.
        code = app(standalone_mode=False)
        if code == 130:
            raise KeyboardInterrupt
        if isinstance(code, int) and code:
            sys.exit(code)
    except JurybenchError as exc:
        typer.echo(f"error: {redact(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("interrupted: judgments answered so far are stored; run again to resume.", err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except Exception as exc:
        usage, other = _click_exceptions()
        if type(exc).__name__ == "NoArgsIsHelpError" and isinstance(exc, usage):
            # A bare command group: its help is the answer (exit 2, as click does).
            typer.echo(usage_text(exc), err=True)
            sys.exit(2)
        if isinstance(exc, usage):
            typer.echo(f"error: {usage_line(exc)}", err=True)
            sys.exit(2)
        if isinstance(exc, other):
            typer.echo(f"error: {redact(' '.join(str(exc).split()))}", err=True)
            sys.exit(int(getattr(exc, "exit_code", 1) or 1))
        raise
    finally:
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    main()
