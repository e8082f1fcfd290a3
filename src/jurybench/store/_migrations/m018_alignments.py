"""Migration 18: alignments (``jurybench align``) and the human labels each one used, so that no
label that produced an aligned rubric is counted again when the rubric is judged (issue 54)."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m018_alignments(con: Connection) -> None:
    con.execute(
        """
        CREATE TABLE alignments (
            alignment_id VARCHAR PRIMARY KEY,
            run_id VARCHAR NOT NULL,
            juror VARCHAR NOT NULL,
            juror_key VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            measure VARCHAR NOT NULL,
            rubric_hash VARCHAR NOT NULL,
            aligned_hash VARCHAR,
            chosen VARCHAR,
            alpha DOUBLE NOT NULL,
            folds INTEGER NOT NULL,
            n_labelled INTEGER NOT NULL,
            n_groups INTEGER NOT NULL,
            variants JSON NOT NULL,
            cost_usd DOUBLE,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    comment(
        con,
        "alignments",
        {
            "": "Alignments (jurybench align): rubric variants for one juror and criterion, each scored against "
            "human labels on held-out prompt groups; one kept only when its held-out gain is significant.",
            "run_id": "the run whose juror was aligned (its answers are the original's)",
            "juror": "the juror's name in that run",
            "criterion": "the criterion aligned to the labels",
            "measure": "the held-out measure compared: mae (absolute error against the humans' mean) or error_rate "
            "(a classification: the label is not the humans' plurality; 1 - accuracy)",
            "rubric_hash": "the rubric the run used (the original)",
            "aligned_hash": "the new rubric version kept (rubrics), or NULL: no improvement shown",
            "chosen": "the variant kept, or NULL",
            "alpha": "the one-sided test's level, Holm-adjusted over the variants",
            "folds": "cross-validation folds over prompt groups",
            "n_labelled": "labelled subjects used",
            "n_groups": "prompt groups among them",
            "variants": "every variant: its held-out measure and gain with intervals, p-value, calls and cost",
            "cost_usd": "what the alignment's calls spent (the optimizer's included)",
        },
    )
    con.execute(
        """
        CREATE TABLE label_uses (
            alignment_id VARCHAR NOT NULL,
            aligned_hash VARCHAR NOT NULL,
            subject_kind VARCHAR NOT NULL,
            subject_id VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            PRIMARY KEY (alignment_id, subject_id, criterion)
        )"""
    )
    comment(
        con,
        "label_uses",
        {
            "": "Human labels an alignment read to make a rubric version: agreement, calibrate and stats ppi "
            "on runs judged with that version leave these subjects' labels of that criterion out.",
            "aligned_hash": "the rubric version the labels produced",
            "subject_id": "a subject whose labels were used",
            "criterion": "the criterion whose labels were used",
        },
    )
