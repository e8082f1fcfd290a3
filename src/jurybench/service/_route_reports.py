"""Reports over stored judgments: a preference run against the humans, a classification run's
answers (as 'jurybench report preference' and 'report classification' with --format json)."""

from fastapi import APIRouter

from jurybench.service import _requests as rq
from jurybench.service._state import StoreDep

router = APIRouter(tags=["reports"])


@router.post("/v1/reports/preference")
def preference(body: rq.PreferenceReportIn, store: StoreDep) -> dict[str, object]:
    """Each juror's and the jury's verdicts against the humans' in both orders, and order consistency."""
    from jurybench import api
    from jurybench.stats import jsonable

    with store.reading() as cur:
        report: dict[str, object] = api.preference_report(cur, **body.model_dump()).as_dict()
    return jsonable(report)


@router.post("/v1/reports/classification")
def classification(body: rq.ClassificationAnswersIn, store: StoreDep) -> object:
    """A classification run's answers per juror and language: valid as written or after
    normalisation, invalid by why."""
    from jurybench import api
    from jurybench.stats import jsonable

    with store.reading() as cur:
        frame = api.classification_answers(cur, **body.model_dump())
    return jsonable(frame.to_dict("records"))  # a language left blank: None
