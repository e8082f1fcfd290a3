"""``judgments import``, declared once here: the command line, a study step and ``POST
/v1/judgments`` derive from :func:`import_judgments` (:mod:`jurybench.declare`), and
:class:`jurybench.api.Store` binds it (and :func:`import_released`) as its methods. A file of one
judgment a row, rows in memory, or a file as a judge or benchmark released it (a registered
judgment format, named or detected).

This module imports no store code at load time, so reading a declaration (``--help``) stays
cheap."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from jurybench.api._declared import SUBJECTS_PER_REQUEST
from jurybench.declare import NAME_HTTP, SHIPPED_NAME, file_or_rows, param

if TYPE_CHECKING:
    from collections.abc import Mapping

    from jurybench.api._labelling import AnyStore
    from jurybench.api._specs import Data, RubricLike
    from jurybench.imports import BundleImport, JudgmentImport

PLAIN_FORMATS = ("csv", "jsonl", "parquet")  # one judgment a row; any other name is a released format


def _options_from_cli(option: list[str] | None = None) -> dict[str, str] | None:
    from jurybench.imports import parse_options

    return parse_options(option) or None


JudgmentData = Annotated[
    "Data",
    file_or_rows(
        "CSV, JSONL or Parquet, one judgment a row; or a file as a judge or benchmark released it "
        "(--format, or detected: jurybench judgments formats).",
        rows="judgments",
        rows_help="The judgments, one a row: the columns of 'jurybench judgments import'.",
        row_type="jurybench.imports:JudgmentRows",
        max_rows=SUBJECTS_PER_REQUEST,
    ),
]
JudgmentRun = Annotated[str, param("The run they become (created, or added to).", http=NAME_HTTP)]
JudgmentRubric = Annotated[
    "RubricLike | None",
    param(
        "The rubric the judgments answer (a released format has its own).",
        short="-r",
        cli_type=str | None,
        http_type=str,
        http_only=SHIPPED_NAME,
        required_in="http",
    ),
]
JudgmentJuror = Annotated[
    str | None,
    param(
        "The judge's name (stored as import/<name>); a released file names its own.",
        short="-j",
        http_only={"min_length": 1, "max_length": 128},
        required_in="http",
    ),
]
ReplaceJudgments = Annotated[bool, param("Overwrite stored judgments that differ.", switch=True)]
AsRecording = Annotated[
    str | None,
    param("Also keep them as recordings SOURCE, for a replay/SOURCE juror to re-run them.", faces="cli python"),
]
JudgmentFormat = Annotated[
    str | None,
    param(
        "csv, jsonl or parquet (one judgment a row), or a released format: alpaca-eval, mt-bench-single, "
        "mt-bench-pair, mt-bench-human, arena-hard, pandalm, inspect, promptfoo, lm-eval, or a plug-in's.",
        faces="cli python",
        cli_name="format",
    ),
]
FormatOptions = Annotated[
    "Mapping[str, str] | None",
    param(
        "A released format's own option KEY=VALUE (repeatable).",
        faces="cli python",
        cli_name="option",
        cli_type=list[str] | None,
        from_cli=_options_from_cli,
    ),
]
JudgmentsContinuous = Annotated[
    bool,
    param("Accept pointwise scores between the scale's points (panel means, averaged scores).", flag=True),
]


def import_judgments(
    store: AnyStore | None,
    data: JudgmentData,
    *,
    run: JudgmentRun,
    rubric: JudgmentRubric = None,
    juror: JudgmentJuror = None,
    replace: ReplaceJudgments = False,
    as_recording: AsRecording = None,
    fmt: JudgmentFormat = None,
    options: FormatOptions = None,
    continuous: JudgmentsContinuous = False,
) -> JudgmentImport | BundleImport:
    """Judgments made elsewhere (a model's or a person's) as run ``run``'s calls and judgments of
    juror ``import/<juror>``, as if the engine had made them (as 'jurybench judgments import'):
    item_id, criterion, score (pointwise); pair_id, criterion, score (pairwise); pair_id and
    verdict or p_b (preference); optionally shown, sample, raw, reason, status, cost_usd, model.
    Every row is checked before any is written; ``continuous`` accepts pointwise scores
    between the scale's points (panel means). A file as a judge or benchmark released it
    (``fmt`` a registered judgment format, or detected where only one reader claims the file)
    goes to :func:`import_released`, with its ``options``."""
    from jurybench.errors import JurybenchError
    from jurybench.imports import detect_format

    detected = detect_format(Path(data)) if isinstance(data, str | Path) and fmt is None else None
    if isinstance(data, str | Path) and ((fmt is not None and fmt not in PLAIN_FORMATS) or detected is not None):
        if as_recording or continuous:
            raise JurybenchError(
                f"--{'as-recording' if as_recording else 'continuous'} is for files of one judgment a row.",
                hint="A released format decides these itself.",
            )
        name = fmt or (detected.name if detected is not None else None)  # read once: not detected again
        return import_released(
            store, data, run=run, fmt=name, rubric=rubric, juror=juror, options=options, replace=replace
        )
    if options:
        raise JurybenchError("--option is for released formats (--format NAME).", hint="jurybench judgments formats")
    missing = [name for name, value in (("--rubric", rubric), ("--juror", juror)) if not value]
    if missing:
        raise JurybenchError(
            f"{data if isinstance(data, str | Path) else 'rows'}: {' and '.join(missing)} needed for a file of "
            "one judgment a row.",
            hint="Or name a released format with --format (jurybench judgments formats).",
        )
    assert rubric is not None and juror is not None
    return _import_rows(store, data, run, rubric, juror, replace, as_recording, fmt, continuous)


def _import_rows(
    store: AnyStore | None,
    data: Data,
    run: str,
    rubric: RubricLike,
    juror: str,
    replace: bool,
    as_recording: str | None,
    fmt: str | None,
    continuous: bool,
) -> JudgmentImport:
    from jurybench.api._rows import expect, rows_of
    from jurybench.api._specs import rubric_of
    from jurybench.imports import import_judgments as import_rows
    from jurybench.store import read_rows, writing

    expect("run", run, str)
    expect("juror", juror, str)
    spec = rubric_of(rubric)
    given = rows_of(data, "judgment")
    rows, source = (list(read_rows(Path(given), fmt)), str(given)) if isinstance(given, str | Path) else given
    with writing(store) as con:
        return import_rows(
            con,
            rows,
            spec,
            run=run,
            juror=juror,
            source=source,
            replace=replace,
            as_recording=as_recording,
            continuous=continuous,
        )


def import_released(
    store: AnyStore | None,
    path: str | Path,
    *,
    run: str,
    fmt: str | None = None,
    rubric: RubricLike | None = None,
    juror: str | None = None,
    options: Mapping[str, str] | None = None,
    replace: bool = False,
) -> BundleImport:
    """A judgment file as a judge or benchmark released it (``fmt``: a registered judgment
    format, ``jurybench judgments formats``; detected where only one reader claims the file):
    its items, pairs, each judge's judgments (a juror of run ``run``) and human labels, in one
    transaction. ``rubric`` defaults to the format's; ``juror`` renames a file's one judge;
    ``options`` are the format's own (e.g. ``{"baseline": "gpt-4-0314"}``)."""
    from jurybench.api._rows import expect
    from jurybench.api._specs import rubric_of
    from jurybench.errors import JurybenchError
    from jurybench.imports import check_options, detect_format, import_bundle, judgment_format
    from jurybench.store import writing

    expect("run", run, str)
    source = Path(path)
    if not source.exists():
        raise JurybenchError(f"{source}: no such file.")
    found = judgment_format(fmt) if fmt else detect_format(source)
    if found is None:
        raise JurybenchError(
            f"{source}: cannot tell which judgment format it is.",
            hint="Name it with --format (jurybench judgments formats lists them).",
        )
    given = dict(options or {})
    check_options(found, given)
    bundle = found.read(source, given)
    spec = rubric_of(rubric if rubric is not None else found.rubric)
    with writing(store) as con:
        return import_bundle(
            con,
            bundle,
            spec,
            fmt=found.name,
            run=run,
            source=str(source),
            dataset=found.dataset,
            juror=juror,
            replace=replace,
        )
