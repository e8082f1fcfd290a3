"""`jurybench stats ...` and `jurybench plot ...`: thin commands over jurybench.stats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from jurybench.errors import JurybenchError

stats_app = typer.Typer(
    help="Statistics over stored judgments (results are recorded in stats_results).", no_args_is_help=True
)

Run = Annotated[str, typer.Option("--run", help="Run id.")]
Where = Annotated[str | None, typer.Option(help="SQL predicate over the statistic's columns (docs/statistics.md).")]
By = Annotated[
    str | None, typer.Option(help="SQL expression to group by, e.g. model_a, language, treatment_a->>'gender'.")
]
Boot = Annotated[int, typer.Option(help="Bootstrap resamples.")]
Level = Annotated[
    str,
    typer.Option(
        help="jury: the run's jury score (its rule; subjects below quorum left out); juror: each juror alone."
    ),
]
Seed = Annotated[int, typer.Option(help="Random seed.")]
Fmt = Annotated[str, typer.Option("--format", "-f", help="table, json or csv.")]
Db = Annotated[Path | None, typer.Option("--db", help="DuckDB file (default: $JURYBENCH_DB or ./jurybench.duckdb).")]


def _emit(frame: Any, fmt: str) -> None:
    """A recorded statistic (a DataFrame from jurybench.stats) as a table, JSON or CSV."""
    from jurybench.store import rich_table, to_csv

    attrs = frame.attrs
    name, run_id, result = attrs["statistic"], attrs["run"], attrs["result"]
    if fmt == "json":
        typer.echo(json.dumps({"result_id": attrs["result_id"], "name": name, "params": attrs["params"],
                               "result": result}, indent=2, default=str))  # fmt: skip
        return
    from jurybench.stats.functions import flatten

    columns, rows = flatten(name, result)
    if fmt == "csv":
        typer.echo(to_csv(columns, [tuple(r) for r in rows]), nl=False)
        return
    from rich.console import Console

    Console().print(rich_table(columns, [tuple(r) for r in rows], title=f"{name} ({run_id or 'query'})"))
    jury = result.get("jury")
    if jury:
        present = jury.get("mean_jurors_present")
        typer.echo(
            f"{result.get('level', 'jury')} level; jury rule {jury['aggregation']}, quorum {jury['quorum']}: "
            f"{jury['n_jurors_expected']} jurors expected, {present if present is None else round(present, 2)} present "
            f"per subject on average, {jury['subjects_below_quorum']} of {jury['n_subjects']} subjects below quorum"
        )
    typer.echo(f"recorded as stats_results.result_id = {attrs['result_id']}")


def _check_fmt(fmt: str) -> None:
    if fmt not in ("table", "json", "csv"):
        raise JurybenchError(f"--format {fmt!r} is not valid.", hint="Valid: table, json, csv.")


def _two(text: str, option: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) != 2:
        raise JurybenchError(f"{option} needs two comma-separated values, got {text!r}.")
    return parts[0], parts[1]


@stats_app.command("directional")
def directional(run: Run, where: Where = None, by: By = None,
                zero_method: Annotated[str, typer.Option(help="Zero differences: wilcox (drop), pratt or zsplit.")] = "wilcox",
                fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Per category: D_j (mean symmetrized score) and the Wilcoxon signed-rank test, Holm and BH corrected."""
    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise JurybenchError(f"--zero-method {zero_method!r} is not valid.", hint="Valid: wilcox, pratt, zsplit.")
    _check_fmt(fmt)
    from jurybench import stats

    _emit(stats.directional(db, run, where=where, by=by, zero_method=zero_method, level=level), fmt)


@stats_app.command("gap")
def gap(
    run: Run,
    where: Where = None,
    by: By = None,
    boot: Boot = 2000,
    seed: Seed = 0,
    fmt: Fmt = "table",
    level: Level = "jury",
    db: Db = None,
) -> None:
    """Treatment gap G = sum |D_j| per group with bootstrap CIs, and pairwise bootstrap p-values."""
    _check_fmt(fmt)
    from jurybench import stats

    _emit(stats.gap(db, run, where=where, by=by, boot=boot, seed=seed, level=level), fmt)


@stats_app.command("consistency")
def consistency(run: Run, where: Where = None, by: By = None, fmt: Fmt = "table", db: Db = None) -> None:
    """Positional consistency per juror (or --by) and the share of pairs with no difference in any category."""
    _check_fmt(fmt)
    from jurybench import stats

    _emit(stats.consistency(db, run, where=where, by=by), fmt)


