"""What each command a study can run does, as a function of its options.

The CLI's typer commands and the steps of a study file call these functions; each calls the
library's API (``jurybench.api``, ``jurybench.stats``) and prints what the command prints.
Parameter names are the command's option names (``--give-up-after`` is ``give_up_after``),
``db`` is the store. Each returns the command's exit code (0, 3 when calls ended in error, 4
when a budget stopped a run); user errors raise :class:`JurybenchError`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybench.commands._output import (
    check_format,
    console,
    echo,
    junit_xml,
    output_file,
    preference_rows,
    print_agreement,
    print_alignment,
    print_calibration,
    print_plan,
    print_selection,
    print_stat,
    print_stopping,
    run_outcome,
)
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    pass


def _words(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _declared(function: Any, values: dict[str, object]) -> dict[str, Any]:
    """A declared function's keyword arguments from command-line option values (a study step
    gives only some: the others take the command line's defaults); the progress bar only on a
    terminal."""
    import sys

    from jurybench.declare import from_cli, parameters_of

    arguments = from_cli(parameters_of(function), values)
    if "progress" in arguments:
        arguments["progress"] = bool(arguments["progress"]) and sys.stderr.isatty()
    return arguments


def score(db: Path | None, **values: object) -> int:
    """Judge items (pointwise) or pairs in both orders (pairwise) with a jury (``jurybench.score``);
    its options are the command line's face of ``jurybench.score``'s declaration."""
    from jurybench import api
    from jurybench.config import db_path

    arguments = _declared(api.score, values)
    # By path: the engine releases the file between flushes so other processes can read it.
    done = api.score(db_path(db), **arguments)
    result = done.result
    if arguments.get("plan"):
        print_plan(result)
        return 0
    echo(result.summary() + (" (the last batch)" if done.stopping is not None else ""))
    if done.stopping is not None:
        print_stopping(done.stopping)
    return run_outcome(result)


def generate(db: Path | None, **values: object) -> int:
    """Generate responses for a spec (``jurybench.generate``), then print the refusals per model
    and arm; its options are the command line's face of ``jurybench.generate``'s declaration."""
    from jurybench import api
    from jurybench.config import db_path
    from jurybench.generation import load_spec_file, refusal_table
    from jurybench.store import connect, rich_table

    arguments = _declared(api.generate, values)
    gen_spec, _ = load_spec_file(Path(arguments["spec"]))  # its name titles the refusal table
    report = api.generate(db_path(db), **arguments).report
    assert report is not None  # generate always reports
    if arguments.get("plan"):
        print_plan(report.run)
        return 0
    for line in report.lines():
        echo(line)
    con = connect(db, read_only=True)
    try:
        rows = refusal_table(con, gen_spec.name)
    finally:
        con.close()
    shown = [(g, v, a, n, r, None if rate is None else round(rate, 3)) for g, v, a, n, r, rate in rows]
    console().print(
        rich_table(
            ["model", "variable", "arm", "answered", "refused", "refusal_rate"],
            shown,
            title=f"refusals ({gen_spec.name})",
        )
    )
    return run_outcome(report.run)


def sql(db: Path | None, *, query: str, format: str = "table", output: Path | None = None) -> int:
    """Query the store (read-only); JSON output is an array of row objects."""
    from jurybench.store import connect, rich_table, run_query, to_csv, to_json, to_parquet

    check_format(format, ("table", "csv", "json", "parquet"))
    if output is not None and format != "table":
        output = output_file(output, "--output")
    con = connect(db, read_only=True)
    try:
        if format == "parquet":
            if output is None:
                raise JurybenchError("--format parquet needs --output FILE.parquet.")
            echo(f"{to_parquet(con, query, output)} rows written to {output}")
            return 0
        names, rows = run_query(con, query)
    finally:
        con.close()
    if format == "table":
        if output:
            raise JurybenchError("--output is for csv, json and parquet.")
        console().print(rich_table(names, rows))
        return 0
    text = to_json(names, rows) if format == "json" else to_csv(names, rows)
    if output:
        output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        echo(f"{len(rows)} rows written to {output}")
    else:
        echo(text, nl=not text.endswith("\n"))
    return 0


def items_import(
    db: Path | None,
    *,
    file: Path,
    treatment: str = "",
    dataset: str | None = None,
    format: str | None = None,
    map: list[str] | None = None,
) -> int:
    """Import generations (``Store.import_items``), or conversations in a trace format
    (``--format openai-chat``, ``tau-bench``, ...), DuckDB's memory capped (``config.duckdb_memory``)."""
    from jurybench.api import Store
    from jurybench.config import duckdb_memory

    with Store(db, memory_limit=duckdb_memory()) as store:
        result = store.import_items(file, fmt=format, treatment=_words(treatment), dataset=dataset, map=map)
    noun = "conversations" if getattr(result, "conversations", False) else "items"
    echo(f"{noun} from {file}: {result}")
    return 0


