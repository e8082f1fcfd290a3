"""The store's declared commands: ``annotations sample``, ``anchors add``, ``annotations
simulate`` and ``annotations import``, each declared once here; the command line, a study step and the service derive from
these (:mod:`jurybench.declare`), and :class:`jurybench.api.Store` binds them as its methods.

This module imports no store code at load time, so reading a declaration (``--help``) stays
cheap."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from jurybench.api._declared import SUBJECTS_PER_REQUEST
from jurybench.declare import NAME_HTTP, SHIPPED_NAME, file_or_rows, param

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from duckdb import DuckDBPyConnection as Connection

    from jurybench.api._specs import Data, RubricLike
    from jurybench.imports import AnnotationImport
    from jurybench.store import OpenStore

# What these take as a store: one held open (``jurybench.open``, the viewer's, the server's), a
# path (a new file is created), or a DuckDB connection.
AnyStore: TypeAlias = "OpenStore | str | Path | Connection"


# -- annotations sample: declared once; the command line, a study step and POST
# -- /v1/annotations/sample derive from these (jurybench.declare). Bounds the library checks
# -- itself are the HTTP body's alone (http_only).
DrawnRun = Annotated[str, param("The run whose subjects are drawn.", http=NAME_HTTP)]
DrawSize = Annotated[
    int,
    param(
        "Subjects to draw (active: about this many).",
        number="count",
        http_only={"ge": 1, "le": SUBJECTS_PER_REQUEST},  # 0 is the library's to refuse, in words of the run's size
    ),
]
DrawSeed = Annotated[int, param("Seed of the draw (recorded).", number="seed")]
SampleName = Annotated[str | None, param("The sample's name (default RUN-sample).", http=NAME_HTTP)]
Design = Annotated[
    str,
    param(
        "uniform (n of N), stratified (proportional over --stratify) or active (chance rising with the jurors' "
        "spread).",
        http_type=Literal["uniform", "stratified", "active"],
    ),
]
Stratify = Annotated[
    str | None,
    param("With --design stratified: model, language, dataset or meta.<field>.", http={"max_length": 128}),
]
Cluster = Annotated[
    str | None,
    param(
        "Draw whole clusters (prompt, model, language, dataset or meta.<field>) until n subjects.",
        http={"max_length": 128},
    ),
]


def sample_labels(
    store: AnyStore | None,
    run: DrawnRun,
    *,
    n: DrawSize,
    seed: DrawSeed = 0,
    name: SampleName = None,
    design: Design = "uniform",
    stratify: Stratify = None,
    cluster: Cluster = None,
) -> dict[str, object]:
    """Draw the subjects of ``run`` people should label, at random, and record each one's
    chance of being drawn (``label_samples``), so that ``stats.ppi`` gives a valid,
    bias-corrected estimate from their labels: ``design`` uniform (n of N), stratified
    (proportional allocation over ``stratify``: model, language, dataset or meta.<field>) or
    active (each subject's chance rising with its jurors' spread; about n drawn); ``cluster``
    (prompt, ...) draws whole clusters. Returns the sample's name, design, size and drawn
    subjects."""
    from jurybench.annotations import draw_sample
    from jurybench.store import writing

    with writing(store) as con:
        return draw_sample(con, run, n=n, seed=seed, name=name, stratify=stratify, design=design, cluster=cluster)


# -- anchors add: declared once; the command line, a study step and POST /v1/anchors derive from
# -- these (jurybench.declare).
AnchoredRun = Annotated[str, param("The run whose subjects become anchors.", http=NAME_HTTP)]
AnchorCount = Annotated[
    int,
    param("How many subjects to fix as anchors.", number="count", at_least=1, http_only={"le": SUBJECTS_PER_REQUEST}),
]
AnchorSeed = Annotated[int, param("Seed of the draw (recorded).", number="seed")]
AnchorName = Annotated[str | None, param("The anchor set's name (default RUN-anchors).", http=NAME_HTTP)]


def add_anchors(
    store: AnyStore | None, run: AnchoredRun, *, n: AnchorCount, seed: AnchorSeed = 0, name: AnchorName = None
) -> dict[str, object]:
    """Fix ``n`` of ``run``'s subjects, drawn at random, as an anchor set (``anchor_sets``): a
    later run judges them again (``score(..., anchors=NAME)``), so ``stats.drift`` tells the
    judge's shift from the judged system's change on them, without human labels. Returns the
    set's name, size and subjects."""
    from jurybench.stats import draw_anchors
    from jurybench.store import writing

    with writing(store) as con:
        return draw_anchors(con, run, n=n, seed=seed, name=name)


# -- annotations simulate: declared once; the command line and a study step derive from these.
SimulatedRubric = Annotated[
    "RubricLike", param("Pointwise rubric whose criteria are labelled.", faces="cli python", short="-r", cli_type=str)
]
SimulatedWhere = Annotated[str | None, param("SQL predicate choosing the items.", faces="cli python")]
Fraction = Annotated[
    float, param("Share of the items that get labels (a seeded subset).", faces="cli python", number="share")
]
Annotators = Annotated[int, param("Simulated annotators per item.", faces="cli python", number="count", at_least=1)]
Noise = Annotated[float, param("SD of each annotator's noise, in scale points.", faces="cli python", number="amount")]
SubsetSeed = Annotated[int, param("Seed for the subset and the noise.", faces="cli python", number="seed")]
TruthSeed = Annotated[
    int, param("The simulated jurors' truth_seed (the same known truth).", faces="cli python", number="seed")
]
PanelOut = Annotated[
    str | Path | None,
    param(
        "Write the panel's mean per item and criterion to this CSV instead of the store.",
        faces="cli python",
        cli_type=Path | None,
    ),
]


