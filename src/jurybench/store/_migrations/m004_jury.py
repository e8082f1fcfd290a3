"""Migration 4: juries (rule, quorum, weights) and the jury views every statistic reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurybench.store._migrations._base import comment

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def _jury_score(present: str, mean: str, median: str, weighted: str, votes_a: str, votes_b: str) -> str:
    """The jury's score under the run's aggregation and quorum: the single definition every
    jury view uses (mean of juror means, median, weighted mean, majority with a tie rule;
    NULL below quorum). ``calibrated`` is filled from calibrated_scores by the view."""
    return f"""CASE WHEN {present} >= ju.quorum THEN
               CASE ju.aggregation
                 WHEN 'mean' THEN {mean}
                 WHEN 'median' THEN {median}
                 WHEN 'weighted' THEN {weighted}
                 WHEN 'majority' THEN CASE WHEN {votes_a} > {votes_b} THEN 1.0
                                           WHEN {votes_b} > {votes_a} THEN -1.0
                                           WHEN ju.tie_rule = 'tie' THEN 0.0 END
                 WHEN 'calibrated' THEN cs.score
               END
             END"""


def m004_jury(con: Connection) -> None:
    import hashlib
    import json

    con.execute(
        """
        CREATE TABLE juries (
            jury_id VARCHAR PRIMARY KEY,
            name VARCHAR,
            aggregation VARCHAR NOT NULL,
            quorum INTEGER NOT NULL,
            tie_rule VARCHAR NOT NULL,
            calibration_id VARCHAR,
            definition JSON NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    comment(
        con,
        "juries",
        {
            "": "A jury: its jurors (run_jurors) and the one rule that turns their scores into the jury's.",
            "jury_id": "sha256 of the definition",
            "aggregation": "mean (of juror means), median, weighted (mean with run_jurors.weight), "
            "majority (sign votes) or calibrated (a calibration file's scores)",
            "quorum": "jurors with a valid score needed for a jury score; below it the jury score is NULL",
            "tie_rule": "majority with equal votes: tie (score 0) or abstain (NULL)",
            "calibration_id": "calibrations.calibration_id when aggregation is calibrated",
            "definition": "the whole definition as JSON (jurors with keys, names and weights)",
        },
    )
    con.execute(
        """
        CREATE TABLE run_jurors (
            run_id VARCHAR NOT NULL,
            juror_key VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            weight DOUBLE NOT NULL DEFAULT 1.0,
            position INTEGER NOT NULL,
            PRIMARY KEY (run_id, juror_key)
        )"""
    )
    comment(
        con,
        "run_jurors",
        {
            "": "The panel a run expects: every juror counts in n_jurors_expected, answered or not.",
            "name": "the juror's display name in this run",
            "weight": "the juror's weight for the weighted aggregation",
            "position": "order of the juror in the jury definition",
        },
    )
    con.execute(
        """
        CREATE TABLE rubric_dimensions (
            rubric_hash VARCHAR NOT NULL,
            dimension VARCHAR NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (rubric_hash, dimension)
        )"""
    )
    comment(con, "rubric_dimensions", {"": "Criteria (pointwise) or categories (pairwise) of each rubric, in order."})
    con.execute("ALTER TABLE runs ADD COLUMN jury_id VARCHAR")
    comment(
        con,
        "runs",
        {
            "status": "running; finished; finished_with_errors (some calls ended in error: re-run to retry them); "
            "failed (no call answered); interrupted",
            "jury_id": "the jury definition (juries) the run's figures use",
        },
    )
    comment(con, "calls", {"attempts": "requests made for this call: retries after errors and re-asks included"})
    # Existing stores: dimensions from the stored rubric bodies, a default jury per run.
    for rubric_hash, kind, body in con.execute("SELECT rubric_hash, kind, body FROM rubrics").fetchall():
        data = json.loads(body)
        names = (
            ["preference"]
            if kind == "preference"
            else [d["name"] for d in data.get("criteria") or data.get("categories") or []]
        )
        con.executemany(
            "INSERT INTO rubric_dimensions VALUES (?, ?, ?)", [(rubric_hash, n, i) for i, n in enumerate(names)]
        )
    runs = con.execute("SELECT r.run_id, r.jurors, ru.kind FROM runs r JOIN rubrics ru USING (rubric_hash)").fetchall()
    names_of = dict(con.execute("SELECT juror_key, name FROM jurors").fetchall())
    for run_id, jurors, kind in runs:
        keys = json.loads(jurors)
        definition = {
            "name": "",
            "aggregation": "majority" if kind == "preference" else "mean",
            "quorum": 1,
            "tie": "tie",
            "calibration_id": None,
            "jurors": [{"key": k, "name": names_of.get(k, k), "weight": 1.0} for k in keys],
        }
        text = json.dumps(definition, sort_keys=True)
        jury_id = hashlib.sha256(text.encode()).hexdigest()
        con.execute(
            "INSERT OR IGNORE INTO juries (jury_id, name, aggregation, quorum, tie_rule, definition) "
            "VALUES (?, '', ?, 1, 'tie', ?)",
            [jury_id, definition["aggregation"], text],
        )
        con.execute("UPDATE runs SET jury_id = ? WHERE run_id = ?", [jury_id, run_id])
        con.executemany(
            "INSERT INTO run_jurors VALUES (?, ?, ?, 1.0, ?)",
            [(run_id, k, names_of.get(k, k), i) for i, k in enumerate(keys)],
        )
    for view in ("jury_pointwise", "jury_pairwise", "run_summary"):
        con.execute(f"DROP VIEW {view}")
    _views_v2(con)


def _views_v2(con: Connection) -> None:
    con.execute(
        """
        CREATE VIEW run_subjects AS
        SELECT DISTINCT rc.run_id, c.subject_kind, c.subject_id
        FROM run_calls rc JOIN calls c USING (call_key)"""
    )
    con.execute(
        """
        CREATE VIEW juror_pointwise AS
        WITH judged AS (
            SELECT rc.run_id, j.item_id, j.criterion, j.juror_key,
                   avg(j.score) FILTER (WHERE j.status = 'valid') AS juror_score,
                   count(*) AS n_samples,
                   count(*) FILTER (WHERE j.status = 'valid') AS n_valid,
                   count(*) FILTER (WHERE j.status = 'invalid') AS n_invalid,
                   count(*) FILTER (WHERE j.status = 'refusal') AS n_refusal
            FROM pointwise_judgments j JOIN run_calls rc USING (call_key)
            GROUP BY ALL
        ), errors AS (
            SELECT rc.run_id, c.subject_id AS item_id, c.juror_key, count(*) AS n_error
            FROM run_calls rc JOIN calls c USING (call_key)
            WHERE c.status = 'error' AND c.subject_kind = 'item'
            GROUP BY ALL
        )
        SELECT s.run_id, s.subject_id AS item_id, d.dimension AS criterion, rj.juror_key, rj.name AS juror,
               rj.weight, j.juror_score,
               coalesce(j.n_samples, 0) AS n_samples, coalesce(j.n_valid, 0) AS n_valid,
               coalesce(j.n_invalid, 0) AS n_invalid, coalesce(j.n_refusal, 0) AS n_refusal,
               coalesce(e.n_error, 0) AS n_error
        FROM run_subjects s
        JOIN runs r ON r.run_id = s.run_id
        JOIN rubric_dimensions d ON d.rubric_hash = r.rubric_hash
        JOIN run_jurors rj ON rj.run_id = s.run_id
        LEFT JOIN judged j ON j.run_id = s.run_id AND j.item_id = s.subject_id
             AND j.criterion = d.dimension AND j.juror_key = rj.juror_key
        LEFT JOIN errors e ON e.run_id = s.run_id AND e.item_id = s.subject_id AND e.juror_key = rj.juror_key
        WHERE s.subject_kind = 'item'"""
    )
    _jury_pointwise_view(con)
    con.execute(
        """
        CREATE VIEW juror_pairwise AS
        WITH sym AS (
            SELECT rc.run_id, j.pair_id, j.category, j.juror_key, j.sample_index,
                   max(j.score) FILTER (WHERE j.presented_order = 'AB' AND j.status = 'valid') AS score_ab,
                   max(j.score) FILTER (WHERE j.presented_order = 'BA' AND j.status = 'valid') AS score_ba
            FROM pairwise_judgments j JOIN run_calls rc USING (call_key)
            GROUP BY ALL
        ), judged AS (
            SELECT run_id, pair_id, category, juror_key,
                   avg((score_ab - score_ba) / 2.0) AS juror_epsilon,
                   avg(score_ab) AS juror_score_ab,
                   avg(score_ba) AS juror_score_ba,
                   count(*) AS n_samples,
                   count(score_ab - score_ba) AS n_valid,
                   count(*) - count(score_ab - score_ba) AS n_excluded
            FROM sym GROUP BY ALL
        ), errors AS (
            SELECT rc.run_id, c.subject_id AS pair_id, c.juror_key, count(*) AS n_error
            FROM run_calls rc JOIN calls c USING (call_key)
            WHERE c.status = 'error' AND c.subject_kind = 'pair'
            GROUP BY ALL
        )
        SELECT s.run_id, s.subject_id AS pair_id, d.dimension AS category, rj.juror_key, rj.name AS juror,
               rj.weight, j.juror_epsilon, j.juror_score_ab, j.juror_score_ba,
               coalesce(j.n_samples, 0) AS n_samples, coalesce(j.n_valid, 0) AS n_valid,
               coalesce(j.n_excluded, 0) AS n_excluded, coalesce(e.n_error, 0) AS n_error
        FROM run_subjects s
        JOIN runs r ON r.run_id = s.run_id
        JOIN rubric_dimensions d ON d.rubric_hash = r.rubric_hash
        JOIN run_jurors rj ON rj.run_id = s.run_id
        LEFT JOIN judged j ON j.run_id = s.run_id AND j.pair_id = s.subject_id
             AND j.category = d.dimension AND j.juror_key = rj.juror_key
        LEFT JOIN errors e ON e.run_id = s.run_id AND e.pair_id = s.subject_id AND e.juror_key = rj.juror_key
        WHERE s.subject_kind = 'pair'"""
    )
    _jury_pairwise_views(con)
    con.execute(
        """
        CREATE VIEW run_summary AS
        SELECT rc.run_id, rj.name AS juror, ju.model, c.juror_key,
               count(*) AS n_calls,
               count(*) FILTER (WHERE c.status = 'ok') AS n_ok,
               count(*) FILTER (WHERE c.status = 'invalid') AS n_invalid,
               count(*) FILTER (WHERE c.status = 'refusal') AS n_refusal,
               count(*) FILTER (WHERE c.status = 'error') AS n_error,
               sum(c.attempts) AS n_requests,
               sum(c.prompt_tokens) AS prompt_tokens,
               sum(c.completion_tokens) AS completion_tokens,
               sum(c.cost_usd) AS cost_usd,
               count(c.cost_usd) AS n_costed,
               avg(c.latency_ms) AS mean_latency_ms
        FROM run_calls rc JOIN calls c USING (call_key) JOIN jurors ju USING (juror_key)
        LEFT JOIN run_jurors rj ON rj.run_id = rc.run_id AND rj.juror_key = c.juror_key
        GROUP BY ALL"""
    )


def _jury_pointwise_view(
    con: Connection, *, calibrated_cte: str = "", calibrated_source: str = "calibrated_scores"
) -> None:
    """The jury_pointwise view; m007 passes a materialized source for the calibrated scores."""
    con.execute(
        f"""
        CREATE VIEW jury_pointwise AS
        WITH {calibrated_cte}agg AS (
            SELECT run_id, item_id, criterion,
                   count(*) AS n_jurors_expected,
                   count(juror_score) AS n_jurors_present,
                   avg(juror_score) AS jury_mean,
                   median(juror_score) AS jury_median,
                   sum(weight * juror_score) / nullif(sum(weight) FILTER (WHERE juror_score IS NOT NULL), 0)
                       AS jury_weighted,
                   sum(n_invalid)::INTEGER AS n_invalid,
                   sum(n_refusal)::INTEGER AS n_refusal,
                   sum(n_error)::INTEGER AS n_error
            FROM juror_pointwise GROUP BY ALL
        )
        SELECT a.run_id, a.item_id, a.criterion, ju.aggregation, ju.quorum,
               a.n_jurors_expected, a.n_jurors_present, a.n_jurors_present < ju.quorum AS below_quorum,
               {_jury_score("a.n_jurors_present", "a.jury_mean", "a.jury_median", "a.jury_weighted", "0", "0")}
                   AS jury_score,
               a.jury_mean, a.jury_median, a.n_invalid, a.n_refusal, a.n_error
        FROM agg a
        JOIN runs r ON r.run_id = a.run_id
        JOIN juries ju ON ju.jury_id = r.jury_id
        LEFT JOIN {calibrated_source} cs ON cs.run_id = a.run_id AND cs.calibration_id = ju.calibration_id
             AND cs.subject_id = a.item_id AND cs.criterion = a.criterion"""
    )


def _jury_pairwise_views(
    con: Connection, *, calibrated_cte: str = "", calibrated_source: str = "calibrated_scores"
) -> None:
    """The jury_pairwise and jury_pairwise_orders views; m007 passes a materialized calibrated source."""
    for view, value, keys in (
        ("jury_pairwise", "juror_epsilon", ""),
        (
            "jury_pairwise_orders",
            "CASE o.presented_order WHEN 'AB' THEN juror_score_ab ELSE juror_score_ba END",
            ", o.presented_order",
        ),
    ):
        source = (
            "juror_pairwise" if not keys else "juror_pairwise CROSS JOIN (VALUES ('AB'), ('BA')) AS o(presented_order)"
        )
        con.execute(
            f"""
            CREATE VIEW {view} AS
            WITH {calibrated_cte}per_juror AS (
                SELECT run_id, pair_id, category{keys}, weight, {value} AS value, n_excluded, n_error
                FROM {source}
            ), agg AS (
                SELECT run_id, pair_id, category{keys.replace("o.", "")},
                       count(*) AS n_jurors_expected,
                       count(value) AS n_jurors_present,
                       count(*) FILTER (WHERE value > 0) AS votes_a,
                       count(*) FILTER (WHERE value < 0) AS votes_b,
                       count(*) FILTER (WHERE value = 0) AS votes_tie,
                       avg(value) AS jury_mean,
                       median(value) AS jury_median,
                       sum(weight * value) / nullif(sum(weight) FILTER (WHERE value IS NOT NULL), 0) AS jury_weighted,
                       sum(n_excluded)::INTEGER AS n_excluded,
                       sum(n_error)::INTEGER AS n_error
                FROM per_juror GROUP BY ALL
            )
            SELECT a.*, ju.aggregation, ju.quorum, ju.tie_rule, a.n_jurors_present < ju.quorum AS below_quorum,
                   {_jury_score("a.n_jurors_present", "a.jury_mean", "a.jury_median", "a.jury_weighted", "a.votes_a", "a.votes_b")}
                       AS jury_score
            FROM agg a
            JOIN runs r ON r.run_id = a.run_id
            JOIN juries ju ON ju.jury_id = r.jury_id
            LEFT JOIN {calibrated_source} cs ON cs.run_id = a.run_id AND cs.calibration_id = ju.calibration_id
                 AND cs.subject_id = a.pair_id AND cs.criterion = a.category"""
        )
