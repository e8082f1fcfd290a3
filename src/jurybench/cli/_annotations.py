"""What people and other judges said, imported: judgments made elsewhere, human annotations (imported or simulated) and human baselines."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated

import typer

from jurybench import api, commands
from jurybench.cli._common import (
    DbOption,
    _done,
    anchors_app,
    annotations_app,
    command_group,
    declared_command,
    judgments_app,
)
from jurybench.errors import JurybenchError


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


judgments_app.command("import")(
    declared_command(
        api.import_judgments,
        commands.judgments_import,
        doc="""Import judgments made elsewhere as a run's calls and judgments, as if jurybench had made them.

    Rows: item_id, criterion, score (pointwise); pair_id, criterion, score (pairwise, -k..k);
    pair_id and verdict (A, B, tie) or p_b (the probability item_b is preferred) for
    preference rubrics; optionally shown (AB or BA), sample, raw, reason, status (ok,
    invalid, refusal), cost_usd, model. All rows are checked before any is written;
    importing the same file again changes nothing.

    A file as released (AlpacaEval's annotations.json, MT-Bench's judgments, an Inspect log,
    ...) brings its items, pairs, judges and human labels in one go: docs/formats.md.
    """,
    )
)


@judgments_app.command("formats")
def judgments_formats() -> None:
    """The released judgment formats 'judgments import --format' reads, with their rubrics and options."""
    from jurybench import commands

    _done(commands.judgments_formats())


annotations_app.command("import")(
    declared_command(
        api.import_annotations,
        commands.annotations_import,
        doc="""Import human labels: pointwise scores, A/B/tie preferences or pairwise category scores.

    Validated against the rubric's criteria and scales, all or nothing; importing the
    same file again changes nothing.
    """,
    )
)


annotations_app.command("sample")(
    declared_command(
        api.sample_labels,
        commands.annotations_sample,
        doc="""Draw at random the subjects people should label, recording each one's chance of being
    drawn: what 'stats ppi' needs for its bias-corrected estimate to be valid.""",
        extra=(
            inspect.Parameter(
                "out",
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=Annotated[Path | None, typer.Option(help="Write the drawn subjects' ids to this CSV.")],
            ),
        ),
    )
)


anchors_app.command("add")(
    declared_command(
        api.add_anchors,
        commands.anchors_add,
        doc="Fix subjects of a run, drawn at random, as anchors that later runs judge again (score --anchors NAME).",
    )
)


annotations_app.command("simulate")(
    declared_command(
        api.simulate_annotations,
        commands.annotations_simulate,
        doc="Offline studies: human labels drawn from the simulated jurors' known truth (annotators sim-human-N).",
    )
)


baselines_app = command_group("baselines", "Human reference values (effect sizes, means) used by the statistics.")


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
