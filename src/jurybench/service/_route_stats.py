"""Statistics: one endpoint per registered statistic (its body derived from its parameters),
and the recorded results."""

from typing import Annotated, Any

from fastapi import APIRouter, Body

from jurybench.errors import NotFound
from jurybench.service._state import Id, Limit, Offset, StoreDep, rows
from jurybench.service._stats import run_statistic, stat_bodies


def router() -> APIRouter:
    """The statistics' routes: made when the app is, so a statistic a plug-in registered by then
    has its endpoint."""
    out = APIRouter(tags=["statistics"])
    for name, model in stat_bodies().items():
        out.post(f"/v1/stats/{name}", name=f"stats_{name}")(_endpoint(name, model))
    out.get("/v1/stats/results")(list_results)
    out.get("/v1/stats/results/{result_id}")(get_result)
    return out


def _endpoint(name: str, model: Any) -> Any:  # a pydantic model made at run time
    def endpoint(body: Annotated[model, Body()], store: StoreDep) -> dict[str, object]:
        return run_statistic(store, name, body)

    endpoint.__doc__ = f"Run the {name} statistic (parameters as in 'jurybench stats {name}'); recorded."
    return endpoint


def list_results(store: StoreDep, limit: Limit = 100, offset: Offset = 0) -> list[dict[str, object]]:
    return rows(
        store,
        "SELECT result_id, name, run_id, params, seed, created_at FROM stats_results "
        "ORDER BY created_at DESC, result_id LIMIT ? OFFSET ?",
        [limit, offset],
    )


def get_result(result_id: Id, store: StoreDep) -> dict[str, object]:
    found = rows(store, "SELECT * FROM stats_results WHERE result_id = ?", [result_id])
    if not found:
        raise NotFound(f"no recorded statistic {result_id!r}.")
    return found[0]
