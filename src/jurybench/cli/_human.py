"""Commands against human labels: agreement, calibration and the preference report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from jurybench.cli._common import (
    DbOption,
    FormatOption,
    _check_format,
    _connect,
    _console,
    app,
    calibrate_app,
    report_app,
)


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
    from jurybench.api import calibrate as fit

    _check_format(fmt, ("table", "json"))
    fitted = fit(db, run, name=name, criteria=criterion, covariates=covariate, methods=method, group_by=group_by,
                 test_size=test_size, folds=folds, seed=seed, boot=boot, out=out)  # fmt: skip
    artifact, path = fitted.artifact, fitted.path
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
