"""The import juror kind (``import/<name>``): judgments made elsewhere and imported as a run
(``jurybench judgments import``); it names their judge and cannot be asked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError
from jurybench.jurors._completion import (
    Backend,
)
from jurybench.jurors._kinds import JurorKind
from jurybench.jurors._spec import (
    JurorSpec,
)
from jurybench.rubric import (
    AnyRubric,
)

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.rubric import AnyRubric


def make_imported(spec: JurorSpec, rubric: AnyRubric, con: Connection, subject_ids: list[str] | None) -> Backend:
    """Imported judgments have no transport: they were made elsewhere."""
    raise JurybenchError(
        f"juror '{spec.model}' cannot be asked: its judgments were made elsewhere and imported.",
        hint="Import more with 'jurybench judgments import', or replay them through a new rubric with "
        "--as-recording SOURCE and a replay/SOURCE juror.",
    )


KIND = JurorKind(
    "import",
    make_imported,
    "judgments made elsewhere (jurybench judgments import)",
    parameters=frozenset({"scores", "source", "prompt_variants", "judge_model"}),
    offline=True,
    reads_store=True,
    reaskable=False,
)