def pairs_import(db: Path | None, *, file: Path, dataset: str | None = None, format: str | None = None) -> int:
    """Import pairs of stored items (``Store.import_pairs``), DuckDB's memory capped."""
    from jurybench.api import Store
    from jurybench.config import duckdb_memory

    with Store(db, memory_limit=duckdb_memory()) as store:
        result = store.import_pairs(file, fmt=format, dataset=dataset)
    echo(f"pairs from {file}: {result}")
    return 0


def judgments_import(db: Path | None, **values: object) -> int:
    """Import judgments made elsewhere as a run, or a file as a judge or benchmark released it
    (``Store.import_judgments``; its options are the command line's face of its declaration)."""
    from jurybench.api import Store

    arguments = _declared(Store.import_judgments, values)
    with Store(db) as store:
        result = store.import_judgments(**arguments)
    echo(f"judgments from {arguments['data']}: {result}")
    if arguments.get("as_recording"):
        echo(f"recorded as replay/{arguments['as_recording']}")
    return 0


def judgments_formats() -> int:
    """The released judgment formats, their rubrics and options."""
    from rich.table import Table

    from jurybench.imports import judgment_formats

    table = Table(title="judgments import --format")
    for col in ("format", "rubric", "what", "options"):
        table.add_column(col)
    for fmt in judgment_formats().values():
        table.add_row(fmt.name, fmt.rubric, fmt.description, ", ".join(f"{k}: {v}" for k, v in fmt.options.items()))
    console().print(table)
    return 0


def annotations_import(db: Path | None, **values: object) -> int:
    """Import human labels, validated against the rubric (``Store.import_annotations``; its
    options are the command line's face of its declaration)."""
    from jurybench.api import Store

    arguments = _declared(Store.import_annotations, values)
    with Store(db) as store:
        result = store.import_annotations(**arguments)
    echo(f"annotations from {arguments['data']}: {result}")
    return 0


def anchors_add(db: Path | None, **values: object) -> int:
    """Fix anchors of a run (``Store.add_anchors``; its options are the command line's face of its
    declaration)."""
    from jurybench.api import Store

    arguments = _declared(Store.add_anchors, values)
    with Store(db) as store:
        drawn = store.add_anchors(**arguments)
    echo(
        f"anchor set {drawn['name']}: {drawn['n_drawn']} of {drawn['n_population']} subjects of run {drawn['run']} "
        f"(seed {drawn['seed']}); judge them again with 'jurybench score ... --anchors {drawn['name']}', then "
        f"'jurybench stats drift --from {drawn['run']} --to NEW_RUN'"
    )
    return 0


def annotations_sample(db: Path | None, *, out: Path | None = None, **values: object) -> int:
    """Draw the subjects to label at random (``Store.sample_labels``; its options are the command
    line's face of its declaration); their ids to ``out``."""
    from jurybench.api import Store

    arguments = _declared(Store.sample_labels, values)
    out = output_file(out, "--out") if out is not None else None  # before the sample is drawn
    run = arguments["run"]
    with Store(db) as store:
        drawn = store.sample_labels(**arguments)
    subjects = drawn["subjects"]
    assert isinstance(subjects, list)
    if out is not None:
        out.write_text("subject_id\n" + "".join(f"{s}\n" for s in subjects), encoding="utf-8")
    echo(
        f"sample {drawn['sample']} ({drawn['design']}, seed {drawn['seed']}): {drawn['n_drawn']} of "
        f"{drawn['n_population']} subjects of run {run} drawn"
        + (f", ids written to {out}" if out is not None else "")
        + f"; label them, then 'jurybench stats ppi --run {run}'"
    )
    return 0


def annotations_simulate(db: Path | None, **values: object) -> int:
    """Human labels from the simulated jurors' known truth (``Store.simulate_annotations``; its
    options are the command line's face of its declaration)."""
    from jurybench.api import Store

    arguments = _declared(Store.simulate_annotations, values)
    annotators, panel_out = arguments["annotators"], arguments["panel_out"]
    with Store(db) as store:
        n = store.simulate_annotations(**arguments)
    if panel_out:
        echo(
            f"{n} panel means of {annotators} simulated annotators written to {panel_out} "
            "(import them with 'annotations import FILE --continuous')"
        )
    else:
        echo(f"{n} simulated human labels written (annotators sim-human-1..{annotators})")
    return 0


def baselines_import(db: Path | None, *, file: Path, name: str, statistic: str | None = None) -> int:
    """Human baselines under a name (``Store.import_baselines``)."""
    from jurybench.api import Store

    with Store(db) as store:
        result = store.import_baselines(file, name=name, statistic=statistic)
    echo(
        f"baselines '{name}' from {file}: {result.inserted} values"
        + (f" (replacing {result.updated})" if result.updated else "")
    )
    return 0


