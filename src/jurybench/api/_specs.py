"""A rubric and a jury from what a caller passes: names, paths, objects or lists of jurors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TypeAlias

    import pandas as pd

    from jurybench.jurors import JurorSpec
    from jurybench.jury import Jury
    from jurybench.rubric import AnyRubric

    # What the Python face takes: a rubric by name, path or object; a jury file, a Jury or its
    # jurors; data as a DataFrame, rows (mappings of column to value) or a CSV/JSONL/Parquet file.
    RubricLike: TypeAlias = str | Path | AnyRubric
    JurorLike: TypeAlias = str | Mapping[str, object] | JurorSpec
    JuryLike: TypeAlias = str | Path | Jury | JurorLike | Sequence[JurorLike]
    Data: TypeAlias = pd.DataFrame | Sequence[Mapping[str, object]] | str | Path


def rubric_of(rubric: RubricLike) -> AnyRubric:
    """A rubric from its name (rubrics/<name>.yaml or a shipped one), a path, or a rubric object."""
    from jurybench.rubric import load_rubric

    if isinstance(rubric, str | Path):
        return load_rubric(str(rubric))
    if hasattr(rubric, "content_hash") and hasattr(rubric, "kind"):
        return rubric
    raise JurybenchError(f"rubric: expected a name, a path or a rubric, got {type(rubric).__name__}.")


def jury_of(
    jury: JuryLike,
    *,
    samples: int | None = None,
    aggregate: str | None = None,
    quorum: int | None = None,
    tie: str | None = None,
    calibration: str | Path | None = None,
    scores: str | None = None,
) -> Jury:
    """A jury from a YAML file, a Jury, or a list of jurors (each 'MODEL[,key=value...]', a
    mapping with 'model', or a JurorSpec); ``samples`` sets the samples of every juror that
    did not set its own; ``scores`` (discrete or expected) what the jury aggregates."""
    from jurybench.jurors import JurorSpec, juror_from_mapping, parse_juror
    from jurybench.jury import Jury, load_jury_file, with_samples

    if isinstance(jury, Path) or (isinstance(jury, str) and (jury.endswith((".yaml", ".yml")) or Path(jury).is_file())):
        jury = load_jury_file(Path(jury))
    elif isinstance(jury, Jury):
        jury = jury
    elif isinstance(jury, str | dict | JurorSpec) or (isinstance(jury, Sequence) and not isinstance(jury, bytes)):
        entries = [jury] if isinstance(jury, str | dict | JurorSpec) else list(jury)
        jurors = []
        for number, entry in enumerate(entries, start=1):
            if isinstance(entry, JurorSpec):
                jurors.append(entry)
            elif isinstance(entry, str):
                jurors.append(parse_juror(entry))
            elif isinstance(entry, dict):
                jurors.append(juror_from_mapping(entry, where=f"jury entry {number}"))
            else:
                raise JurybenchError(
                    f"jury entry {number}: expected 'MODEL[,key=value...]' or a mapping with 'model', "
                    f"got {type(entry).__name__}."
                )
        jury = Jury(tuple(jurors))
    else:
        raise JurybenchError(f"jury: expected a YAML file, a Jury or a list of jurors, got {type(jury).__name__}.")
    if samples is not None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise JurybenchError(f"samples must be a whole number >= 1 (got {samples!r}).")
        jury = with_samples(jury, samples)  # a juror's own samples=N wins, as over HTTP
    return replace(
        jury,
        aggregation=aggregate or jury.aggregation,
        quorum=quorum if quorum is not None else jury.quorum,
        tie=tie or jury.tie,
        calibration=str(calibration) if calibration else jury.calibration,
        scores=scores or jury.scores,
    )
