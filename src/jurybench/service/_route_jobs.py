"""Scoring jobs: plan one, submit one, list them, follow one, cancel one."""

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query

from jurybench.errors import JurybenchError, NotFound
from jurybench.service import _requests as rq
from jurybench.service._jobs import JobManager, JobWrite
from jurybench.service._state import ConfigDep, GroupDep, Id, JobsDep, Limit, Offset, ServiceConfig, StoreDep

if TYPE_CHECKING:
    from jurybench.jury import Jury
    from jurybench.rubric import AnyRubric

router = APIRouter(tags=["jobs"])


def prepare(
    body: rq.JobIn, config: ServiceConfig, *, need_keys: bool = True
) -> tuple[dict[str, Any], "AnyRubric", "Jury", list[dict[str, str] | None]]:
    """A job's request, rubric, jury and inline keys, checked as the CLI checks them."""
    from jurybench.calibration import attach_calibration
    from jurybench.engine import check_batch_jurors, check_orders, validate_jurors

    request = body.model_dump(exclude_none=True)
    if not body.swap:  # the older way to ask for one order
        orders = request.get("orders", "both")
        request["orders"] = "one" if orders == "both" else orders
    if body.jury is None:
        if not config.default_jury:
            raise JurybenchError("jury: missing.", hint='Give jury.jurors (e.g. ["openai/gpt-4o-mini"]).')
        request["jury"] = dict(config.default_jury)
    rubric = rq.load_rubric_for(request)
    check_orders(str(request.get("orders") or "both"), rubric)
    if request.get("until") is not None:  # the rule against the rubric it stops, as score --until checks it
        from jurybench.stats import anytime

        anytime.fitted_rule(str(request["until"]), rubric, float(request.get("until_alpha", 0.05)))
    secrets = rq.secrets_of(request["jury"])
    request["jury"] = rq.public_jury(request["jury"])  # stored and served without credentials
    jury = rq.jury_for(request, secrets, config.calibrations)
    validate_jurors(rubric, list(jury.jurors), need_keys=need_keys)  # a plan calls nothing: no key needed
    jury = attach_calibration(jury, rubric)
    jury.resolved(rubric)
    if request.get("batch"):
        check_batch_jurors(list(jury.jurors))
    if request.get("max_cost") is not None:
        from jurybench.jurors import price_of

        unknown = [j.display_name for j in jury.jurors if price_of(j) is None]
        if unknown:
            raise JurybenchError(
                f"max_cost: no price is known for {', '.join(unknown)}, so a budget cannot be kept.",
                hint="Use models litellm's price map lists, or leave max_cost out.",
            )
    return request, rubric, jury, secrets


@router.post("/v1/plan")
def plan_job(body: rq.JobIn, store: StoreDep, config: ConfigDep) -> dict[str, object]:
    """What a job would do and cost, per juror (calls after the cache, input tokens of the rendered
    prompts, expected output tokens, cost synchronously and in batch); nothing is called or written.
    Subjects must be stored already (item_ids, pair_ids or where)."""
    from jurybench.api import score
    from jurybench.rubric import is_pairwise

    if body.items or body.pairs:
        raise JurybenchError(
            "a plan reads stored subjects: upload items or pairs first (POST /v1/items, "
            "/v1/pairs), then plan with item_ids, pair_ids or where."
        )
    _, rubric, jury, _ = prepare(body, config, need_keys=False)
    ids, where = rq.subject_predicate(body, is_pairwise(rubric))
    with store.cursor() as cur:
        result = score(
            cur, rubric=rubric, jury=jury, where=where, ids=ids, anchors=body.model_dump().get("anchors"), plan=True
        ).result
    jurors = [p.as_dict() for p in result.plan]

    def total(name: str) -> float | None:
        values = [p[name] for p in jurors]
        return None if any(v is None for v in values) else sum(values)

    return {
        "n_calls": sum(p["calls"] for p in jurors),
        "n_cached": sum(p["cached"] for p in jurors),
        "cost_usd": total("cost_usd"),
        "cost_batch_usd": total("cost_batch_usd"),
        "jurors": jurors,
    }


@router.post("/v1/jobs", status_code=202)
async def submit_job(body: rq.JobIn, jobs: JobsDep, group: GroupDep, config: ConfigDep) -> dict[str, object]:
    """Submit a scoring job: a rubric, a jury, and items or pairs (inline or stored)."""
    import asyncio

    with jobs.admitting_one():
        # Checking a request takes about a millisecond: on the event loop, not a thread-pool trip.
        write, items, pairs, secrets = _submission(body, jobs, config)
        # Committed with other clients' submissions by the group writer; no thread waits for it.
        row = await asyncio.wrap_future(group.submit(write, items, pairs))
        return jobs.enqueue(row, secrets)


