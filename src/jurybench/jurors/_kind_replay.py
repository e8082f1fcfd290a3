"""The replay juror kind (``replay/<source>``): recorded completions from the store's
``recordings`` table, served for the subject, order and sample they were recorded for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError
from jurybench.jurors._completion import (
    Backend,
    Completion,
    Messages,
    PermanentError,
    Slot,
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


class ReplayBackend(Backend):
    """Serves recorded raw completions (table ``recordings``) for ``replay/<source>``."""

    def __init__(self, spec: JurorSpec, recordings: dict[tuple[str, str, int], tuple[str, str | None]]) -> None:
        self.source = spec.model.split("/", 1)[1]
        self.recordings = recordings

    async def complete(self, messages: Messages, slot: Slot) -> Completion:
        found = self.recordings.get((slot.subject_id, slot.order, slot.sample_index))
        if found is None:
            # The subject, order and sample are in the call row; the reason stays the same
            # for every missing recording so that failures group in the summary.
            raise PermanentError(f"replay/{self.source} has no recording for this subject, order and sample")
        text, finish = found
        return Completion(text=text, finish_reason=finish, latency_ms=0.0)


def make_replay(spec: JurorSpec, rubric: AnyRubric, con: Connection, subject_ids: list[str] | None) -> Backend:
    source = spec.model.split("/", 1)[1]
    rows = con.execute(
        "SELECT subject_id, presented_order, sample_index, response_text, finish_reason "
        "FROM recordings WHERE source = ?",
        [source],
    ).fetchall()
    if not rows:
        known = [r[0] for r in con.execute("SELECT DISTINCT source FROM recordings ORDER BY 1").fetchall()]
        raise JurybenchError(
            f"juror '{spec.model}': no recordings named '{source}' in the store.",
            hint=f"Known sources: {', '.join(known) or 'none (import recordings first)'}.",
        )
    return ReplayBackend(spec, {(r[0], r[1], r[2]): (r[3], r[4]) for r in rows})


KIND = JurorKind(
    "replay",
    make_replay,
    "recorded completions from the recordings table",
    parameters=frozenset({"verdicts", "structured"}),
    offline=True,
    reads_store=True,
    reaskable=False,
)
