"""Migration 16: ``human_labels.saw_jury`` says how the viewer knows who labels: the annotator a
browser's signed cookie names, not only the name typed in the form (issue 57, blind labelling
everywhere). The column is unchanged; its description is brought up to date."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m016_saw_jury_by_cookie(con: Connection) -> None:
    comment(
        con,
        "human_labels",
        {
            "saw_jury": "the viewer's label form: false when the jury's and jurors' answers were hidden from the "
            "annotator (blind, the default), true when they were shown: view --show-jury / serve --show-jury, or a "
            "subject this annotator had labelled before, the annotator being the one named in the form or in the "
            "browser's signed cookie (jurybench_annotator), so a second name typed in the form does not hide what "
            "the first saw; NULL for labels imported from a file (not known)",
        },
    )
