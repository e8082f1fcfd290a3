"""Migration 19: where a run's calls were made (``score --executor``): in this process, or over
a Ray cluster's workers (issue 55). Nothing else about a run made on Ray differs in the store."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m019_run_executor(con: Connection) -> None:
    con.execute("ALTER TABLE runs ADD COLUMN executor VARCHAR")
    con.execute("ALTER TABLE runs ADD COLUMN workers INTEGER")
    comment(
        con,
        "runs",
        {
            "executor": "where the run's calls were last made: local (this process's event loop) or ray (spread over "
            "a Ray cluster's workers; planned, de-duplicated and written by the driver); NULL for runs made before "
            "it was recorded",
            "workers": "--executor ray: the Ray workers the calls were spread over (NULL for a local run)",
        },
    )
