"""Human labels: imported (long layout, checked against the rubric) and listed."""

from typing import Annotated

from fastapi import APIRouter, Query

from jurybench.service import _requests as rq
from jurybench.service._state import Limit, Offset, StoreDep, rows

router = APIRouter(tags=["annotations"])


@router.post("/v1/annotations", status_code=201)
def upload_annotations(body: rq.AnnotationsUpload, store: StoreDep) -> dict[str, object]:
    """Import human labels (long layout), validated against the rubric, all or nothing."""
    from jurybench import api

    values = body.model_dump()
    rubric = rq.load_rubric_for({"rubric": values.pop("rubric")})  # a shipped name, never a path
    column = rubric.subject_column
    labels = api.NamedRows(
        ({column: lab.pop("subject_id"), **lab} for lab in values.pop("labels")),
        source="labels",
    )
    with store.writing() as cur:  # the declared function, the server's connection as its store
        result = api.Store.import_annotations(cur, labels, rubric=rubric, layout="long", **values)
    return {"inserted": result.inserted, "unchanged": result.unchanged, "replaced": result.replaced}


@router.post("/v1/annotations/sample", status_code=201)
def sample_annotations(body: rq.SampleIn, store: StoreDep) -> dict[str, object]:
    """Draw at random the subjects of a run people should label, recording each one's chance
    (what ``stats ppi`` weights by); the drawn subjects' ids come back."""
    from jurybench import api

    with store.writing() as cur:  # the declared function, the server's connection as its store
        return api.Store.sample_labels(cur, **body.model_dump())


@router.post("/v1/anchors", status_code=201, tags=["anchors"])
def add_anchors(body: rq.AnchorsIn, store: StoreDep) -> dict[str, object]:
    """Fix subjects of a run, drawn at random, as an anchor set: a later job judges them again
    (``anchors``), so ``POST /v1/stats/drift`` tells the judge's shift on them."""
    from jurybench import api

    with store.writing() as cur:
        return api.Store.add_anchors(cur, **body.model_dump())


@router.get("/v1/annotations")
def list_annotations(
    store: StoreDep,
    subject_id: Annotated[str | None, Query(max_length=256)] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> list[dict[str, object]]:
    sql = (
        "SELECT subject_kind, subject_id, criterion, annotator, value, label FROM human_labels"
        + (" WHERE subject_id = ?" if subject_id else "")
        + " ORDER BY subject_id, criterion, annotator LIMIT ? OFFSET ?"
    )
    return rows(store, sql, [*([subject_id] if subject_id else []), limit, offset])