def _submission(
    body: rq.JobIn, jobs: JobManager, config: ServiceConfig
) -> tuple[JobWrite, list[dict[str, object]], list[dict[str, object]], list[dict[str, str] | None]]:
    """The checked request as a job write for the group writer (its row is inserted after the
    inline items and pairs of its group are imported), and the request's inline keys."""
    from jurybench.rubric import is_pairwise

    request, rubric, _jury, secrets = prepare(body, config)
    ids, where = rq.subject_predicate(body, is_pairwise(rubric))
    request.pop("items", None)
    request.pop("pairs", None)
    request["_where"] = where
    request["_ids"] = ids
    request["_needs_key"] = any(secrets)
    items = [item.model_dump(exclude_none=True) for item in body.items or []]
    pairs = [pair.model_dump(exclude_none=True) for pair in body.pairs or []]
    inline = bool(items or pairs) and not (body.item_ids or body.pair_ids)
    return JobWrite(request, rubric, ids, where, inline), items, pairs, secrets


@router.get("/v1/jobs")
def list_jobs(
    jobs: JobsDep, status: Annotated[str | None, Query(max_length=32)] = None, limit: Limit = 100, offset: Offset = 0
) -> list[dict[str, object]]:
    """Jobs, newest first."""
    return jobs.list(status=status, limit=limit, offset=offset)


@router.get("/v1/jobs/{job_id}")
async def get_job(job_id: Id, jobs: JobsDep) -> dict[str, object]:
    """A job's status and progress: calls done, invalid, refusals, failed, cost so far."""
    known = jobs.known(job_id)  # a job this server has touched: from memory, no query
    if known is not None:
        return known
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(jobs.get, job_id)


@router.post("/v1/jobs/{job_id}/cancel")
def cancel_job(job_id: Id, jobs: JobsDep) -> dict[str, object]:
    """Cancel a queued or running job (answers stored so far stay)."""
    return jobs.cancel(job_id)


@router.post("/v1/align", status_code=202)
def submit_alignment(body: rq.AlignIn, jobs: JobsDep, store: StoreDep) -> dict[str, object]:
    """Align one juror of a run to the human labels (as 'jurybench align'), as a job: poll GET
    /v1/jobs/{job_id}; when it ends, its notes name the alignment, whose figures GET
    /v1/alignments/{alignment_id} returns. Jurors' keys come from the server's environment (a
    juror string with a credential is refused: it would be stored with the job)."""
    from jurybench.jurors import parse_juror, secret_options

    request = body.model_dump()
    for field in ("juror", "optimizer"):
        text = request.get(field)
        if text and "," in str(text) and secret_options(parse_juror(str(text))):
            raise JurybenchError(
                f"{field}: the juror string carries a credential, which would be stored with the job.",
                hint="Give the provider's key in the server's environment, and the juror without it.",
            )
    request["plan"] = False  # a plan is no job: POST /v1/align/plan answers at once
    return jobs.submit_alignment(request)


@router.post("/v1/align/plan")
def plan_alignment(body: rq.AlignIn, store: StoreDep) -> dict[str, object]:
    """Each variant's calls and their price (as 'jurybench align --plan'); nothing is called."""
    from jurybench import api

    with store.cursor() as cur:
        return api.align(cur, **{**body.model_dump(), "plan": True}).as_dict()


@router.get("/v1/alignments/{alignment_id}")
def get_alignment(alignment_id: Id, store: StoreDep) -> dict[str, object]:
    """An alignment's figures as stored: every variant's held-out error and gain with
    intervals, p-values and Holm levels, what was kept, and the labels it used."""
    import json

    with store.reading() as cur:
        rows = cur.execute(
            "SELECT a.run_id, a.juror, a.criterion, a.alpha, a.folds, a.n_labelled, a.n_groups, a.chosen, a.variants, "
            "a.cost_usd, r.name, r.version, a.aligned_hash, (SELECT count(*) FROM label_uses u WHERE u.alignment_id = "
            "a.alignment_id) FROM alignments a LEFT JOIN rubrics r ON r.rubric_hash = a.aligned_hash "
            "WHERE a.alignment_id = ?",
            [alignment_id],
        ).fetchall()
    if not rows:
        raise NotFound(f"no alignment {alignment_id!r}.", hint="POST /v1/align makes one.")
    run, juror, criterion, alpha, folds, n, groups, chosen, variants, cost, name, version, aligned, used = rows[0]
    return {
        "alignment_id": alignment_id,
        "run_id": run,
        "juror": juror,
        "criterion": criterion,
        "alpha": alpha,
        "folds": folds,
        "n_labelled": n,
        "n_groups": groups,
        "chosen": chosen,
        "aligned_rubric": None if aligned is None else {"name": name, "version": version, "hash": aligned},
        "labels_used": used,
        "cost_usd": cost,
        **json.loads(variants),
    }
