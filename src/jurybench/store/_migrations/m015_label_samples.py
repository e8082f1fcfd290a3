"""Migration 15: the random samples of a run's subjects drawn for human labelling, with each
drawn subject's inclusion probability (what prediction-powered inference weights by)."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m015_label_samples(con: Connection) -> None:
    con.execute(
        """
        CREATE TABLE label_samples (
            sample VARCHAR NOT NULL,
            run_id VARCHAR NOT NULL,
            subject_id VARCHAR NOT NULL,
            probability DOUBLE NOT NULL,
            stratum VARCHAR,
            design VARCHAR NOT NULL,
            seed BIGINT NOT NULL,
            n_population INTEGER NOT NULL,
            drawn_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (sample, subject_id)
        )"""
    )
    comment(
        con,
        "label_samples",
        {
            "": "Subjects drawn at random from a run for human labelling (annotations sample); stats ppi weights "
            "labels by their inclusion probability.",
            "sample": "the sample's name",
            "run_id": "the run whose subjects were drawn",
            "subject_id": "a drawn item or pair",
            "probability": "its chance of being drawn (uniform: n / N; stratified: n_h / N_h; active: rises with "
            "the jury's uncertainty)",
            "stratum": "its stratum (stratified samples)",
            "design": "uniform, stratified or active",
            "seed": "the draw's seed",
            "n_population": "subjects the sample was drawn from",
        },
    )
