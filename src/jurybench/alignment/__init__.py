"""Align a juror to human labels (``jurybench align``): rubric variants (demonstrations, a
rewritten guidance) judged on held-out prompt groups, one kept as a new rubric version only when
its held-out gain is significant, and the labels it used recorded so they are not counted again.

Internal: the names below are this stage's interface to the others (docs/architecture.md)."""

from jurybench.alignment._align import (
    Alignment,
    Figure,
    Judge,
    Judged,
    Plan,
    Rewrite,
    align,
    alignment_key,
    clustered_mean,
    group_folds,
    holm,
    one_sided_p,
)
from jurybench.alignment._data import AlignmentData, Labelled, alignment_data, modal_label
from jurybench.alignment._record import aligned_version, record_alignment
from jurybench.alignment._variants import (
    guidance_request,
    guidance_text,
    most_disagreed,
    nearest_point,
    parse_grid,
    with_demonstrations,
    with_description,
)

__all__ = [
    "Alignment",
    "AlignmentData",
    "Figure",
    "Judge",
    "Judged",
    "Labelled",
    "Plan",
    "Rewrite",
    "align",
    "aligned_version",
    "alignment_data",
    "alignment_key",
    "clustered_mean",
    "group_folds",
    "guidance_request",
    "guidance_text",
    "holm",
    "modal_label",
    "most_disagreed",
    "nearest_point",
    "one_sided_p",
    "parse_grid",
    "record_alignment",
    "with_demonstrations",
    "with_description",
]
