"""Migration 9: the juror views list each juror per run, with the rubric's name."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

# The pairs each run judged with each juror (made or reused calls).
_MEMBERS = """SELECT DISTINCT rc.run_id, j.rubric_hash, j.juror_key, j.pair_id
              FROM pairwise_judgments j JOIN run_calls rc USING (call_key)"""


def m009_juror_views_by_run(con: Connection) -> None:
    """``juror_order_bias`` and ``juror_position_stats`` were per rubric x juror over every run:
    two runs with the same juror (or two jurors with the same name in different runs) gave rows
    that could not be told apart. They are now per run x juror and carry the rubric's name."""
    con.execute("DROP VIEW juror_order_bias")
    con.execute(
        f"""
        CREATE VIEW juror_order_bias AS
        SELECT m.run_id, ru.name AS rubric, s.rubric_hash, s.juror_key, ju.name AS juror, ju.model,
               count(*) FILTER (WHERE s.status = 'valid') AS n_valid,
               count(*) FILTER (WHERE s.status <> 'valid') AS n_excluded,
               avg(CASE WHEN sign(s.score_ab) <> sign(-s.score_ba) THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE s.status = 'valid') AS flip_rate,
               avg(CASE WHEN s.score_ab = 0 AND s.score_ba = 0 THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE s.status = 'valid') AS both_tie_rate
        FROM pairwise_symmetrized s
        JOIN ({_MEMBERS}) m USING (rubric_hash, juror_key, pair_id)
        JOIN jurors ju USING (juror_key) JOIN rubrics ru USING (rubric_hash)
        GROUP BY ALL"""
    )
    con.execute("DROP VIEW juror_position_stats")
    con.execute(
        """
        CREATE VIEW juror_position_stats AS
        SELECT rc.run_id, ru.name AS rubric, j.rubric_hash, j.juror_key, ju.name AS juror, ju.model,
               count(*) FILTER (WHERE j.status = 'valid') AS n_valid,
               count(*) FILTER (WHERE j.status <> 'valid') AS n_excluded,
               avg(CASE WHEN j.score > 0 THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE j.status = 'valid') AS first_position_win_rate,
               avg(CASE WHEN j.score < 0 THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE j.status = 'valid') AS second_position_win_rate,
               avg(CASE WHEN j.score = 0 THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE j.status = 'valid') AS tie_rate
        FROM pairwise_judgments j JOIN run_calls rc USING (call_key)
        JOIN jurors ju USING (juror_key) JOIN rubrics ru USING (rubric_hash)
        GROUP BY ALL"""
    )
