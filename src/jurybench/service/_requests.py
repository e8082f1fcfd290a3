"""Request bodies of the HTTP API (pydantic, strict about unknown fields) and how a job is built.

Everything a request can name is checked the way the CLI checks it, by the same library
functions: rubric files, jurors and their parameters, SQL predicates, imported rows.
Paths are never taken from a request: rubrics are shipped names or inline definitions,
calibrations are names the server resolves in its own folder.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from jurybench.declare import NAME_PATTERN
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from jurybench.jurors import JurorSpec
    from jurybench.jury import Jury
    from jurybench.rubric import AnyRubric

NAME = NAME_PATTERN
MAX_ROWS = 10_000


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


Cell = str | int | float | bool | None


class ItemIn(_Body):
    item_id: Annotated[str, Field(min_length=1, max_length=256)]
    response: Annotated[str, Field(max_length=200_000)]
    prompt: Annotated[str, Field(max_length=200_000)] | None = None
    reference: Annotated[str, Field(max_length=200_000)] | None = None
    model: Annotated[str, Field(max_length=256)] | None = None
    language: Annotated[str, Field(max_length=32)] | None = None
    dataset: Annotated[str, Field(max_length=256)] | None = None
    treatment: dict[Annotated[str, Field(max_length=64)], Cell] = Field(default_factory=dict, max_length=32)
    metadata: dict[Annotated[str, Field(max_length=64)], Cell] = Field(default_factory=dict, max_length=64)


class PairIn(_Body):
    pair_id: Annotated[str, Field(min_length=1, max_length=256)]
    item_a: Annotated[str, Field(min_length=1, max_length=256)]
    item_b: Annotated[str, Field(min_length=1, max_length=256)]
    dataset: Annotated[str, Field(max_length=256)] | None = None
    metadata: dict[Annotated[str, Field(max_length=64)], Cell] = Field(default_factory=dict, max_length=64)


class ItemsUpload(_Body):
    items: list[ItemIn] = Field(min_length=1, max_length=MAX_ROWS)
    dataset: Annotated[str, Field(max_length=256)] | None = None


class ConversationsUpload(_Body):
    """A trace file's content, read by a conversation format as ``items import --format`` reads
    the file: ``content`` the JSON document (or a list of records), or JSON-lines text."""

    format: Annotated[str, Field(min_length=1, max_length=64)]
    content: Any
    # the released file's name, where its reader reads something from it (tau-bench: the model)
    filename: Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")] | None = None
    map: dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=256)]] = Field(
        default_factory=dict, max_length=32
    )
    dataset: Annotated[str, Field(max_length=256)] | None = None


class PairsUpload(_Body):
    pairs: list[PairIn] = Field(min_length=1, max_length=MAX_ROWS)
    dataset: Annotated[str, Field(max_length=256)] | None = None


JurorEntry = Annotated[str, Field(min_length=1, max_length=2000)] | dict[str, Any]


class JuryIn(_Body):
    jurors: list[JurorEntry] = Field(min_length=1, max_length=32)
    aggregation: Literal["mean", "median", "weighted", "majority", "calibrated"] | None = None
    quorum: Annotated[int, Field(ge=1, le=32)] = 1
    tie: Literal["tie", "abstain"] = "tie"
    calibration: Annotated[str, Field(pattern=NAME)] | None = Field(
        default=None, description="a calibration name known to the server (GET /v1/calibrations)"
    )
    name: Annotated[str, Field(max_length=128)] = ""
    scores: Literal["discrete", "expected"] = Field(
        default="discrete", description="what the jury aggregates: the jurors' discrete or expected scores"
    )


class _JobOwn(_Body):
    """A scoring job: a rubric and a jury, the items or pairs to judge (inline or stored), and the
    options of 'jurybench score'."""

    # What only the HTTP face takes (rubric and jury inline, items and pairs to import, ids);
    # the other fields are jurybench.score's declared HTTP face (jurybench.declare).

    rubric: Annotated[str, Field(pattern=NAME)] | None = Field(default=None, description="a shipped rubric name")
    rubric_inline: dict[str, Any] | None = Field(default=None, description="a rubric definition (as in YAML)")
    jury: JuryIn | None = Field(default=None, description="the jury; the server's default jury when omitted")
    items: list[ItemIn] | None = Field(default=None, max_length=MAX_ROWS, description="items to import and judge")
    pairs: list[PairIn] | None = Field(default=None, max_length=MAX_ROWS, description="pairs to import and judge")
    item_ids: list[Annotated[str, Field(max_length=256)]] | None = Field(default=None, max_length=MAX_ROWS)
    pair_ids: list[Annotated[str, Field(max_length=256)]] | None = Field(default=None, max_length=MAX_ROWS)
    swap: bool = Field(default=True, description="false is the same as orders: one")

    @field_validator("until", check_fields=False)
    @classmethod
    def _a_stopping_rule(cls, value: str | None) -> str | None:
        from jurybench.stats import anytime

        if value is not None and not anytime.is_rule(value):
            raise ValueError(f"use {anytime.RULE_HELP}")
        return value

    @field_validator("until_cluster", check_fields=False)
    @classmethod
    def _a_cluster(cls, value: str) -> str:
        from jurybench.errors import JurybenchError
        from jurybench.stats import anytime

        try:
            return anytime.check_cluster(value)
        except JurybenchError:
            raise ValueError(f"use {anytime.CLUSTER_HELP}") from None


def _job_body() -> type[_JobOwn]:
    """The job body: the HTTP-only fields, then ``jurybench.score``'s declared HTTP face."""
    from pydantic import create_model

    from jurybench.api import score
    from jurybench.declare import http_fields, parameters_of

    fields: dict[str, Any] = http_fields(parameters_of(score))
    model = create_model("JobIn", __base__=_JobOwn, **fields)
    model.__doc__ = _JobOwn.__doc__
    return model


