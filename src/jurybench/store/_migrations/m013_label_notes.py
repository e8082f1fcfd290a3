"""Migration 13: a human label may carry the annotator's note (the viewer's label form)."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m013_label_notes(con: Connection) -> None:
    con.execute("ALTER TABLE human_labels ADD COLUMN note VARCHAR")
    comment(con, "human_labels", {"note": "the annotator's note on the label, if any (the viewer's label form)"})
