"""Migration 6: the service's jobs."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m006_service(con: Connection) -> None:
    """Jobs submitted to the HTTP service (jurybench serve)."""
    con.execute(
        """
        CREATE TABLE jobs (
            job_id VARCHAR PRIMARY KEY,
            status VARCHAR NOT NULL,
            request JSON NOT NULL,
            run_id VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            started_at TIMESTAMP,
            finished_at TIMESTAMP,
            error VARCHAR,
            n_tasks INTEGER,
            n_done INTEGER,
            n_invalid INTEGER,
            n_refusal INTEGER,
            n_failed INTEGER,
            cost_usd DOUBLE
        )"""
    )
    comment(
        con,
        "jobs",
        {
            "": "Scoring jobs submitted over HTTP; each runs as one run (run_id) of the judge engine.",
            "status": "queued, running, finished, finished_with_errors, failed, cancelled",
            "request": "the job as submitted, with secrets (api_key) removed",
            "n_done": "calls answered or reused so far (valid, invalid or refusal)",
            "n_failed": "calls that ended in error or were not made (their juror was unusable)",
        },
    )