def declared_body(name: str, function: Callable[..., object], doc: str) -> type[_Body]:
    """The HTTP body of a declared ``jurybench.api`` function: its declared HTTP face, no more."""
    from pydantic import create_model

    from jurybench.declare import http_fields, parameters_of

    fields: dict[str, Any] = http_fields(parameters_of(function))
    model = create_model(name, __base__=_Body, **fields)
    model.__doc__ = doc
    return model


if TYPE_CHECKING:
    JobIn = _JobOwn
    CalibrationIn = _Body
    JurySelectIn = _Body
    SampleIn = _Body
    ApplyIn = _Body
    AgreementIn = _Body
    AnchorsIn = _Body
    PreferenceReportIn = _Body
    ClassificationAnswersIn = _Body
    AlignIn = _Body
    AnnotationsUpload = _Body
    JudgmentsUpload = _Body
else:
    from jurybench import api

    JobIn = _job_body()
    AlignIn = declared_body(
        "AlignIn",
        api.align,
        "As 'jurybench align': queued as a job; the figures are at GET /v1/alignments/{alignment_id} when it ends.",
    )
    CalibrationIn = declared_body(
        "CalibrationIn",
        api.calibrate,
        "As 'jurybench calibrate': the file is written to the server's calibration folder.",
    )
    ApplyIn = declared_body(
        "ApplyIn", api.apply_calibration, "As 'jurybench calibrate apply': the calibration is named in the path."
    )
    AnnotationsUpload = declared_body(
        "AnnotationsUpload",
        api.import_annotations,
        "As 'jurybench annotations import', the labels inline (long layout: subject_id, annotator, criterion, value).",
    )
    JudgmentsUpload = declared_body(
        "JudgmentsUpload",
        api.import_judgments,
        "As 'jurybench judgments import', the judgments inline (one a row); a released format's file is the "
        "command line's.",
    )
    SampleIn = declared_body(
        "SampleIn",
        api.sample_labels,
        "As 'jurybench annotations sample': draw the subjects to label, their chances recorded.",
    )
    AnchorsIn = declared_body(
        "AnchorsIn",
        api.add_anchors,
        "As 'jurybench anchors add': fix subjects of a run as anchors that later runs judge again.",
    )
    AgreementIn = declared_body(
        "AgreementIn",
        api.agreement,
        "As 'jurybench agreement': each juror and the jury against the humans, and the humans among themselves.",
    )
    PreferenceReportIn = declared_body("PreferenceReportIn", api.preference_report, "As 'jurybench report preference'.")
    ClassificationAnswersIn = declared_body(
        "ClassificationAnswersIn", api.classification_answers, "As 'jurybench report classification'."
    )
    JurySelectIn = declared_body(
        "JurySelectIn",
        api.select_jury,
        "As 'jurybench jury select': the jury file comes back as text (a server writes no client paths).",
    )


class SqlIn(_Body):
    query: Annotated[str, Field(min_length=1, max_length=20_000)]
    limit: Annotated[int, Field(ge=1, le=100_000)] | None = None


_RUBRICS: dict[str, tuple[AnyRubric, Path, tuple[int, int]]] = {}  # name -> (rubric, its file, (mtime_ns, size))


def _named_rubric(name: str, load: Callable[[Path], AnyRubric]) -> AnyRubric:
    """A named rubric, loaded once and again only when its file changes (finding a rubric's file
    walks the rubric folders, which costs more than the rest of checking a job)."""
    from jurybench.rubric import resolve_rubric_path

    cached = _RUBRICS.get(name)
    if cached is not None:
        rubric, path, stamp = cached
        try:
            stat = path.stat()
        except OSError:
            stat = None
        if stat is not None and (stat.st_mtime_ns, stat.st_size) == stamp:
            return rubric
    path = resolve_rubric_path(name)
    rubric = load(path)
    stat = path.stat()
    _RUBRICS[name] = (rubric, path, (stat.st_mtime_ns, stat.st_size))
    return rubric


