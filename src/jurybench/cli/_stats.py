"""`jurybench stats ...` and `jurybench plot ...`: thin commands over jurybench.stats."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import _done
from jurybench.errors import JurybenchError

stats_app = typer.Typer(
    rich_markup_mode=None,
    help="Statistics over stored judgments (results are recorded in stats_results).",
    no_args_is_help=True,
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


@stats_app.command("directional")
def directional(run: Run, where: Where = None, by: By = None,
                zero_method: Annotated[str, typer.Option(help="Zero differences: wilcox (drop), pratt or zsplit.")] = "wilcox",
                fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Per category: D_j (mean symmetrized score) and the Wilcoxon signed-rank test, Holm and BH corrected."""
    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise JurybenchError(f"--zero-method {zero_method!r} is not valid.", hint="Valid: wilcox, pratt, zsplit.")
    from jurybench import commands

    _done(
        commands.statistic(
            db, "directional", format=fmt, run=run, where=where, by=by, zero_method=zero_method, level=level
        )
    )


@stats_app.command("gap")
def gap(
    run: Run,
    where: Where = None,
    by: By = None,
    boot: Boot = 2000,
    seed: Seed = 0,
    fmt: Fmt = "table",
    level: Level = "jury",
    resample: Annotated[
        str, typer.Option(help="Bootstrap unit: pairs, or clusters:<expression> (e.g. clusters:prompt).")
    ] = "pairs",
    db: Db = None,
) -> None:
    """Treatment gap G = sum |D_j| per group with bootstrap CIs, and pairwise bootstrap p-values."""
    from jurybench import commands

    _done(commands.statistic(db, "gap", format=fmt, run=run, where=where, by=by, boot=boot, seed=seed, level=level,
                             resample=resample))  # fmt: skip


@stats_app.command("consistency")
def consistency(run: Run, where: Where = None, by: By = None, fmt: Fmt = "table", db: Db = None) -> None:
    """Positional consistency per juror (or --by) and the share of pairs with no difference in any category."""
    from jurybench import commands

    _done(commands.statistic(db, "consistency", format=fmt, run=run, where=where, by=by))


@stats_app.command("robustness")
def robustness(run: Run, other_run: Annotated[str, typer.Option(help="The run to compare D vectors with.")],
               where: Where = None, fmt: Fmt = "table", db: Db = None) -> None:  # fmt: skip
    """Spearman correlation between the D vectors of two runs (e.g. two judges, original vs neutralised)."""
    from jurybench import commands

    _done(commands.statistic(db, "robustness", format=fmt, run=run, other_run=other_run, where=where))