def calibrate(db: Path | None, *, format: str = "table", **values: object) -> int:
    """Fit per-criterion juror weights against the human mean (``jurybench.calibrate``), printed
    as a table or JSON; its options are the command line's face of its declaration."""
    from jurybench import api

    check_format(format, ("table", "json"))
    fitted = api.calibrate(db, **_declared(api.calibrate, values))
    if format == "json":
        echo(json.dumps(fitted.artifact, indent=2, default=str))
        return 0
    print_calibration(fitted.artifact)
    if fitted.artifact.get("label_uses"):
        echo(f"note: {fitted.artifact['label_uses']}")
    echo(f"calibration written to {fitted.path}")
    return 0


def jury_select(db: Path | None, *, format: str = "table", **values: object) -> int:
    """The cheapest sub-jury of a pilot run that is good enough (``jurybench.select_jury``),
    printed as a table or JSON; its options are the command line's face of its declaration."""
    from jurybench import api

    check_format(format, ("table", "json"))
    arguments = _declared(api.select_jury, values)
    selection = api.select_jury(db, **arguments)
    if format == "json":
        echo(json.dumps(selection.as_dict(), indent=2, default=str))
    else:
        print_selection(selection)
    out = arguments.get("out")
    if out is not None:
        echo(f"jury file written to {out} (score --jury {out})")
    return 0


def check(db: Path | None, *, format: str = "table", junit: Path | None = None, **values: object) -> int:
    """A gate for CI (``jurybench.check``): the run's criteria against their thresholds and a
    baseline run, printed as a table or JSON; 1 when a criterion failed."""
    from jurybench import api

    check_format(format, ("table", "json", "junit"))
    arguments = _declared(api.check, values)
    junit = output_file(junit, "--junit") if junit is not None else None  # before the check is recorded
    result = api.check(db, **arguments)
    if junit is not None:  # the report CI systems read, beside what is printed
        Path(junit).write_text(junit_xml(result) + "\n", encoding="utf-8")
    if format == "junit":
        echo(junit_xml(result))
    elif format == "json":
        shown = {
            "run": arguments["run"],
            "passed": result.passed,
            "failures": result.failures,
            "result_id": result.result_id,
            "criteria": result.table.to_dict(orient="records"),
            "without_valid_answers": result.without_valid_answers,
        }
        echo(json.dumps(shown, indent=2, default=str))
    else:
        for line in result.lines():
            echo(line)
    return 0 if result.passed else 1


def calibrate_apply(db: Path | None, **values: object) -> int:
    """Write calibrated scores for a run (``jurybench.apply_calibration``; its options are the
    command line's face of its declaration)."""
    from jurybench import api

    result = api.apply_calibration(db, **_declared(api.apply_calibration, values))
    echo(
        f"{result['rows']} calibrated scores written for run {result['run_id']} with {result['calibration']} "
        f"({result['imputed']} juror votes imputed)"
    )
    for line in result.get("warnings") or []:
        echo(f"warning: {line}", err=True)
    return 0


def agreement(db: Path | None, *, format: str = "table", **values: object) -> int:
    """Human agreement, the human ceiling, and each juror and the jury against the humans
    (``jurybench.agreement``), printed as a table or JSON; its options are the command line's
    face of its declaration."""
    from jurybench import api

    check_format(format, ("table", "json"))
    report = api.agreement(db, **_declared(api.agreement, values)).attrs["report"]
    if format == "json":
        echo(json.dumps(report, indent=2))
        return 0
    print_agreement(report)
    return 0


def report_preference(db: Path | None, *, format: str = "table", **values: object) -> int:
    """Per-juror and jury accuracy against human labels in both orders, and order consistency
    (``jurybench.preference_report``; its options are the command line's face of its declaration)."""
    from rich.table import Table

    from jurybench import api

    check_format(format, ("table", "json"))
    arguments = _declared(api.preference_report, values)
    report = api.preference_report(db, **arguments)
    if format == "json":
        echo(json.dumps(report.as_dict(), indent=2))
        return 0
    run = arguments["run"]
    table = Table(title=f"{run}: verdicts vs {report.reference} ({report.n_pairs} pairs)")
    columns, rows = preference_rows(report)
    for col in columns:
        table.add_column(col, justify="left" if col == "juror" else "right")
    for values_ in rows:
        table.add_row(*values_)
    console().print(table)
    rule = report.jury_rule
    echo(
        f"jury rule {rule['aggregation']} (tie: {rule['tie']}), quorum {rule['quorum']}, "
        f"{rule['n_jurors_expected']} jurors expected; {rule['pair_orders_below_quorum']} pair-orders below quorum"
    )
    echo(f"human reference: {report.majority_rule}")
    if report.n_without_reference or report.n_reference_ties:
        echo(
            f"left out: {report.n_without_reference} pairs without a human label, "
            f"{report.n_reference_ties} where humans tie"
        )
    if report.one_order:
        echo(
            f"run {run} shows each pair in one order (orders: {report.orders}): the figures are over the orders "
            "shown; consistency across orders and position bias cannot be measured."
        )
    return 0


