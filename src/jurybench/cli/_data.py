"""Commands that put data into the store or read it out: migrate, imports, rubrics, datasets, sql, schema,
recordings, annotations and baselines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import (
    DbOption,
    FormatOption,
    _connect,
    _done,
    annotations_app,
    app,
    datasets_app,
    items_app,
    judgments_app,
    pairs_app,
    recordings_app,
    rubrics_app,
)
from jurybench.commands import check_format
from jurybench.errors import JurybenchError


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
    from jurybench import commands

    _done(commands.items_import(db, file=file, treatment=treatment, dataset=dataset, format=fmt))


@pairs_app.command("import")
def pairs_import(
    file: Annotated[Path, typer.Argument(help="CSV, JSONL or Parquet with pair_id, item_a, item_b.")],
    dataset: Annotated[str | None, typer.Option(help="Dataset name stored with every pair.")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="csv, jsonl or parquet.")] = None,
    db: DbOption = None,
) -> None:
    """Import pairs of already imported items (A = item_a, B = item_b)."""
    from jurybench import commands

    _done(commands.pairs_import(db, file=file, dataset=dataset, format=fmt))


@rubrics_app.command("list")
def rubrics_list() -> None:
    """Rubrics found in ./rubrics and the shipped ones."""
    from jurybench.rubric import load_rubric, rubric_files

    for name, path in rubric_files():
        rubric = load_rubric(path)
        typer.echo(f"{name:20s} {rubric.kind:14s} {len(rubric.dimensions):3d} dims  {rubric.content_hash[:12]}  {path}")


@rubrics_app.command("show")
def rubrics_show(
    name: Annotated[str, typer.Argument(help="Rubric name or YAML path.")],
    language: Annotated[str | None, typer.Option(help="Show the template for this language.")] = None,
) -> None:
    """Validate a rubric and print its hash, dimensions and answer schema (or labels / structure)."""
    from jurybench.rubric import (
        answer_format,
        load_rubric,
        response_model,
    )

    rubric = load_rubric(name)
    typer.echo(f"{rubric.name} v{rubric.version} ({rubric.kind}) hash {rubric.content_hash}")
    typer.echo(f"dimensions: {', '.join(rubric.dimensions)}")
    typer.echo(f"languages: {', '.join(sorted(rubric.templates))}")
    if not rubric.answers_in_json:  # a label or numbered lines: show what and a prompt asking for it
        lang = language or rubric.default_language
        for line in rubric.describe(lang):
            typer.echo(line)
        example = rubric.example_subject(lang)
        arm = ", ".join(f"{k}={v}" for k, v in json.loads(example.get("treatment") or "{}").items())
        messages, _ = rubric.render(example, "", "example")
        typer.echo(f"-- an example prompt ({lang}{f', {arm}' if arm else ''}):")
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
    from jurybench import commands

    _done(commands.sql(db, query=query, format=fmt, output=output))


@app.command()
def schema(
    fmt: Annotated[str, typer.Option("--format", "-f", help="markdown or json.")] = "markdown",
) -> None:
    """Print the store's tables and views (markdown or json), from a freshly migrated database."""
    from jurybench.store import schema_json, schema_markdown

    check_format(fmt, ("markdown", "json"))
    typer.echo(schema_markdown() if fmt == "markdown" else schema_json())