@stats_app.command("friedman")
def friedman(run: Run, where: Where = None,
             by: Annotated[str, typer.Option(help="The compared groups (SQL expression).")] = "model",
             block: Annotated[str, typer.Option(help="Blocks (SQL expression).")] = "prompt",
             fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Friedman test per criterion across groups (blocks = prompts), Holm-corrected post-hoc Wilcoxon matrix."""
    from jurybench import commands

    _done(commands.statistic(db, "friedman", format=fmt, run=run, where=where, by=by, block=block, level=level))


@stats_app.command("ttest")
def ttest(run: Run, where: Where = None, by: Annotated[str, typer.Option(help="Groups (SQL expression).")] = "model",
          baseline: Annotated[float | None, typer.Option(help="Human baseline value for every group.")] = None,
          baseline_file: Annotated[Path | None, typer.Option(help="CSV group,value[,criterion] of per-group baselines.")] = None,
          baselines: Annotated[str | None, typer.Option(help="Stored human mean baselines (cell = group, target = criterion or '').")] = None,
          fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """One-sample t-test of each group's mean score against a human baseline."""
    from jurybench import commands

    _done(
        commands.statistic(
            db,
            "ttest",
            format=fmt,
            run=run,
            where=where,
            by=by,
            baseline=baseline,
            baseline_file=baseline_file,
            baselines=baselines,
            level=level,
        )
    )


def two_values(text: str, option: str) -> tuple[str, str]:
    """'a,b' as two values (jurybench.stats.two_values, imported when a command runs: the
    statistics load numpy, which 'jurybench --help' must not wait for)."""
    from jurybench.stats import two_values as parse

    return parse(text, option)


def _compare(test: str, run: str, groups: str, where: str | None, by: str, fmt: str, db: Path | None,
             level: str = "jury") -> None:  # fmt: skip
    from jurybench import commands

    _done(
        commands.statistic(
            db, test, format=fmt, run=run, groups=two_values(groups, "--groups"), where=where, by=by, level=level
        )
    )


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
    from jurybench import commands

    _done(
        commands.statistic(
            db, "kendall", format=fmt, run=run, baseline_file=baseline_file, where=where, by=by, level=level
        )
    )


CohensArm = Annotated[str, typer.Option(help="SQL expression naming the arm of an item, e.g. treatment->>'gender'.")]
CohensArms = Annotated[str, typer.Option(help="The two arms compared: first,second (d = first - second).")]


@stats_app.command("power")
def power(run: Run, arm: CohensArm, arms: CohensArms,
          pair_on: Annotated[str, typer.Option(help="SQL expression pairing the arms' subjects (default: prompt).")] = "prompt",
          where: Where = None,
          d: Annotated[float | None, typer.Option(help="Effect to detect, standardised: mean difference / SD of the differences (d_z).")] = None,
          shift: Annotated[float | None, typer.Option(help="Effect to detect in score units (instead of --d).")] = None,
          power: Annotated[float, typer.Option(help="Power wanted.")] = 0.8,
          alpha: Annotated[float, typer.Option(help="Two-sided significance level.")] = 0.05,
          fmt: Fmt = "table", db: Db = None) -> None:  # fmt: skip
    """Pairs (prompts) needed to detect an effect between two arms, from a pilot run: paired
    t-test (and Wilcoxon by its efficiency), the pilot's own power, and other jury sizes."""
    from jurybench import commands

    _done(commands.statistic(db, "power", format=fmt, run=run, arm=arm, arms=two_values(arms, "--arms"),
                             pair_on=pair_on, where=where, d=d, shift=shift, power=power, alpha=alpha))  # fmt: skip


@stats_app.command("cohens-d")
def cohens_d(run: Run, arm: CohensArm, arms: CohensArms, where: Where = None, by: By = None,
             baseline_file: Annotated[Path | None, typer.Option(help="CSV criterion,d_human[,cell]: human effect sizes.")] = None,
             factor_file: Annotated[Path | None, typer.Option(help="CSV criterion,factor: sub-scales of each factor.")] = None,
             baselines: Annotated[str | None, typer.Option(help="Stored human d baselines (jurybench baselines import).")] = None,
             min_gap: Annotated[float, typer.Option(help="Smallest |d - d_human| that counts as deviating.")] = 0.0,
             reorganization_gap: Annotated[float, typer.Option(help="Sub-scale deviation for 'reorganization'.")] = 0.2,
             boot: Boot = 2000, seed: Seed = 0, fmt: Fmt = "table", level: Level = "jury",
             resample: Annotated[str, typer.Option(help="Bootstrap unit: instances (each arm's items) or clusters:<expression>, e.g. clusters:prompt.")] = "instances",
             db: Db = None) -> None:  # fmt: skip
    """Cohen's d (three forms) with bootstrap CIs per cell and criterion, anchored to human baselines."""
    from jurybench import commands

    _done(
        commands.statistic(
            db,
            "cohens-d",
            format=fmt,
            run=run,
            arm=arm,
            arms=two_values(arms, "--arms"),
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
            resample=resample,
        )
    )


@stats_app.command("item-spearman")
def item_spearman(run: Run, arm: CohensArm, arms: CohensArms,
                  by: Annotated[str, typer.Option(help="The conditions compared, e.g. language.")],
                  key_file: Annotated[Path | None, typer.Option(help="CSV criterion,key (+1/-1) for reverse-keyed items.")] = None,
                  where: Where = None, fmt: Fmt = "table", level: Level = "jury", db: Db = None) -> None:  # fmt: skip
    """Spearman correlation between conditions of per-item keyed differences between the arms, with p-values."""
    from jurybench import commands

    _done(
        commands.statistic(
            db,
            "item-spearman",
            format=fmt,
            run=run,
            arm=arm,
            arms=two_values(arms, "--arms"),
            by=by,
            key_file=key_file,
            where=where,
            level=level,
        )
    )


@stats_app.command("leaderboard")
def leaderboard(run: Run,
                category: Annotated[str | None, typer.Option(help="The category to rank by (a preference run has one).")] = None,
                anchor: Annotated[str | None, typer.Option(help="The model rated 1000 (default: the first by name).")] = None,
                baseline: Annotated[str | None, typer.Option(help="Win rates are against this model (default: the anchor).")] = None,
                boot: Boot = 1000, seed: Seed = 0, fmt: Fmt = "table", level: Level = "jury",
                resample: Annotated[str, typer.Option(help="Bootstrap unit: prompts, pairs, battles, or clusters:<expression over p, a, b>.")] = "prompts",
                strong: Annotated[str | None, typer.Option(help="T:W - a verdict with |score| >= T counts as W battles (e.g. 2:3).")] = None,
                control: Annotated[str | None, typer.Option(help="Style control: length, markdown or length,markdown.")] = None,
                weighted: Annotated[bool, typer.Option("--weighted", help="A battle's outcome is the probability its first model won, not the score's sign.")] = False,
                db: Db = None) -> None:  # fmt: skip
    """Bradley-Terry ratings of the run's models (Elo scale), win rates against a baseline and
    ranks, with CIs from a bootstrap over prompts; both presentation orders count as battles."""
    from jurybench import commands

    _done(
        commands.statistic(
            db,
            "leaderboard",
            format=fmt,
            run=run,
            category=category,
            anchor=anchor,
            baseline=baseline,
            boot=boot,
            seed=seed,
            level=level,
            resample=resample,
            strong=strong,
            control=control,
            weighted=weighted,
        )
    )


@stats_app.command("winrate")
def winrate(run: Run,
            reference: Annotated[str, typer.Option(help="The reference model (the items' model column).")],
            category: Annotated[str | None, typer.Option(help="The category (a preference run has one).")] = None,
            level: Level = "jury",
            length_controlled: Annotated[bool, typer.Option("--length-controlled", help="Also the win rate predicted at equal length (docs/statistics.md).")] = False,
            fmt: Fmt = "table", db: Db = None) -> None:  # fmt: skip
    """Win rates against a reference model as AlpacaEval defines them: wins, losses, draws, the
    mean preference (probabilistic where the jury's scores are) with its standard error, and the
    discrete win rate (ties as half)."""
    from jurybench import commands

    _done(commands.statistic(db, "winrate", format=fmt, run=run, reference=reference, category=category, level=level,
                             length_controlled=length_controlled))  # fmt: skip


@stats_app.command("disparity")
def disparity(sql: Annotated[str | None, typer.Option(help="Query returning grp, category, correct, invalid.")] = None,
              file: Annotated[Path | None, typer.Option(help="CSV/JSONL/Parquet with grp, category, correct, invalid.")] = None,
              max_invalid_rate: Annotated[float, typer.Option(help="Leave out groups above this invalid rate (negative: keep all).")] = 0.10,
              reference: Annotated[str | None, typer.Option(help="Reference group for the premium (e.g. en).")] = None,
              resample: Annotated[str, typer.Option(help="Bootstrap unit for the Gini CI: instances (rows within each group), groups, or clusters:<column> (e.g. the source item).")] = "instances",
              boot: Boot = 2000, seed: Seed = 0, fmt: Fmt = "table", db: Db = None) -> None:  # fmt: skip
    """Accuracy by group x category (invalid = wrong), Gini inequity with CI, max-min gaps, reference premium."""
    from jurybench import commands

    _done(
        commands.statistic(
            db,
            "disparity",
            format=fmt,
            sql=sql,
            file=file,
            max_invalid_rate=None if max_invalid_rate < 0 else max_invalid_rate,
            reference=reference,
            boot=boot,
            seed=seed,
            resample=resample,
        )
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
    name: Annotated[str, typer.Argument(help="directional, gap, posthoc, cohens-d, disparity or leaderboard.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The .png or .svg to write.")],
    result_id: Annotated[
        str | None, typer.Option("--result", help="A stored stats_results id (default: the latest of that statistic).")
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level for colouring.")] = 0.05,
    db: Db = None,
) -> None:
    """Plot a recorded statistic (.png/.svg): directional, gap, posthoc (friedman or gap p-values), cohens-d,
    disparity, leaderboard."""
    from jurybench import commands

    _done(commands.plot(db, name=name, output=output, result=result_id, alpha=alpha))