def report_classification(db: Path | None, *, format: str = "table", **values: object) -> int:
    """A classification run's answers per juror and language: named a label as written, only after
    normalisation, or invalid by why (``jurybench.classification_answers``)."""
    import math

    from rich.table import Table

    from jurybench import api

    check_format(format, ("table", "json"))
    arguments = _declared(api.classification_answers, values)
    frame = api.classification_answers(db, **arguments)
    rows = [
        {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
        for row in frame.to_dict("records")
    ]
    if format == "json":
        echo(json.dumps(rows, indent=2))
        return 0
    table = Table(title=f"{arguments['run']}: answers (valid as written / after normalisation; invalid by why)")
    for col in frame.columns:
        table.add_column(col, justify="left" if col in ("juror", "language") else "right")
    for row in rows:
        table.add_row(*(str(row[c] if row[c] is not None else "") for c in frame.columns))
    console().print(table)
    return 0


def statistic(db: Path | None, name: str, *, format: str = "table", face: str = "python", **options: object) -> int:
    """Compute, record and print the registered statistic ``name`` (options named as ``face``
    names them in its messages: the CLI's ``--arms``, a study's ``arms``)."""
    from jurybench.stats import get_statistic

    check_format(format, ("table", "json", "csv"))
    stat = get_statistic(name)
    stat.check(options, face)
    print_stat(stat(db, **options), format)
    return 0


def plot(db: Path | None, *, name: str, output: Path, result: str | None = None, alpha: float = 0.05) -> int:
    """Plot a recorded statistic (.png/.svg): directional, gap, posthoc, cohens-d, disparity, leaderboard. The
    figure's caption names the run, its rubric and jury, and the recorded result."""
    from jurybench.plots import PLOTS, draw, plot_caption
    from jurybench.store import reading

    if name not in PLOTS:
        raise JurybenchError(f"unknown plot {name!r}.", hint=f"Valid: {', '.join(PLOTS)}.")
    from jurybench.stats import statistics

    source = tuple(stat.name for stat in statistics().values() if name in stat.plots) or (name,)
    columns = "name, result, run_id, params, result_id, created_at"
    with reading(db) as con:
        if result:
            rows = con.execute(f"SELECT {columns} FROM stats_results WHERE result_id = ?", [result]).fetchall()
        else:
            marks = ", ".join("?" for _ in source)
            rows = con.execute(
                f"SELECT {columns} FROM stats_results WHERE name IN ({marks}) ORDER BY created_at DESC LIMIT 1",
                list(source),
            ).fetchall()
        if not rows or rows[0][0] not in source:
            raise JurybenchError(
                f"no stored {' or '.join(source)} result{f' with id {result}' if result else ''}.",
                hint=f"Run 'jurybench stats {source[0]} ...' first.",
            )
        stat, body, run_id, params, result_id, created = rows[0]
        caption = plot_caption(con, stat, run_id, params, result_id, created)
    echo(f"wrote {draw(name, json.loads(body), output, alpha=alpha, caption=caption)}")
    return 0


def align(db: Path | None, *, format: str = "table", **values: object) -> int:
    """Align one juror of a run to the human labels, held out (``jurybench.align``), printed as
    a table or JSON; its options are the command line's face of its declaration."""
    from jurybench import api

    check_format(format, ("table", "json"))
    result = api.align(db, **_declared(api.align, values))
    if format == "json":
        echo(json.dumps(result.as_dict(), indent=2, default=str))
        return 0
    print_alignment(result)
    return 0


def _exported(function: Any, db: Path | None, format: str, values: dict[str, object]) -> int:
    """An export (``jurybench.export_mlflow``, ``export_otel``): where it went, as a line or JSON."""
    check_format(format, ("table", "json"))
    done = function(db, **_declared(function, values))
    echo(json.dumps(done.as_dict(), indent=2) if format == "json" else done.line())
    return 0


def export_mlflow(db: Path | None, *, format: str = "table", **values: object) -> int:
    """A run written to MLflow (``jurybench.export_mlflow``)."""
    from jurybench import api

    return _exported(api.export_mlflow, db, format, values)


def export_otel(db: Path | None, *, format: str = "table", **values: object) -> int:
    """A run's calls sent as OpenTelemetry traces (``jurybench.export_otel``)."""
    from jurybench import api

    return _exported(api.export_otel, db, format, values)