@datasets_app.command("import")
def datasets_import(
    name: Annotated[str, typer.Argument(help="Dataset: llmbar or hanna.")],
    data: Annotated[
        Path | None,
        typer.Option(help="Folder holding llmbar/ (default: $JURYBENCH_DATA or ../shared/datasets)."),
    ] = None,
    subset: Annotated[
        list[str] | None,
        typer.Option(help="LLMBar subsets: folders below llmbar/ with a dataset.json, e.g. Natural (default: all)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Import a reference dataset's pairs, gold labels and recorded judge completions."""
    from jurybench.config import data_path
    from jurybench.datasets import import_llmbar

    if name == "hanna":
        from jurybench.datasets import import_hanna

        typer.echo(f"hanna: {import_hanna(_connect(db), data_path(data))}")
        return
    if name != "llmbar":
        raise JurybenchError(f"unknown dataset '{name}'.", hint="Available: llmbar, hanna.")
    con = _connect(db)
    typer.echo(f"llmbar: {import_llmbar(con, data_path(data), tuple(subset) if subset else None)}")


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


@recordings_app.command("from-run")
def recordings_from_run(
    run: Annotated[str, typer.Option("--run", help="The run whose raw answers to record.")],
    juror: Annotated[str, typer.Option(help="Juror name in that run.")],
    source: Annotated[str, typer.Option(help="Name for the recording set (serve it as replay/<source>).")],
    db: DbOption = None,
) -> None:
    """Save a juror's raw answers from a run so the run can be re-executed offline."""
    from jurybench.engine import record_run

    con = _connect(db)
    typer.echo(f"{record_run(con, run, juror, source)} completions recorded as replay/{source}")


@recordings_app.command("list")
def recordings_list(db: DbOption = None) -> None:
    """Recording sources and how many completions each holds."""
    con = _connect(db, read_only=True)
    for source, n in con.execute("SELECT source, count(*) FROM recordings GROUP BY 1 ORDER BY 1").fetchall():
        typer.echo(f"replay/{source}\t{n}")


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


@judgments_app.command("import")
def judgments_import(
    file: Annotated[Path, typer.Argument(help="CSV, JSONL or Parquet, one judgment a row.")],
    run: Annotated[str, typer.Option("--run", help="The run they become (created, or added to).")],
    rubric: Annotated[str, typer.Option("--rubric", "-r", help="The rubric the judgments answer.")],
    juror: Annotated[str, typer.Option("--juror", "-j", help="The judge's name (stored as import/<name>).")],
    replace: Annotated[bool, typer.Option(help="Overwrite stored judgments that differ.")] = False,
    as_recording: Annotated[
        str | None,
        typer.Option(help="Also keep them as recordings SOURCE, for a replay/SOURCE juror to re-run them."),
    ] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="csv, jsonl or parquet.")] = None,
    continuous: Annotated[
        bool,
        typer.Option(
            "--continuous",
            help="Accept pointwise scores between the scale's points (panel means, averaged scores).",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Import judgments made elsewhere as a run's calls and judgments, as if jurybench had made them.

    Rows: item_id, criterion, score (pointwise); pair_id, criterion, score (pairwise, -k..k);
    pair_id and verdict (A, B, tie) or p_b (the probability item_b is preferred) for
    preference rubrics; optionally shown (AB or BA), sample, raw, reason, status (ok,
    invalid, refusal), cost_usd, model. All rows are checked before any is written;
    importing the same file again changes nothing.
    """
    from jurybench import commands

    _done(
        commands.judgments_import(
            db,
            file=file,
            run=run,
            rubric=rubric,
            juror=juror,
            replace=replace,
            as_recording=as_recording,
            format=fmt,
            continuous=continuous,
        )
    )


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
    continuous: Annotated[
        bool,
        typer.Option(
            "--continuous",
            help="Accept values between the scale's points (panel means, published scores); stored as continuous.",
        ),
    ] = False,
    fmt: Annotated[str | None, typer.Option("--format", help="csv, jsonl or parquet.")] = None,
    db: DbOption = None,
) -> None:
    """Import human labels: pointwise scores, A/B/tie preferences or pairwise category scores.

    Validated against the rubric's criteria and scales, all or nothing; importing the
    same file again changes nothing.
    """
    from jurybench import commands

    _done(
        commands.annotations_import(
            db,
            file=file,
            rubric=rubric,
            layout=layout,
            map=map_,
            annotator_columns=annotator_columns,
            criterion=criterion,
            replace=replace,
            continuous=continuous,
            format=fmt,
        )
    )


@annotations_app.command("simulate")
def annotations_simulate(
    rubric: Annotated[str, typer.Option("--rubric", "-r", help="Pointwise rubric whose criteria are labelled.")],
    where: Annotated[str | None, typer.Option(help="SQL predicate choosing the items.")] = None,
    fraction: Annotated[float, typer.Option(help="Share of the items that get labels (a seeded subset).")] = 1.0,
    annotators: Annotated[int, typer.Option(help="Simulated annotators per item.")] = 3,
    noise: Annotated[float, typer.Option(help="SD of each annotator's noise, in scale points.")] = 0.5,
    seed: Annotated[int, typer.Option(help="Seed for the subset and the noise.")] = 0,
    truth_seed: Annotated[int, typer.Option(help="The simulated jurors' truth_seed (the same known truth).")] = 0,
    panel_out: Annotated[
        Path | None,
        typer.Option(help="Write the panel's mean per item and criterion to this CSV instead of the store."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Offline studies: human labels drawn from the simulated jurors' known truth (annotators sim-human-N)."""
    from jurybench import commands

    _done(
        commands.annotations_simulate(
            db,
            rubric=rubric,
            where=where,
            fraction=fraction,
            annotators=annotators,
            noise=noise,
            seed=seed,
            truth_seed=truth_seed,
            panel_out=panel_out,
        )
    )


baselines_app = typer.Typer(
    rich_markup_mode=None,
    help="Human reference values (effect sizes, means) used by the statistics.",
    no_args_is_help=True,
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
    from jurybench import commands

    _done(commands.baselines_import(db, file=file, name=name, statistic=statistic))
