"""The service itself: liveness and the rubrics it knows."""

from fastapi import APIRouter

from jurybench import __version__
from jurybench.errors import JurybenchError

router = APIRouter(tags=["service"])


@router.get("/v1/health")
def health() -> dict[str, object]:
    """Liveness (no token needed)."""
    return {"status": "ok", "version": __version__}


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
