"""jurybench score: judge items or pairs with a jury (its options: ``jurybench.score``'s declaration)."""

from __future__ import annotations

from jurybench import api, commands
from jurybench.cli._common import app, declared_command

app.command("score")(
    declared_command(
        api.score,
        commands.score,
        doc="""Judge items (pointwise) or pairs in both orders (pairwise) with a jury.

    Judgments already stored for the same rubric, juror, subject, order and
    sample are reused, so re-running a finished or interrupted run makes no
    call for them.
    """,
    )
)
