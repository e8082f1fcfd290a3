"""Migration 3: recorded statistics."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment


def m003_stats_results(con: Connection) -> None:
    con.execute(
        """
        CREATE TABLE stats_results (
            result_id VARCHAR PRIMARY KEY,
            name VARCHAR NOT NULL,
            run_id VARCHAR,
            params JSON NOT NULL,
            seed INTEGER,
            result JSON NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    comment(
        con,
        "stats_results",
        {
            "": "Every statistic computed with 'jurybench stats', with the parameters and seed used.",
            "name": "the statistic (directional, gap, consistency, friedman, ttest, ...)",
            "params": "all parameters: run, where, by, bootstrap size, thresholds, ...",
            "seed": "the random seed of bootstrap statistics (NULL when none is used)",
            "result": "the full result as JSON",
        },
    )
