"""Against human labels: agreement; calibration (fit, list and apply the files); jury selection."""

from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam

from jurybench.errors import JurybenchError, NotFound
from jurybench.service import _requests as rq
from jurybench.service._state import ConfigDep, StoreDep

router = APIRouter(tags=["calibration"])


@router.post("/v1/calibrations", status_code=201)
def fit(body: rq.CalibrationIn, store: StoreDep, config: ConfigDep) -> dict[str, object]:
    """Fit juror weights on a run with human labels; returns the artifact with its metrics."""
    from jurybench import api
    from jurybench.stats import jsonable

    request = body.model_dump()
    with store.writing() as cur:
        fitted = api.calibrate(cur, **request, out=config.calibrations)
    return {"name": request["name"], "file": fitted.path.name, "artifact": jsonable(fitted.artifact)}


@router.get("/v1/calibrations")
def list_calibrations(config: ConfigDep) -> list[dict[str, object]]:
    """Calibration files in the server's calibration folder."""
    from jurybench.calibration import load_artifact

    out = []
    folder = config.calibrations
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            artifact, _ = load_artifact(path)
        except JurybenchError:
            continue
        out.append(
            {
                "name": path.stem,
                "rubric": artifact.get("rubric"),
                "jurors": artifact.get("jurors"),
                "created": artifact.get("created"),
            }
        )
    return out


@router.post("/v1/calibrations/{name}/apply")
def apply(
    name: Annotated[str, PathParam(pattern=rq.NAME)], body: rq.ApplyIn, store: StoreDep, config: ConfigDep
) -> dict[str, object]:
    """Score a run with a calibration (stored in calibrated_scores)."""
    from jurybench import api
    from jurybench.stats import jsonable

    path = config.calibrations / f"{name}.json"
    if not path.exists():
        raise NotFound(f"no calibration named {name!r}.", hint="See GET /v1/calibrations.")
    request = body.model_dump()
    with store.writing() as cur:
        return {"name": name, "run": request["run"], "result": jsonable(api.apply_calibration(cur, path, **request))}


@router.post("/v1/agreement")
def agreement(body: rq.AgreementIn, store: StoreDep) -> object:
    """Human agreement, the human ceiling, and each juror and the jury against the humans (as
    'jurybench agreement --format json'): one block per criterion, with bootstrap intervals."""
    from jurybench import api
    from jurybench.stats import jsonable

    with store.reading() as cur:
        return jsonable(api.agreement(cur, **body.model_dump()).attrs["report"])


@router.post("/v1/jury/select")
def select(body: rq.JurySelectIn, store: StoreDep) -> dict[str, object]:
    """The cheapest sub-jury of a pilot run that is good enough (as 'jurybench jury select'):
    every sub-jury's held-out error, cost and latency, the Pareto front, the chosen one, and
    the chosen one as a jury file (``jury_file``, YAML text)."""
    from jurybench import api
    from jurybench.calibration import jury_file_text
    from jurybench.stats import jsonable

    with store.reading() as cur:
        selection = api.select_jury(cur, **body.model_dump())
    return {**jsonable(selection.as_dict()), "jury_file": jury_file_text(selection)}