def simulate_annotations(
    store: AnyStore | None,
    *,
    rubric: SimulatedRubric,
    where: SimulatedWhere = None,
    fraction: Fraction = 1.0,
    annotators: Annotators = 3,
    noise: Noise = 0.5,
    seed: SubsetSeed = 0,
    truth_seed: TruthSeed = 0,
    panel_out: PanelOut = None,
) -> int:
    """Offline studies: human labels drawn from the simulated jurors' known truth (annotators
    sim-human-1..N), standing in for ``import_annotations``; returns the number of labels.
    ``panel_out``: write the panel's mean per item and criterion to that CSV instead (for
    ``import_annotations(..., continuous=True)``, as published panel means are imported)."""
    from jurybench.annotations import simulate_human_labels
    from jurybench.api._specs import rubric_of
    from jurybench.store import writing

    with writing(store) as con:
        return simulate_human_labels(
            con,
            rubric_of(rubric),
            where=where,
            fraction=fraction,
            annotators=annotators,
            noise=noise,
            seed=seed,
            truth_seed=truth_seed,
            panel_file=Path(panel_out) if panel_out else None,
        )


# -- annotations import: declared once; the command line, a study step and POST /v1/annotations
# -- derive from these (jurybench.declare). The labels are a file on the command line and rows
# -- inline in the HTTP body (``labels``, long layout).
def words(text: str) -> list[str]:
    """'a, b,c' as ['a', 'b', 'c'] (the command line's comma-separated lists)."""
    return [part.strip() for part in text.split(",") if part.strip()]


def column_map(text: str, option: str = "--map") -> dict[str, str]:
    """'item_id=story,value=score' as {'item_id': 'story', 'value': 'score'}."""
    from jurybench.errors import JurybenchError

    out = {}
    for part in words(text):
        if "=" not in part:
            raise JurybenchError(f"{option} {part!r}: expected name=column.", hint="e.g. item_id=story,value=score")
        key, value = part.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def _map_from_cli(map: str = "") -> dict[str, str] | None:
    return column_map(map) or None


def _columns_from_cli(annotator_columns: str = "") -> list[str]:
    return words(annotator_columns)


LabelData = Annotated[
    "Data",
    file_or_rows(
        "CSV, JSONL or Parquet with human labels.",
        rows="labels",
        rows_help="The labels, one a row: subject_id, annotator, criterion, value.",
        row_type="jurybench.imports:LabelRows",
        max_rows=SUBJECTS_PER_REQUEST,
    ),
]
LabelRubric = Annotated[
    "RubricLike",
    param(
        "The rubric the annotators used (checks criteria and scales).",
        short="-r",
        cli_type=str,
        http_type=str,
        http_only=SHIPPED_NAME,
    ),
]
Layout = Annotated[str, param("auto, long, wide-criterion or wide-annotator.", faces="cli python")]
ColumnMap = Annotated[
    "Mapping[str, str] | None",
    param(
        "Rename columns: item_id=story,annotator=rater,value=score.",
        faces="cli python",
        cli_name="map",
        cli_type=str,
        cli_default="",
        from_cli=_map_from_cli,
    ),
]
AnnotatorColumns = Annotated[
    "Sequence[str]",
    param(
        "Wide-annotator files: comma-separated annotator columns.",
        faces="cli python",
        cli_type=str,
        cli_default="",
        from_cli=_columns_from_cli,
    ),
]
LabelCriterion = Annotated[str | None, param("Wide-annotator files: the criterion they rate.", faces="cli python")]
ReplaceLabels = Annotated[bool, param("Overwrite stored labels that differ.", switch=True)]
Continuous = Annotated[
    bool,
    param(
        "Accept values between the scale's points (panel means, published scores); stored as continuous.",
        flag=True,
    ),
]
FileFormat = Annotated[str | None, param("csv, jsonl or parquet.", faces="cli python", cli_name="format")]


def import_annotations(
    store: AnyStore | None,
    data: LabelData,
    *,
    rubric: LabelRubric,
    layout: Layout = "auto",
    mapping: ColumnMap = None,
    annotator_columns: AnnotatorColumns = (),
    criterion: LabelCriterion = None,
    replace: ReplaceLabels = False,
    continuous: Continuous = False,
    fmt: FileFormat = None,
) -> AnnotationImport:
    """Human labels for stored items (or pairs) on a rubric's criteria, long or wide
    (as 'jurybench annotations import'); every value is checked against the rubric's scale, and is a
    whole point unless ``continuous`` (panel means, published scores). ``data``: a file (CSV,
    JSONL or Parquet, ``fmt`` when its name does not say), a DataFrame or a list of dicts;
    ``mapping`` renames columns (standard name -> the data's)."""
    from jurybench.api._rows import rows_of
    from jurybench.api._specs import rubric_of
    from jurybench.imports import import_annotation_rows, rename_columns
    from jurybench.imports import import_annotations as import_file
    from jurybench.store import writing

    spec = rubric_of(rubric)
    with writing(store) as con:
        given = rows_of(data, "annotation")
        if isinstance(given, str | Path):
            return import_file(
                con,
                given,
                spec,
                fmt=fmt,
                layout=layout,
                mapping=mapping,
                annotator_columns=annotator_columns,
                criterion=criterion,
                replace=replace,
                continuous=continuous,
            )
        rows, source = given
        return import_annotation_rows(
            con,
            rename_columns(rows, mapping or {}),
            spec,
            source=source,
            layout=layout,
            annotator_columns=annotator_columns,
            criterion=criterion,
            replace=replace,
            continuous=continuous,
        )