@stats_app.command("robustness")
def robustness(run: Run, other_run: Annotated[str, typer.Option(help="The run to compare D vectors with.")],
               where: Where = None, fmt: Fmt = "table", db: Db = None) -> None:  # fmt: skip
    """Spearman correlation between the D vectors of two runs (e.g. two judges, original vs neutralised)."""
    _check_fmt(fmt)
    from jurybench import stats

    _emit(stats.robustness(db, run, other_run=other_run, where=where), fmt)


@stats_app.command("friedman")
def friedman(run: Run, where: Where = None,
             by: Annotated[str, typer.Option(help="The compared groups (SQL expression).")] = "model",
             block: Annotated[str, typer.Option(help="Blocks (SQL expression).")] = "prompt",
             fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Friedman test per criterion across groups (blocks = prompts), Holm-corrected post-hoc Wilcoxon matrix."""
    _check_fmt(fmt)
    from jurybench import stats

    _emit(stats.friedman(db, run, where=where, by=by, block=block, level=level), fmt)


@stats_app.command("ttest")
def ttest(run: Run, where: Where = None, by: Annotated[str, typer.Option(help="Groups (SQL expression).")] = "model",
          baseline: Annotated[float | None, typer.Option(help="Human baseline value for every group.")] = None,
          baseline_file: Annotated[Path | None, typer.Option(help="CSV group,value[,criterion] of per-group baselines.")] = None,
          baselines: Annotated[str | None, typer.Option(help="Stored human mean baselines (cell = group, target = criterion or '').")] = None,
          fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """One-sample t-test of each group's mean score against a human baseline."""
    _check_fmt(fmt)
    from jurybench import stats

    _emit(
        stats.ttest(
            db,
            run,
            where=where,
            by=by,
            baseline=baseline,
            baseline_file=baseline_file,
            baselines=baselines,
            level=level,
        ),
        fmt,
    )


def _compare(test: str, run: str, groups: str, where: str | None, by: str, fmt: str, db: Path | None,
             level: str = "jury") -> None:  # fmt: skip
    _check_fmt(fmt)
    from jurybench import stats

    function = stats.welch if test == "welch" else stats.mannwhitney
    _emit(function(db, run, groups=_two(groups, "--groups"), where=where, by=by, level=level), fmt)


@stats_app.command("welch")
def welch(run: Run, groups: Annotated[str, typer.Option(help="Two groups: a,b.")], where: Where = None,
          by: Annotated[str, typer.Option(help="Groups (SQL expression).")] = "model", fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Welch two-sample t-test between two groups."""
    _compare("welch", run, groups, where, by, fmt, db, level)


@stats_app.command("mannwhitney")
def mannwhitney(run: Run, groups: Annotated[str, typer.Option(help="Two groups: a,b.")], where: Where = None,
                by: Annotated[str, typer.Option(help="Groups (SQL expression).")] = "model", fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Mann-Whitney U test between two groups."""
    _compare("mannwhitney", run, groups, where, by, fmt, db, level)


@stats_app.command("kendall")
def kendall(run: Run, baseline_file: Annotated[Path, typer.Option(help="CSV group,value: the reference ranking.")],
            where: Where = None, by: Annotated[str, typer.Option(help="Groups (SQL expression).")] = "model",
            fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Kendall tau between the groups' mean scores and a reference ranking."""
    _check_fmt(fmt)
    from jurybench import stats

    _emit(stats.kendall(db, run, baseline_file=baseline_file, where=where, by=by, level=level), fmt)


CohensArm = Annotated[str, typer.Option(help="SQL expression naming the arm of an item, e.g. treatment->>'gender'.")]
CohensArms = Annotated[str, typer.Option(help="The two arms compared: first,second (d = first - second).")]


@stats_app.command("cohens-d")
def cohens_d(run: Run, arm: CohensArm, arms: CohensArms, where: Where = None, by: By = None,
             baseline_file: Annotated[Path | None, typer.Option(help="CSV criterion,d_human[,cell]: human effect sizes.")] = None,
             factor_file: Annotated[Path | None, typer.Option(help="CSV criterion,factor: sub-scales of each factor.")] = None,
             baselines: Annotated[str | None, typer.Option(help="Stored human d baselines (jurybench baselines import).")] = None,
             min_gap: Annotated[float, typer.Option(help="Smallest |d - d_human| that counts as deviating.")] = 0.0,
             reorganization_gap: Annotated[float, typer.Option(help="Sub-scale deviation for 'reorganization'.")] = 0.2,
             boot: Boot = 2000, seed: Seed = 0, fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Cohen's d (three forms) with bootstrap CIs per cell and criterion, anchored to human baselines."""
    _check_fmt(fmt)
    from jurybench import stats

    _emit(
        stats.cohens_d(
            db,
            run,
            arm=arm,
            arms=_two(arms, "--arms"),
            where=where,
            by=by,
            baseline_file=baseline_file,
            factor_file=factor_file,
            baselines=baselines,
            min_gap=min_gap,
            reorganization_gap=reorganization_gap,
            boot=boot,
            seed=seed,
            level=level,
        ),
        fmt,
    )


@stats_app.command("item-spearman")
def item_spearman(run: Run, arm: CohensArm, arms: CohensArms,
                  by: Annotated[str, typer.Option(help="The conditions compared, e.g. language.")],
                  key_file: Annotated[Path | None, typer.Option(help="CSV criterion,key (+1/-1) for reverse-keyed items.")] = None,
                  where: Where = None, fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Spearman correlation between conditions of per-item keyed differences between the arms, with p-values."""
    _check_fmt(fmt)
    from jurybench import stats

    _emit(
        stats.item_spearman(
            db, run, arm=arm, arms=_two(arms, "--arms"), by=by, key_file=key_file, where=where, level=level
        ),
        fmt,
    )


@stats_app.command("disparity")
def disparity(sql: Annotated[str | None, typer.Option(help="Query returning grp, category, correct, invalid.")] = None,
              file: Annotated[Path | None, typer.Option(help="CSV/JSONL/Parquet with grp, category, correct, invalid.")] = None,
              max_invalid_rate: Annotated[float, typer.Option(help="Leave out groups above this invalid rate (negative: keep all).")] = 0.10,
              reference: Annotated[str | None, typer.Option(help="Reference group for the premium (e.g. en).")] = None,
              boot: Boot = 2000, seed: Seed = 0, fmt: Fmt = "table", db: Db = None) -> None:  # fmt: skip
    """Accuracy by group x category (invalid = wrong), Gini inequity with CI, max-min gaps, reference premium."""
    _check_fmt(fmt)
    from jurybench import stats

    _emit(
        stats.disparity(
            db,
            sql=sql,
            file=file,
            max_invalid_rate=None if max_invalid_rate < 0 else max_invalid_rate,
            reference=reference,
            boot=boot,
            seed=seed,
        ),
        fmt,
    )


@stats_app.command("results")
def results(name: Annotated[str | None, typer.Option(help="Only this statistic.")] = None, db: Db = None) -> None:
    """Recorded statistics: id, name, run, seed, parameters, time."""
    from jurybench.store import connect

    con = connect(db, read_only=True)
    rows = con.execute(
        "SELECT result_id, name, run_id, seed, params, created_at FROM stats_results "
        + ("WHERE name = ? " if name else "")
        + "ORDER BY created_at",
        [name] if name else [],
    ).fetchall()
    for r in rows:
        typer.echo("\t".join("" if v is None else str(v) for v in r))


def plot(
    name: Annotated[str, typer.Argument(help="directional, gap, posthoc, cohens-d or disparity.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The .png or .svg to write.")],
    result_id: Annotated[
        str | None, typer.Option("--result", help="A stored stats_results id (default: the latest of that statistic).")
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level for colouring.")] = 0.05,
    db: Db = None,
) -> None:
    """Plot a recorded statistic (.png/.svg): directional, gap, posthoc (friedman or gap p-values), cohens-d, disparity."""
    from jurybench.report import PLOTS, draw
    from jurybench.store import connect

    if name not in PLOTS:
        raise JurybenchError(f"unknown plot {name!r}.", hint=f"Valid: {', '.join(PLOTS)}.")
    source = {"posthoc": ("friedman", "gap")}.get(name, (name,))
    con = connect(db, read_only=True)
    if result_id:
        rows = con.execute("SELECT name, result FROM stats_results WHERE result_id = ?", [result_id]).fetchall()
    else:
        marks = ", ".join("?" for _ in source)
        rows = con.execute(
            f"SELECT name, result FROM stats_results WHERE name IN ({marks}) ORDER BY created_at DESC LIMIT 1",
            list(source),
        ).fetchall()
    if not rows or rows[0][0] not in source:
        raise JurybenchError(f"no stored {' or '.join(source)} result{f' with id {result_id}' if result_id else ''}.",
                             hint=f"Run 'jurybench stats {source[0]} ...' first.")  # fmt: skip
    path = draw(name, json.loads(rows[0][1]), output, alpha=alpha)
    typer.echo(f"wrote {path}")
