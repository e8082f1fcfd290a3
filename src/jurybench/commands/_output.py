"""What commands print: plain lines, tables, plans, statistics, calibrations and run outcomes."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from rich.console import Console


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text + ("\n" if nl else ""))
    stream.flush()


WIDE_ENV = "JURYBENCH_WIDE"


_wide = [False]


def set_wide(on: bool) -> None:
    """``jurybench --wide``: tables as wide as their values, whatever the terminal (each command
    line sets it anew)."""
    _wide[0] = on


def console() -> Console:
    """Where tables go. In a terminal a table fits its width with nothing cut: long text wraps
    between words, short values (numbers, names) stay whole, and a table that still does not fit
    is folded into blocks of columns (commands/_fold.py). Into a pipe or a file, and with
    ``--wide`` (``JURYBENCH_WIDE=1``), a table is as wide as its values, since nobody's terminal
    limits it."""
    from rich.console import Console
    from rich.table import Table

    from jurybench.commands._fold import fold

    class Fitting(Console):
        def print(self, *objects: Any, **kwargs: Any) -> None:
            for shown in objects:
                if isinstance(shown, Table):
                    fit(shown)
                    for part in fold(shown, self.width):
                        super().print(part, **kwargs)
                else:
                    super().print(shown, **kwargs)

    if not _wide[0] and os.environ.get(WIDE_ENV) != "1" and sys.stdout.isatty():
        return Fitting()
    return Fitting(width=100_000, soft_wrap=True)


def fit(table: Any) -> None:
    """A table that wraps rather than cuts: text folds onto more lines."""
    for column in table.columns:
        if column.overflow == "ellipsis":
            column.overflow = "fold"


def check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise JurybenchError(f"--format {fmt!r} is not valid.", hint=f"Valid: {', '.join(allowed)}.")


def echo_plain(rows: list[list[str]], left: int) -> None:
    """A plain text table, whole values (the first ``left`` columns left-aligned); wider than
    the terminal, it wraps its longer cells to fit."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = console()
    if sum(widths) + 2 * (len(widths) - 1) > out.width:
        from rich.table import Table

        table = Table(box=None, pad_edge=False, header_style="", padding=(0, 1))
        for i, name in enumerate(rows[0]):
            table.add_column(name, justify="left" if i < left else "right")
        for row in rows[1:]:
            table.add_row(*row)
        out.print(table)
        return
    for row in rows:
        echo(
            "  ".join(
                cell.ljust(w) if i < left else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )


def print_plan(result: Any) -> None:
    """The cost plan as a plain table: per juror and in total; an unknown price says so."""
    from jurybench.jurors import usd

    def money(value: float | None) -> str:
        return "unknown" if value is None else usd(value)

    rows = [["juror", "model", "calls", "cached", "input tokens", "output tokens (expected)", "cost", "batch cost"]]
    for p in result.plan:
        rows.append(
            [
                p.juror,
                p.model,
                str(p.calls),
                str(p.cached),
                f"{p.input_tokens:,}",
                f"{p.output_tokens:,.0f} ({p.output_basis})",
                money(p.cost_usd),
                money(p.cost_batch_usd),
            ]
        )

    def total(values: list[float | None]) -> float | None:
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    plans = result.plan
    rows.append(
        [
            "total",
            "",
            str(sum(p.calls for p in plans)),
            str(sum(p.cached for p in plans)),
            f"{sum(p.input_tokens for p in plans):,}",
            f"{sum(p.output_tokens for p in plans):,.0f}",
            money(total([p.cost_usd for p in plans])),
            money(total([p.cost_batch_usd for p in plans])),
        ]
    )
    echo_plain(rows, left=2)
    for p in plans:
        if p.calls:
            line = (
                f"{p.juror}: prompt tokens a call {p.prompt_tokens_min:,} min, {p.prompt_tokens_median:,.0f} median, "
                f"{p.prompt_tokens_max:,} max"
            )
            if p.n_cut:
                line += (
                    f"; {p.n_cut} subject{'s' if p.n_cut != 1 else ''} cut to fit its context of "
                    f"{p.context_tokens:,} tokens (docs/conversations.md; --no-elide refuses instead)"
                )
            echo(line)
    unknown = [p.juror for p in plans if p.cost_usd is None]
    if unknown:
        echo(
            f"price unknown for {', '.join(unknown)}: litellm's price map does not list the model "
            "(the total is unknown, not 0)."
        )
    for p in plans:
        if getattr(p, "cache_saving_usd", None) is not None and p.calls > 1:
            if p.cache_saving_usd:
                echo(
                    f"prompt cache: {p.juror}'s calls share their first ~{p.shared_prefix_tokens:,} tokens; at the "
                    f"provider's cached rate that saves about {usd(p.cache_saving_usd)} of the cost above."
                )
            else:
                echo(
                    f"prompt cache: {p.juror}'s calls share only their first ~{p.shared_prefix_tokens:,} tokens, "
                    "below the 1,024 that providers cache: no saving."
                )
    local = [p.juror for p in plans if getattr(p, "local", False)]
    if local:
        echo(
            f"priced at $0: {', '.join(local)} (a server on this machine, api_base on loopback: the cost is your "
            "own hardware and time)."
        )
    echo("plan only: nothing was called and no run was written.")


def run_outcome(result: Any) -> int:
    """The exit code of a run, with the reasons on stderr: 3 when calls ended in error
    (re-running retries them), 4 when the budget stopped it (a higher --max-cost resumes it)."""
    from jurybench.engine import EXIT_BUDGET, EXIT_CALL_ERRORS
    from jurybench.jurors import usd

    if result.status == "stopped_budget":
        left = result.n_tasks - result.n_cached - result.n_called
        echo(
            f"budget reached: the run has spent {usd(result.budget.spent)} of {usd(result.budget.max_cost)}; "
            f"{left} calls were not made (none could start without the risk of passing it). Run the same command "
            "with a higher --max-cost to go on.",
            err=True,
        )
        return EXIT_BUDGET
    for note in result.notes:
        echo(f"note: {note}", err=True)
    report = result.error_report()
    for line in report:
        echo(line, err=True)
    return EXIT_CALL_ERRORS if report else 0


def print_stat(frame: Any, fmt: str) -> None:
    """A recorded statistic (a DataFrame from jurybench.stats) as a table, JSON or CSV."""
    from jurybench.stats import no_valid_answers_note
    from jurybench.stats.functions import flatten
    from jurybench.store import rich_table, to_csv

    attrs = frame.attrs
    name, run_id, result = attrs["statistic"], attrs["run"], attrs["result"]
    if fmt == "json":
        echo(
            json.dumps(
                {"result_id": attrs["result_id"], "name": name, "params": attrs["params"], "result": result},
                indent=2,
                default=str,
            )
        )
        return
    columns, rows = flatten(name, result)
    silent = no_valid_answers_note(result)
    warnings = [f"warning: {w}" for w in result.get("warnings", [])]  # what a statistic says of its own figures
    if fmt == "csv":  # the data alone on stdout; the notes beside it, on stderr
        echo(to_csv(columns, [tuple(r) for r in rows]), nl=False)
        if silent:
            echo(f"note: {silent}", err=True)
        for line in warnings:
            echo(line, err=True)
        return
    console().print(rich_table(columns, [tuple(r) for r in rows], title=f"{name} ({run_id or 'query'})"))
    jury = result.get("jury")
    if jury:
        present = jury.get("mean_jurors_present")
        echo(
            f"{result.get('level', 'jury')} level; jury rule {jury['aggregation']}, quorum {jury['quorum']}: "
            f"{jury['n_jurors_expected']} jurors expected, {present if present is None else round(present, 2)} present "
            f"per subject on average, {jury['subjects_below_quorum']} of {jury['n_subjects']} subjects below quorum"
        )
    if silent:
        echo(silent)
    for line in result.get("readings", []):  # what the figures say, in words (stats bias)
        echo(line)
    for line in result.get("notes", []):
        echo(f"note: {line}")
    for line in warnings:
        echo(line)
    echo(f"recorded as stats_results.result_id = {attrs['result_id']}")


def print_stopping(stopping: dict[str, Any]) -> None:
    """What sequential judging did: each look, and why it stopped."""
    for k, look in enumerate(stopping["looks"], start=1):
        head = f"look {k}: {look['judged']} of {stopping['subjects_available']} judged, "
        if stopping["kind"] == "gap_excludes":
            echo(f"{head}gap {look['gap']:.3f} [{look['ci_low']:.3f}, {look['ci_high']:.3f}]")
        elif stopping["kind"] == "separated":
            ranks = "; ".join(
                f"{g['group']} {g['mean']:.3f} [{g['ci_low']:.3f}, {g['ci_high']:.3f}]" for g in look["groups"]
            )
            echo(f"{head}{stopping['dimension']} by model: {ranks}{' (separated)' if look['separated'] else ''}")
        else:
            echo(
                f"{head}{stopping['dimension']} mean {look['mean']:.3f} [{look['ci_low']:.3f}, {look['ci_high']:.3f}] "
                f"(width {look['width']:.3f})"
            )
    why = {"met": f"stopped: {stopping['rule']} met", "exhausted": f"every subject judged; {stopping['rule']} not met"}
    echo(
        why.get(stopping["stopped"], f"stopped: the run was {stopping['stopped']}")
        + f" ({1 - stopping['alpha']:.0%} anytime-valid interval; recorded in runs.stopping)"
    )


def one_annotator(n: int) -> str:
    """What the humans' line says with fewer than two annotators: inter-rater figures (alpha,
    kappa, pairwise correlations) compare annotators, so they need two; the jurors' figures
    against the labels below still stand."""
    return (
        f"{n} annotator{'' if n == 1 else 's'}: inter-rater figures (Krippendorff's alpha, kappa, pairwise "
        "agreement) need two annotators; each juror against the labels is below"
    )


def print_selection(selection: Any) -> None:
    """A jury selection: the Pareto front (error vs cost), the full jury and the chosen one."""
    from jurybench.store import rich_table

    def money(value: float | None) -> str:
        return "unknown" if value is None else f"${value:.6g}"

    def row(c: Any, mark: str) -> tuple[Any, ...]:
        latency = "unknown" if c.latency_ms is None else f"{c.latency_ms:.0f}"
        return (
            mark,
            ", ".join(c.jurors),
            round(c.error, 4),
            money(c.cost_per_subject),
            latency,
            "full" if c is selection.full else f"{c.mse_minus_full:+.4f}",
            "" if c is selection.full else f"{c.upper:+.4f}",
            "full" if c is selection.full else (f"yes ({c.shown_by})" if c.no_worse_than_full else "no"),
        )

    shown = [
        row(c, "chosen" if c is selection.chosen else ("full" if c is selection.full else "front"))
        for c in selection.pareto
    ]
    for extra, mark in ((selection.full, "full"), (selection.chosen, "chosen")):
        if not extra.pareto:
            shown.append(row(extra, mark))
    title = (
        f"jury selection on {selection.run}: {selection.kind}, {selection.target} target, {selection.method}, "
        f"{selection.n_rows} rows, {selection.folds} folds"
    )
    console().print(
        rich_table(
            [
                "",
                "jurors",
                "held_out_rmse",
                "cost_per_subject",
                "latency_ms",
                "mse_minus_full",
                f"adjusted_upper (<= {selection.margin:.4g}?)",
                "non_inferior",
            ],
            shown,
            title=title,
        )
    )
    share, full_cost = selection.saving(), selection.full.cost_per_subject
    cost = (
        f"{share:.1%} of the full jury's cost"
        if share is not None
        else "no juror costs anything"
        if full_cost == 0
        else "its cost is unknown"
    )
    echo(
        f"chosen: {', '.join(selection.chosen.jurors)} ({selection.rule}); "
        + cost
        + ("" if selection.exhaustive else f"; {len(selection.candidates)} sub-juries (a greedy path beyond 10 jurors)")
    )
    echo(
        f"non_inferior: the adjusted upper bound of the MSE difference (one-sided; {selection.alpha:.0%} split "
        f"between the price path and Holm) is at most the margin {selection.margin:.4g}"
    )
    if selection.without_valid_answers:
        echo(
            f"in no sub-jury: {', '.join(selection.without_valid_answers)} (no valid answers: no valid score on "
            "any of the pilot's rows)"
        )


def print_calibration(artifact: dict[str, Any]) -> None:
    from rich.table import Table

    from jurybench.calibration import MIN_TEST_ITEMS

    out = console()
    labels = {j["key"]: j.get("label", j["name"]) for j in artifact["jurors"]}

    def feature_label(feature: str) -> str:
        crit, _, key = feature.rpartition(":")
        return f"{crit}:{labels.get(key, key)}" if crit else labels.get(feature, feature)

    for criterion, spec in artifact["criteria"].items():
        report = spec["report"]
        if artifact["kind"] == "preference":
            out.print(f"[bold]preference[/bold]: held-out accuracy over {report['n_test']} pairs")
            for who, acc in report["held_out_accuracy"].items():
                out.print(f"  {who}: {acc:.3f}")
            out.print(f"  weights: {', '.join(f'{feature_label(k)} {v:.3f}' for k, v in spec['weights'].items())}")
            continue
        table = Table(
            title=f"{criterion}: {report['n_train']} train / {report['n_test']} test items, "
            f"{report['n_groups']} groups; winner {report['winner']} (the simplest that a paired t-test "
            "over the folds does not find worse than the lowest CV RMSE)"
        )
        for col in ("model", "test RMSE", "MAE", "R²", "pearson", "spearman", "kendall", "CV RMSE (train)"):
            table.add_column(col)
        # Figures on a few held-out items are rough: no more digits than they can carry.
        d = 2 if report["n_test"] < MIN_TEST_ITEMS else 3
        for label, entry in [
            *(("calibrated " + m, v) for m, v in report["variants"].items()),
            *(("rescaled " + b, v) for b, v in report["baselines"].items()),
        ]:
            t = entry["test"]
            table.add_row(
                label,
                *(f"{t[k]:.{d}f}" for k in ("rmse", "mae", "r2", "pearson", "spearman", "kendall")),
                f"{entry['cv_rmse_mean']:.{d}f}",
            )
        out.print(table)
        for line in report.get("warnings") or []:
            out.print(f"  [bold]warning[/bold]: {line}")
        weights = ", ".join(
            f"{feature_label(k)} {v:+.3f}"
            for k, v in spec["weights"].items()
            if v != 0  # features a variant does not use (the mean's other criteria) are left out
        )
        ls = report.get("least_squares") or {}
        if ls.get("weights"):
            ci = ls["ci"]
            shown = ", ".join(
                f"{feature_label(k)} {v:+.3f} [{ci[k]['low']:+.3f}, {ci[k]['high']:+.3f}]"
                for k, v in ls["weights"].items()
            )
            out.print(
                f"  weights to report (least squares, 95 % intervals by the leave-one-group-out jackknife over "
                f"{ls['n_groups']} groups): {shown}; intercept {ls['intercept']:+.3f}"
            )
        elif ls.get("note"):
            out.print(f"  weights to report: none ({ls['note']})")
        out.print(
            f"  weights applied ({spec['method']}, chosen to predict; no interval): {weights}; "
            f"intercept {spec['intercept']:+.3f}"
        )
        if report.get("jurors_without_scores"):
            out.print(
                f"  no valid score on the labelled items: {', '.join(report['jurors_without_scores'])} "
                "(imputed with a constant: its weights mean nothing)"
            )
        out.print("")


def provenance_text(counts: dict[str, int]) -> str:
    """How the labels were made, in words: blind, with the jury shown, imported (not known)."""
    return (
        f"{counts.get('blind', 0)} blind, {counts.get('saw_jury', 0)} made with the jury shown, "
        f"{counts.get('unknown', 0)} imported (not known)"
    )


def _estimates(value: object) -> object:
    """A JSON report (``annotations.to_jsonable``) with its estimates as :class:`Estimate` again,
    printed as '0.812 [0.700, 0.900]'; a figure with no value (None in JSON) is nan, as it was."""
    from jurybench.annotations import Estimate

    if isinstance(value, dict):
        if set(value) == {"value", "ci_low", "ci_high"}:
            return Estimate(*(math.nan if value[k] is None else value[k] for k in ("value", "ci_low", "ci_high")))
        return {k: _estimates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_estimates(v) for v in value]
    return value


def _fixed(value: object, spec: str = ".3f") -> str:
    return format(math.nan if value is None else value, spec)


def print_agreement(report: list[dict[str, object]]) -> None:
    """An agreement report (``jurybench.agreement``'s ``attrs["report"]``) as tables."""
    from rich.table import Table

    from jurybench.stats import silent_label

    out = console()
    blocks = cast("list[dict[str, Any]]", _estimates(report))
    for block in blocks:
        if block.get("label_provenance"):
            out.print(f"[bold]{block['criterion']}[/bold] labels: {provenance_text(block['label_provenance'])}")
        if block.get("label_uses"):
            out.print(f"[bold]{block['criterion']}[/bold]: {block['label_uses']}", markup=True)
        if block.get("kind") == "categorical":
            _print_categorical(out, block)
            continue
        h = block["humans"]
        out.print(
            f"[bold]{block['criterion']}[/bold]: {block['n_items']} items, "
            + (
                f"{block['n_annotators']} annotators; alpha interval {h['alpha_interval']}, ordinal "
                f"{h['alpha_ordinal']}, Fleiss kappa {h['fleiss_kappa']}, mean pairwise Spearman "
                f"{h['mean_pairwise_spearman']}, mean pairwise quadratic-weighted kappa "
                f"{h['mean_pairwise_quadratic_kappa']}"
                if block["n_annotators"] > 1 and h is not None
                else one_annotator(block["n_annotators"])
                if h is not None
                else f"{block['n_annotators']} annotators"
            )
        )
        for line in block.get("warnings") or []:
            out.print(f"[bold]warning[/bold]: {line}")
        table = Table(show_lines=False)
        for col in (
            "vs human mean",
            "pearson [95% CI]",
            "spearman",
            "kendall",
            "MAE",
            "exact",
            "within 1",
            "QW kappa",
            "jury - juror pearson [95% CI]",
        ):
            table.add_column(col)
        for row in [*block["jurors"], block["jury"]]:
            diff = row.get("jury_minus_juror_pearson")
            if row.get("no_valid_answers"):
                table.add_row(silent_label(row["juror"], bool(row.get("no_valid_answers"))), *["-"] * 7, "")
                continue
            table.add_row(
                row["juror"],
                str(row["pearson_ci"]),
                *(_fixed(row[k]) for k in ("spearman", "kendall", "mae", "exact", "within_one", "quadratic_kappa")),
                str(diff) if diff else "",
            )
        ceiling = block["human_ceiling"]["mean"]
        figures = ("pearson", "spearman", "kendall", "mae", "exact", "within_one", "quadratic_kappa")
        table.add_row(
            "human ceiling (one vs rest)"
            if ceiling
            else "human ceiling (needs two annotators)"
            if block["n_annotators"] < 2
            else "human ceiling (too few items labelled twice)",
            *(_fixed(ceiling[k]) if ceiling else "-" for k in figures),
            "",
        )
        out.print(table)
        rule = block["jury_rule"]
        out.print(
            f"jury: {rule['aggregation']}, quorum {rule['quorum']}; jurors expected {rule['n_jurors_expected']}, "
            f"present {_fixed(rule['mean_jurors_present'], '.2f')} per item on average; {rule['items_below_quorum']} items below quorum"
        )
        verdict = "yes" if block["jury_beats_best_juror"] else "not significantly"
        out.print(f"does the jury beat its best juror ({block['best_juror']}) on Pearson? {verdict}\n")


def number_or_dash(value: object) -> str:
    return "-" if value is None or (isinstance(value, float) and value != value) else f"{value:.3f}"


def _print_categorical(out: Any, block: dict[str, Any]) -> None:
    """A preference or classification run's agreement: humans among themselves, then each rater
    against the human plurality (accuracy, Cohen's kappa, per-class F1)."""
    from rich.table import Table

    from jurybench.stats import silent_label

    h = block["humans"]
    out.print(
        f"[bold]{block['criterion']}[/bold]: {block['n_units']} labelled, "
        + (
            f"{block['n_annotators']} annotators; Fleiss kappa {h['fleiss_kappa']}, Gwet AC1 {h['gwet_ac1']}, "
            f"mean pairwise Cohen kappa {h['pairwise_cohen_kappa']}"
            if block["n_annotators"] > 1
            else one_annotator(block["n_annotators"])
        )
        + f"; human labels by {block['majority_rule']}: "
        + ", ".join(f"{k} {v}" for k, v in sorted(block["human_labels"].items()))
    )
    pairs = h.get("pairs") or []
    if pairs:
        out.print(
            "Cohen kappa of each pair of annotators: "
            + "; ".join(
                f"{a} & {b} {'-' if k is None or k != k else f'{k:.3f}'} (n {n})"
                for (a, b), n, k in ((p["annotators"], p["n"], p["cohen_kappa"]) for p in pairs)
            )
        )
    votes = h.get("vote_agreement") or {}
    if votes.get("n"):
        without = (
            f", {number_or_dash(votes['agreement_without_ties'])} without ties"
            if "agreement_without_ties" in votes
            else ""
        )
        out.print(
            f"two annotators' votes on a unit agree {number_or_dash(votes['agreement'])}{without} "
            f"({votes['n']} pairs of votes); 'votes agree' below: the rater against every human vote (MT-Bench's agreement)"
        )
    policy = {
        "drop": "left out (counted as no verdict)",
        "tie": "counted as ties",
        "wrong": "counted as wrong verdicts",
    }[block["invalid_policy"]]
    out.print(f"a juror's unusable answers (invalid, refusals): {policy} (--invalid {block['invalid_policy']})")
    table = Table(show_lines=False)
    labels = block["labels"]
    for col in (
        "vs human plurality",
        "n",
        "accuracy",
        "Cohen kappa [95% CI]",
        "Gwet AC1",
        "macro P",
        "macro R",
        "macro F1",
        *(f"F1 {lab}" for lab in labels),
        "votes agree",
        "unusable",
        "no verdict",
    ):
        table.add_column(col)

    def number(value: object) -> str:
        return "-" if value is None or (isinstance(value, float) and value != value) else f"{value:.3f}"

    for row in [*block["jurors"], block["jury"]]:
        table.add_row(
            silent_label(row["juror"], bool(row.get("no_valid_answers"))),
            str(row["n"]),
            number(row["accuracy"]),
            "-" if row.get("no_valid_answers") or not row["n"] else str(row["cohen_kappa"]),
            number(row["gwet_ac1"]),
            number(row["macro_precision"]),
            number(row["macro_recall"]),
            number(row["macro_f1"]),
            *(number(row["per_class"][lab]["f1"]) for lab in labels),
            number(row["vote_agreement"])
            + (
                f" ({number(row['vote_agreement_without_ties'])} w/o ties)"
                if "vote_agreement_without_ties" in row
                else ""
            ),
            str(row["n_unusable"]),
            str(row["n_without_verdict"]),
        )
    out.print(table)


def _one_order_rows(report: Any) -> tuple[list[str], list[list[str]]]:
    from jurybench.stats import silent_label

    columns = ["juror", "correct", "correct AB (shown)", "correct BA (shown)", "kappa AB/BA", "no verdict AB/BA"]

    def share(hit: int, n: int) -> str:
        return f"{hit}/{n} ({100 * hit / n:.1f}%)" if n else "–"

    rows = []
    for row in [*report.jurors, report.jury]:
        c = row.counts
        kappa = "/".join(f"{row.kappa[k]:.3f}" if k in row.kappa else "–" for k in ("kappa_ab", "kappa_ba"))
        rows.append(
            [
                silent_label(row.juror, getattr(row, "no_valid_answers", False)),
                share(c.get("correct", 0), report.n_pairs),
                share(c.get("correct_ab", 0), c.get("shown_ab", 0)),
                share(c.get("correct_ba", 0), c.get("shown_ba", 0)),
                kappa,
                f"{c.get('invalid_ab', 0)}/{c.get('invalid_ba', 0)}",
            ]
        )
    return columns, rows


def preference_rows(report: Any) -> tuple[list[str], list[list[str]]]:
    """The preference report's table: one header per value, in the same order. A run shown one
    order per pair gets the orders that exist: each order's correct over the pairs shown in it,
    and no both-order figures (position bias cannot be measured there)."""
    from jurybench.stats import silent_label

    if getattr(report, "one_order", False):
        return _one_order_rows(report)
    columns = [
        "juror",
        "correct AB",
        "correct BA",
        "both",
        "consistent",
        "consistent (valid)",
        "kappa AB/BA",
        "no verdict AB/BA",
        "jury ties AB/BA",
    ]

    def cell(counts: dict[str, int], key: str) -> str:
        n = report.n_pairs or 1
        return f"{counts.get(key, 0)} ({100 * counts.get(key, 0) / n:.1f}%)"

    rows = []
    for row in [*report.jurors, report.jury]:
        c = row.counts
        rows.append(
            [
                silent_label(row.juror, getattr(row, "no_valid_answers", False)),
                cell(c, "correct_ab"),
                cell(c, "correct_ba"),
                cell(c, "both_correct"),
                cell(c, "consistent"),
                cell(c, "consistent_valid"),
                f"{row.kappa.get('kappa_ab', float('nan')):.3f}/{row.kappa.get('kappa_ba', float('nan')):.3f}",
                f"{c.get('invalid_ab', 0)}/{c.get('invalid_ba', 0)}",
                f"{c.get('tie_ab', 0)}/{c.get('tie_ba', 0)}" if row is report.jury else "",
            ]
        )
    return columns, rows


def print_alignment(result: Any) -> None:
    """An alignment (``jurybench.align``): each variant's held-out absolute error and gain over
    the original with 95 % intervals, its one-sided p and Holm level, and what was kept."""
    from rich.table import Table

    from jurybench.jurors import usd

    d = result.as_dict()
    out = console()
    planned = d["status"] == "planned"
    echo(
        f"align run {d['run_id']}, juror {d['juror']}, criterion {d['criterion']}: {d['n_labelled']} labelled "
        f"subjects in {d['n_groups']} prompt groups, {d['folds']} folds over the groups"
        + (
            ""
            if planned
            else f"; one-sided test of the held-out gain at alpha {d['alpha']:g}, Holm over the variants "
            "(intervals: two-sided 95 %)"
        )
    )

    def figure(f: dict[str, float] | None) -> str:
        return "-" if f is None else f"{f['value']:.3f} [{f['low']:.3f}, {f['high']:.3f}]"

    table = Table(box=None, header_style="bold")
    if planned:
        for column in ("variant", "calls", "cost"):
            table.add_column(column)
        for v in d["variants"]:
            table.add_row(v["name"], str(v["calls"]), "unknown" if v["cost_usd"] is None else usd(v["cost_usd"]))
        table.add_row("original", "0", usd(0.0) + " (the run's own answers)")
    else:
        for column in (
            "variant",
            "held-out MAE" if d["measure"] == "mae" else "held-out error rate",
            "gain over original",
            "p (one-sided)",
            "Holm level",
            "better",
            "n",
            "calls",
            "kept",
        ):
            table.add_column(column)
        o = d["original"]
        table.add_row("original", figure(o["mae"]), "", "", "", "", str(o["n"]), "0", "")
        for v in d["variants"]:
            p = "-" if v["p"] is None else f"{v['p']:.2g}"
            level = "-" if v["holm_level"] is None else f"{v['holm_level']:.3g}"
            table.add_row(
                v["name"],
                figure(v["mae"]),
                figure(v["gain"]),
                p,
                level,
                "yes" if v["better"] else "no",
                str(v["n"]),
                str(v["calls"]),
                "yes" if v["kept"] else "no",
            )
    out.print(table)
    for v in d["variants"]:
        for note in v["notes"]:
            echo(f"note ({v['name']}): {note}")
    for note in d["notes"]:
        echo(f"note: {note}")
    cost = d["cost_usd"]
    spent = "unknown (a price is not known)" if cost is None else usd(cost)
    echo(f"{'planned cost' if planned else 'spent'}: {spent}")
    if planned:
        echo("nothing was called (--plan)")
    elif d["aligned_rubric"]:
        r = d["aligned_rubric"]
        echo(
            f"kept {d['chosen']}: rubric {r['name']}@{r['version']} (hash {r['hash'][:12]}), built from all "
            f"{d['n_labelled']} labelled subjects; judge with: jurybench score --rubric {r['name']}@{r['version']} ..."
        )
        echo(
            f"its labels are recorded (label_uses, alignment {d['alignment_id']}): agreement, calibrate and stats ppi on "
            "runs judged with it leave them out; measure it on subjects labelled afresh"
        )
    else:
        echo("no improvement shown: nothing was kept and the rubric is unchanged")


def output_file(path: Path | str, option: str) -> Path:
    """A file a command will write (``--junit``, ``--out``, ``--output``), checked before
    anything is computed or recorded: its folder is made when missing; a path that is a folder,
    or a folder that cannot be made or written, is refused in one line (exit 2)."""
    target = Path(path)
    if target.is_dir():
        raise JurybenchError(
            f"{option} {target}: is a folder, not a file.", hint=f"Give a file in it, e.g. {target / 'report.xml'}."
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JurybenchError(f"{option} {target}: its folder cannot be made ({exc.strerror or exc}).") from None
    if not os.access(target.parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise JurybenchError(f"{option} {target}: cannot be written here (no permission).")
    return target


def junit_xml(result: Any) -> str:
    """A check (``jurybench.check``) as JUnit XML, the test report CI systems read: one test case
    per criterion (the run its class), failed with the check's reason when the criterion missed
    its threshold, dropped against the baseline or drifted; the figures as properties."""
    import math
    from xml.etree import ElementTree as ET

    rows = result.table.to_dict(orient="records")
    failed = [r for r in rows if not r["ok"]]
    suite = ET.Element(
        "testsuite",
        name=f"jurybench check {result.run}",
        tests=str(len(rows)),
        failures=str(len(failed)),
        errors="0",
        skipped="0",
    )
    for row in rows:
        case = ET.SubElement(suite, "testcase", classname=f"jurybench.check.{result.run}", name=str(row["criterion"]))
        properties = ET.SubElement(case, "properties")
        for key, value in row.items():
            if key in ("criterion", "ok") or value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            ET.SubElement(properties, "property", name=str(key), value=str(value))
        if not row["ok"]:
            said = [f for f in result.failures if f.startswith(f"{row['criterion']}")] or result.failures
            failure = ET.SubElement(case, "failure", message="; ".join(said) or "failed", type="jurybench.check")
            failure.text = "\n".join(result.lines())
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode")
