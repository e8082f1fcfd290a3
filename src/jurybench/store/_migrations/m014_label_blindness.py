"""Migration 14: a human label records whether its annotator could see the jury's answers."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m014_label_blindness(con: Connection) -> None:
    con.execute("ALTER TABLE human_labels ADD COLUMN saw_jury BOOLEAN")
    comment(
        con,
        "human_labels",
        {
            "saw_jury": "the viewer's label form: false when the jury's and jurors' answers were hidden from the "
            "annotator (blind, the default), true when shown (view --show-jury, or a subject the annotator had "
            "labelled before); NULL for labels imported from a file (not known)",
        },
    )
