"""Commands against human labels: agreement, calibration (fit and apply) and jury selection."""

from __future__ import annotations

from jurybench import api, commands
from jurybench.cli._common import (
    app,
    calibrate_app,
    declared_command,
    format_option,
    jury_app,
)

app.command()(
    declared_command(
        api.agreement,
        commands.agreement,
        doc="Human agreement (alpha, Fleiss' kappa, Spearman, quadratic-weighted kappa), the human\n"
        "    ceiling, and each juror and the jury vs humans; for a preference or classification run, the\n"
        "    categorical figures (accuracy, Cohen's kappa, Gwet's AC1, macro precision/recall/F1 against\n"
        "    the humans' plurality; Fleiss' kappa, AC1 and each pair's kappa among the humans).",
        extra=(format_option(),),
    )
)


app.command()(
    declared_command(
        api.align,
        commands.align,
        doc="""Align one juror to the human labels, and prove it held out: rubric variants (k labelled
    subjects shown as demonstrations; the criterion's description rewritten by --optimizer) judged on
    prompt groups held out of what built them; the best is kept as a new rubric version (score
    --rubric NAME@VERSION) only when its held-out gain in absolute error is significant (one-sided,
    Holm over the variants), and the labels it used are recorded so they are never counted again.""",
        extra=(format_option(),),
    )
)


calibrate_app.callback()(
    declared_command(
        api.calibrate,
        commands.calibrate,
        doc="Fit per-criterion juror weights by least squares against the human mean, validated on held-out prompts.",
        extra=(format_option(),),
        group=True,
    )
)


calibrate_app.command("apply")(
    declared_command(
        api.apply_calibration,
        commands.calibrate_apply,
        doc="Write calibrated scores for a run (table calibrated_scores, view calibrated_items).",
    )
)


jury_app.command("select")(
    declared_command(
        api.select_jury,
        commands.jury_select,
        doc="""The cheapest sub-jury that is good enough: every sub-jury's held-out error (against the
    human labels, or the full jury), its cost and latency per subject from the stored calls, the
    Pareto front, and the cheapest shown non-inferior to the full jury within --margin (a
    one-sided test of paired per-row errors along the price path and with Holm over the
    sub-juries; or --max-error, or --budget).""",
        extra=(format_option(),),
    )
)
