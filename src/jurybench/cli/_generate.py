"""jurybench generate: responses under paired treatments, to judge (its options:
``jurybench.generate``'s declaration)."""

from __future__ import annotations

from jurybench import api, commands
from jurybench.cli._common import app, declared_command

app.command("generate")(
    declared_command(
        api.generate,
        commands.generate,
        doc="""Generate responses: prompts x treatment arms x models x samples, stored as items with their
    treatment, linked as pairs across arms; refusals detected and reported per model and arm.

    Uses the judge engine (cache, resume, retries, rate limits, cost); re-running makes no call
    for responses already stored.
    """,
    )
)