def load_rubric_for(request: dict[str, Any]) -> AnyRubric:
    from pydantic import ValidationError

    from jurybench.rubric import load_rubric, rubric_from_data

    name, inline = request.get("rubric"), request.get("rubric_inline")
    if (name is None) == (inline is None):
        raise JurybenchError("give exactly one of rubric (a shipped name) and rubric_inline (a definition).")
    if name is not None:
        if not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
            raise JurybenchError(f"rubric: {name!r} is not a rubric name.", hint="See GET /v1/rubrics.")
        return _named_rubric(name, load_rubric)
    try:
        return rubric_from_data(dict(inline or {}))
    except JurybenchError as exc:  # no such kind
        raise JurybenchError(f"rubric_inline.kind: {exc.message}", hint=exc.hint) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise JurybenchError(f"rubric_inline.{field}: {err['msg']}.", hint="See docs/rubrics.md.") from None


def jury_for(
    request: dict[str, Any], secrets: list[dict[str, Any] | None] | None, calibration_dir: Path | None = None
) -> Jury:
    """The job's jury, with each juror's credentials (kept in memory only) put back."""
    from dataclasses import replace

    from jurybench.jury import jury_from_mapping, with_samples

    data = dict(request["jury"])
    data["jurors"] = [_without_secret_names(entry) for entry in data.get("jurors") or []]
    calibration = data.pop("calibration", None)
    jury = jury_from_mapping({k: v for k, v in data.items() if v is not None}, where="jury")
    jurors = list(jury.jurors)
    for i, juror in enumerate(jurors):
        given = secrets[i] if secrets and i < len(secrets) else None
        if given:
            jurors[i] = replace(juror, options={**juror.options, **given})

    if calibration is not None:
        from pathlib import Path

        path = Path(calibration_dir or "calibration") / f"{calibration}.json"
        if not path.exists():
            raise JurybenchError(
                f"jury.calibration: no calibration named {calibration!r}.", hint="See GET /v1/calibrations."
            )
        jury = replace(jury, calibration=str(path))
    return with_samples(replace(jury, jurors=tuple(jurors)), request.get("samples"))


def _without_secret_names(entry: object) -> object:
    """A stored juror mapping lists the names of its credentials under 'secrets': not a parameter."""
    return {k: v for k, v in entry.items() if k != "secrets"} if isinstance(entry, dict) else entry


def parsed_jurors(jury: dict[str, Any]) -> list[JurorSpec]:
    """Each juror of a request's jury, parsed the one way the CLI parses it."""
    from jurybench.jurors import juror_from_mapping, parse_juror

    return [
        juror_from_mapping(entry, where=f"jury juror {n}") if isinstance(entry, dict) else parse_juror(str(entry))
        for n, entry in enumerate(jury.get("jurors", []), start=1)
    ]


def secrets_of(jury: dict[str, object]) -> list[dict[str, Any] | None]:
    """Each juror's credentials (api_key, headers, key-like parameters; kept in memory only), in order."""
    from jurybench.jurors import secret_options

    return [secret_options(spec) or None for spec in parsed_jurors(jury)]


def public_jury(jury: dict[str, object]) -> dict[str, Any]:
    """The request's jury as stored and served: every juror as a mapping without credentials."""
    from jurybench.jurors import public_juror

    return {**jury, "jurors": [public_juror(spec) for spec in parsed_jurors(jury)]}


def build_job(
    request: dict[str, Any], secrets: list[dict[str, Any] | None] | None, calibration_dir: Path | None = None
) -> tuple[AnyRubric, Jury, str | None, list[str] | None]:
    """The rubric, jury, subject predicate and subject ids of a stored (prepared) job."""
    rubric = load_rubric_for(request)
    if request.get("_needs_key") and not secrets:
        raise JurybenchError(
            "this job's jurors had inline credentials (api_key, headers), which the server keeps only in memory "
            "and lost on restart.",
            hint="Submit the job again (or give the provider's key in the server's environment).",
        )
    jury = jury_for(request, secrets, calibration_dir)
    return rubric, jury, request.get("_where"), request.get("_ids")


def subject_predicate(body: JobIn, pairwise: bool) -> tuple[list[str] | None, str | None]:
    """The job's subjects: the ids of inline and listed ones (None: not limited by id) and the
    checked ``where``."""
    from jurybench.store import expression

    ids: list[str] = []
    if pairwise:
        ids = [p.pair_id for p in body.pairs or []] + list(body.pair_ids or [])
        if body.item_ids:
            raise JurybenchError("a pairwise rubric judges pairs: give pairs or pair_ids (items only as their parts).")
    else:
        ids = [i.item_id for i in body.items or []] + list(body.item_ids or [])
        if body.pairs or body.pair_ids:
            raise JurybenchError("a pointwise rubric judges items: give items or item_ids, not pairs.")
    given = getattr(body, "where", None)  # a declared field (jurybench.score's HTTP face)
    where = expression(given, option="where") if given else None
    return (list(dict.fromkeys(ids)) or None), where
