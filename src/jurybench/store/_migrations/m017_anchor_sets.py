"""Migration 17: anchor sets, subjects of a run fixed at random so that later runs judge them
again and ``stats drift`` can tell the judge's shift from the judged system's change (issue 53)."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m017_anchor_sets(con: Connection) -> None:
    con.execute(
        """
        CREATE TABLE anchor_sets (
            name VARCHAR NOT NULL,
            run_id VARCHAR NOT NULL,
            subject_id VARCHAR NOT NULL,
            seed BIGINT NOT NULL,
            n_population INTEGER NOT NULL,
            drawn_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (name, subject_id)
        )"""
    )
    comment(
        con,
        "anchor_sets",
        {
            "": "Anchors (anchors add): subjects of a run drawn at random that later runs judge again (score "
            "--anchors NAME), so stats drift measures the judge's shift on them without human labels.",
            "name": "the anchor set's name",
            "run_id": "the run its subjects were drawn from",
            "subject_id": "an anchor: an item or pair of that run",
            "seed": "the draw's seed",
            "n_population": "subjects of the run it was drawn from",
        },
    )
