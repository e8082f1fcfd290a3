"""The store's provider batches seen from outside a run: list them, ask a provider where one
stands, cancel one (``jurybench batches list|status|cancel``)."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

COLUMNS = [
    "batch_id",
    "provider_batch_id",
    "protocol",
    "juror",
    "run_id",
    "round",
    "status",
    "n_requests",
    "n_completed",
    "n_failed",
    "submitted_at",
    "finished_at",
    "collected_at",
    "error",
]


def list_batches(
    con: Connection, run_id: str | None = None, open_only: bool = False
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Every batch (newest first), or a run's, or the open ones (results not yet stored)."""
    where, params = [], []
    if run_id:
        where.append("b.run_id = ?")
        params.append(run_id)
    if open_only:
        where.append("b.collected_at IS NULL")
    sql = (
        "SELECT b.batch_id, b.provider_batch_id, b.protocol, coalesce(j.name, b.juror_key), b.run_id, b.round, "
        "b.status, b.n_requests, b.n_completed, b.n_failed, b.submitted_at, b.finished_at, b.collected_at, b.error "
        "FROM batches b LEFT JOIN jurors j USING (juror_key)"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " ORDER BY b.created_at DESC"
    )
    return COLUMNS, con.execute(sql, params).fetchall()


def _batch(con: Connection, batch_id: str) -> tuple[Any, ...]:
    from jurybench.store import first_row

    row = first_row(
        con,
        "SELECT b.batch_id, b.provider_batch_id, b.protocol, b.api_base, j.model, b.status, b.collected_at "
        "FROM batches b LEFT JOIN jurors j USING (juror_key) WHERE b.batch_id = ? OR b.provider_batch_id = ?",
        [batch_id, batch_id],
    )
    if row is None:
        raise JurybenchError(f"no batch '{batch_id}' in the store.", hint="See 'jurybench batches list'.")
    if row[1] is None:
        raise JurybenchError(
            f"batch '{batch_id}' was never acknowledged by its provider.",
            hint="Run the same score command again: it looks the batch up and sends it if the provider lacks it.",
        )
    return tuple(row)


def _client(row: tuple[Any, ...], key_env: str | None) -> Any:
    from jurybench.jurors import BatchClient

    provider = str(row[4] or row[2]).split("/", 1)[0]
    variable = key_env or f"{provider.upper()}_API_KEY"
    key = os.environ.get(variable)
    if not key and not row[3]:  # a local OpenAI-compatible server may need no key
        raise JurybenchError(f"no API key for batch '{row[0]}'.", hint=f"Set {variable} (or pass --api-key-env VAR).")
    from jurybench.redact import register_secret

    if key:
        register_secret(key)
    return BatchClient(str(row[2]), row[3], key)


def _ask(client: Any, call: Any) -> Any:
    from jurybench.jurors import JurorUnusable, PermanentError, TransientError
    from jurybench.redact import redact

    async def go() -> Any:
        try:
            return await call(client)
        finally:
            await client.close()

    try:
        return asyncio.run(go())
    except JurorUnusable as exc:
        raise JurybenchError(redact(f"{exc}."), hint=f"{exc.advice[:1].upper()}{exc.advice[1:]}.") from None
    except (TransientError, PermanentError) as exc:
        raise JurybenchError(redact(f"{exc}."), hint="Try again later.") from None


def refresh_batch(con: Connection, batch_id: str, key_env: str | None = None) -> dict[str, object]:
    """Where a batch stands at its provider (the store's row is updated; results are stored by
    the run that sent it, when it runs again)."""
    row = _batch(con, batch_id)
    status = _ask(_client(row, key_env), lambda c: c.status(row[1]))
    con.execute(
        "UPDATE batches SET status = ?, n_completed = ?, n_failed = ? WHERE batch_id = ? AND collected_at IS NULL",
        [status.status, status.counts.get("completed", 0), status.counts.get("failed", 0), row[0]],
    )
    return {
        "batch_id": row[0],
        "provider_batch_id": row[1],
        "status": status.status,
        **status.counts,
        "collected": row[6] is not None,
        "error": status.message,
    }


def cancel_batch(con: Connection, batch_id: str, key_env: str | None = None) -> dict[str, object]:
    """Ask the provider to cancel a batch; its unanswered calls are not made (a later run plans
    them again), answers it already has are still stored when the run is run again."""
    row = _batch(con, batch_id)
    if row[6] is not None:
        raise JurybenchError(f"batch '{row[0]}' has ended and its results are stored; nothing to cancel.")
    status = _ask(_client(row, key_env), lambda c: c.cancel(row[1]))
    con.execute("UPDATE batches SET status = ? WHERE batch_id = ?", [status.status, row[0]])
    return {"batch_id": row[0], "provider_batch_id": row[1], "status": status.status, **status.counts}
