"""Read-only SQL over the store, under the server's limits."""

from fastapi import APIRouter

from jurybench.service import _requests as rq
from jurybench.service._state import ConfigDep, StoreDep, plain

router = APIRouter(tags=["sql"])


@router.post("/v1/sql")
def sql(body: rq.SqlIn, store: StoreDep, config: ConfigDep) -> dict[str, object]:
    """One read-only SELECT; the server's time (408), memory and answer-size (413) and row limits
    apply (truncated says so)."""
    limit = min(body.limit or config.sql_max_rows, config.sql_max_rows)
    names, found, truncated = store.query(body.query, limit=limit, timeout_s=config.sql_timeout_s)
    return {"columns": names, "rows": [[plain(v) for v in r] for r in found], "truncated": truncated}
