"""The service itself: liveness, its work at the moment and the rubrics it knows."""

from fastapi import APIRouter, Request

from jurybench import __version__
from jurybench.errors import JurybenchError
from jurybench.service._state import ConfigDep, StoreDep, state_of

router = APIRouter(tags=["service"])


@router.get("/v1/health")
def health() -> dict[str, object]:
    """Liveness (no token needed)."""
    return {"status": "ok", "version": __version__}


@router.get("/v1/status")
def status(request: Request, store: StoreDep, config: ConfigDep) -> dict[str, object]:
    """The server at work: its jobs queued and running, where their calls are made, and how long
    its store's one writer has been busy since the server started (``busy_s`` grows by the
    seconds it was held; the difference of two readings over their interval is the writer's load:
    near 1, jobs wait for the store, and more job workers will not make them faster)."""
    ray = state_of(request).ray
    with store.reading() as cur:
        counts = dict(
            cur.execute(
                "SELECT status, count(*) FROM jobs WHERE status IN ('queued', 'running') GROUP BY status"
            ).fetchall()
        )
    busy, elapsed = store.write_lock.busy()
    return {
        "version": __version__,
        "uptime_s": round(elapsed, 3),
        "jobs": {"queued": counts.get("queued", 0), "running": counts.get("running", 0), "workers": config.workers},
        "executor": {"kind": config.executor, "ray_workers": ray.workers if ray is not None else None},
        "store_writer": {
            "busy_s": round(busy, 3),
            "busy_share": round(busy / elapsed, 4) if elapsed > 0 else 0.0,
            "holds": store.write_lock.holds,
        },
    }


@router.get("/v1/rubrics")
def rubrics() -> list[dict[str, object]]:
    """The rubrics the server knows by name."""
    from jurybench.rubric import load_rubric, rubric_files

    out: list[dict[str, object]] = []
    for name, path in rubric_files():
        try:
            r = load_rubric(path)
        except JurybenchError:  # a broken file is left out here ('jurybench rubrics check' names it)
            continue
        out.append({"name": name, "kind": r.kind, "dimensions": r.dimensions, "hash": r.content_hash})
    return out
