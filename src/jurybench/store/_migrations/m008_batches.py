"""Migration 8: provider batches and their requests."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment

# The views this migration changed; their current definitions are in store/_views.py.
VIEWS = ("run_cost",)


def m008_batches(con: Connection) -> None:
    """Provider batches (``score --batch``): what was submitted, for which calls, and where it
    stands, so a killed process's batches are polled again and never submitted twice."""
    con.execute(
        """
        CREATE TABLE batches (
            batch_id VARCHAR PRIMARY KEY,
            protocol VARCHAR NOT NULL,
            provider_batch_id VARCHAR,
            api_base VARCHAR,
            juror_key VARCHAR NOT NULL,
            run_id VARCHAR NOT NULL,
            round INTEGER NOT NULL,
            status VARCHAR NOT NULL,
            n_requests INTEGER NOT NULL,
            n_completed INTEGER NOT NULL DEFAULT 0,
            n_failed INTEGER NOT NULL DEFAULT 0,
            input_file_id VARCHAR,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            submitted_at TIMESTAMP,
            finished_at TIMESTAMP,
            collected_at TIMESTAMP,
            error VARCHAR
        )"""
    )
    con.execute(
        """
        CREATE TABLE batch_requests (
            batch_id VARCHAR NOT NULL,
            call_key VARCHAR NOT NULL,
            messages VARCHAR,
            prior VARCHAR,
            collected BOOLEAN NOT NULL DEFAULT false,
            PRIMARY KEY (batch_id, call_key)
        )"""
    )
    comment(
        con,
        "batches",
        {
            "": "Provider batches sent by score/generate --batch, one row per submission.",
            "batch_id": "jurybench's id for the submission (also in the provider batch's metadata where it has any)",
            "protocol": "openai (files + batches) or anthropic (message batches)",
            "provider_batch_id": "the provider's batch id; NULL while being submitted",
            "round": "0: first requests; 1 and up: re-asks after unusable answers and calls re-planned from "
            "expired or failed batches",
            "status": "submitting, validating, in_progress, finalizing, cancelling, completed, expired, failed, cancelled",
            "collected_at": "when its results were stored; NULL while the batch is open",
        },
    )
    comment(
        con,
        "batch_requests",
        {
            "": "The calls in each batch (custom_id = call_key).",
            "messages": "the conversation sent, for re-asks (NULL: the call's rendered prompt)",
            "prior": "JSON: requests, tokens and cost the call had used before this batch",
            "collected": "its result was stored, or the call moved on to a later batch",
        },
    )
    # What a job paid, as the CLI says it: the known part, and calls whose price is unknown.
    con.execute("ALTER TABLE jobs ADD COLUMN n_cost_unknown INTEGER")
    con.execute("ALTER TABLE jobs ADD COLUMN cost_by_juror VARCHAR")
    comment(
        con,
        "jobs",
        {
            "cost_usd": "what the job paid for calls with a known price (offline jurors cost 0); NULL when no call had one",
            "n_cost_unknown": "answered calls whose price is unknown (litellm's price map does not list the model)",
            "cost_by_juror": "JSON: juror name -> USD",
        },
    )
