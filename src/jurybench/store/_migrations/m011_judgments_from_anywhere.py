"""Migration 11: judgments from anywhere. How each answer was structured; expected scores and
probabilistic verdicts (from token probabilities or imported); a jury that aggregates either;
single-order designs; empty responses; continuous human targets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurybench.store._migrations._base import comment

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

# A response is empty when nothing but white space and zero-width characters is left (one rule,
# the same as store.is_blank).
BLANK = r"[\s\x{200B}\x{200C}\x{200D}\x{2060}\x{FEFF}]"


def m011_judgments_from_anywhere(con: Connection) -> None:
    """``calls.structured`` says how the answer was constrained; ``expected`` and ``distribution``
    on both judgment tables hold what a juror with ``scores=expected`` read from the answer's
    token probabilities; ``juries.scores`` says which of the two the jury aggregates, and the
    juror views compute ``juror_score`` from it (with ``juror_expected`` beside it always)."""
    con.execute("ALTER TABLE calls ADD COLUMN structured VARCHAR")
    con.execute("ALTER TABLE calls ADD COLUMN cached_tokens BIGINT")
    con.execute("ALTER TABLE calls ADD COLUMN cache_write_tokens BIGINT")
    comment(
        con,
        "calls",
        {
            "cached_tokens": "prompt tokens the provider read from its prompt cache (OpenAI cached_tokens, Anthropic "
            "cache_read_input_tokens), billed at the cached rate; NULL where it said nothing",
            "cache_write_tokens": "prompt tokens written to the provider's cache (Anthropic cache_creation_input_tokens)",
        },
    )
    for table in ("pointwise_judgments", "pairwise_judgments"):
        con.execute(f"ALTER TABLE {table} ADD COLUMN expected DOUBLE")
        con.execute(f"ALTER TABLE {table} ADD COLUMN distribution JSON")
    con.execute("ALTER TABLE juries ADD COLUMN scores VARCHAR DEFAULT 'discrete'")
    con.execute("ALTER TABLE jobs ADD COLUMN notes JSON")
    con.execute("ALTER TABLE runs ADD COLUMN orders VARCHAR DEFAULT 'both'")
    con.execute("UPDATE runs SET orders = 'both'")
    con.execute("ALTER TABLE runs ADD COLUMN order_seed INTEGER")
    con.execute("ALTER TABLE items ADD COLUMN empty BOOLEAN DEFAULT false")
    con.execute(f"UPDATE items SET empty = regexp_replace(response, '{BLANK}', '', 'g') = ''")
    con.execute("ALTER TABLE human_labels ADD COLUMN continuous BOOLEAN DEFAULT false")
    con.execute("UPDATE human_labels SET continuous = false")
    comment(
        con,
        "runs",
        {
            "orders": (
                "which orders each pair was shown in: both (symmetrized), one (item_a first), random (one order per pair, "
                "drawn from the run's seed), or unknown (imported without the order shown); with one order a juror's "
                "epsilon is that order's score in the pair's frame, and position bias cannot be measured"
            )
        },
    )
    comment(con, "runs", {"order_seed": "orders random: the seed that drew each pair's order with its id"})
    comment(con, "items", {"empty": "the response is empty: nothing but white space or zero-width characters"})
    comment(
        con,
        "human_labels",
        {
            "continuous": (
                "imported with --continuous: a value between the scale's points (a panel mean, a published score)"
            )
        },
    )
    comment(
        con, "jobs", {"notes": "what the job's run said that is no error (e.g. a juror sent no token probabilities)"}
    )
    con.execute("UPDATE juries SET scores = 'discrete'")
    notes = {
        "expected": (
            "scores=expected jurors: the probability-weighted score read from the answer's token log "
            "probabilities (G-Eval's weighting; for preferences +1 A .. -1 B in the shown order); NULL "
            "when the provider sent none (the discrete score then stands alone)"
        ),
        "distribution": (
            'the distribution behind expected: {"p": {value: probability}, "coverage": the probability '
            "the scale's values held among the token alternatives before renormalising}"
        ),
    }
    for table in ("pointwise_judgments", "pairwise_judgments"):
        for column, text in notes.items():
            con.execute(f"COMMENT ON COLUMN {table}.{column} IS '{text.replace(chr(39), chr(39) * 2)}'")
    comment(
        con,
        "calls",
        {
            "structured": (
                "how the answer was constrained: schema (the provider enforced the rubric's JSON schema), "
                "json (JSON mode or the prompt; validated by jurybench), instructor, or text (verdict rules, "
                "labels, questionnaires, generation)"
            )
        },
    )
    comment(con, "juries", {"scores": "discrete (the juror's score) or expected (its expected score, where read)"})
    con.execute("DROP VIEW juror_pointwise")
    con.execute(
        """
        CREATE VIEW juror_pointwise AS
        WITH judged AS (
            SELECT rc.run_id, j.item_id, j.criterion, j.juror_key,
                   avg(j.score) FILTER (WHERE j.status = 'valid') AS juror_discrete,
                   avg(coalesce(j.expected, j.score)) FILTER (WHERE j.status = 'valid') AS juror_expected,
                   count(j.expected) FILTER (WHERE j.status = 'valid') AS n_expected,
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
               rj.weight,
               CASE WHEN ju.scores = 'expected' THEN j.juror_expected ELSE j.juror_discrete END AS juror_score,
               coalesce(j.n_samples, 0) AS n_samples, coalesce(j.n_valid, 0) AS n_valid,
               coalesce(j.n_invalid, 0) AS n_invalid, coalesce(j.n_refusal, 0) AS n_refusal,
               coalesce(e.n_error, 0) AS n_error,
               j.juror_discrete, j.juror_expected, coalesce(j.n_expected, 0) AS n_expected
        FROM run_subjects s
        JOIN runs r ON r.run_id = s.run_id
        LEFT JOIN juries ju ON ju.jury_id = r.jury_id
        JOIN rubric_dimensions d ON d.rubric_hash = r.rubric_hash
        JOIN run_jurors rj ON rj.run_id = s.run_id
        LEFT JOIN judged j ON j.run_id = s.run_id AND j.item_id = s.subject_id
             AND j.criterion = d.dimension AND j.juror_key = rj.juror_key
        LEFT JOIN errors e ON e.run_id = s.run_id AND e.item_id = s.subject_id AND e.juror_key = rj.juror_key
        WHERE s.subject_kind = 'item'"""
    )
    con.execute("DROP VIEW juror_pairwise")
    con.execute(
        """
        CREATE VIEW juror_pairwise AS
        WITH sym AS (
            SELECT rc.run_id, j.pair_id, j.category, j.juror_key, j.sample_index,
                   max(j.score) FILTER (WHERE j.presented_order = 'AB' AND j.status = 'valid') AS score_ab,
                   max(j.score) FILTER (WHERE j.presented_order = 'BA' AND j.status = 'valid') AS score_ba,
                   max(coalesce(j.expected, j.score))
                       FILTER (WHERE j.presented_order = 'AB' AND j.status = 'valid') AS expected_ab,
                   max(coalesce(j.expected, j.score))
                       FILTER (WHERE j.presented_order = 'BA' AND j.status = 'valid') AS expected_ba,
                   count(j.expected) FILTER (WHERE j.status = 'valid') AS n_expected
            FROM pairwise_judgments j JOIN run_calls rc USING (call_key)
            GROUP BY ALL
        ), judged AS (
            -- both orders: (score_AB - score_BA) / 2; one order per pair (orders one, random or
            -- unknown): the order's score in the pair's frame (A = item_a).
            SELECT s.run_id, s.pair_id, s.category, s.juror_key,
                   avg(CASE WHEN r.orders = 'both' THEN (score_ab - score_ba) / 2.0
                            ELSE coalesce(score_ab, -score_ba) END) AS juror_discrete_epsilon,
                   avg(CASE WHEN r.orders = 'both' THEN (expected_ab - expected_ba) / 2.0
                            ELSE coalesce(expected_ab, -expected_ba) END) AS juror_expected_epsilon,
                   avg(score_ab) AS discrete_ab, avg(score_ba) AS discrete_ba,
                   avg(expected_ab) FILTER (WHERE expected_ba IS NOT NULL OR r.orders <> 'both') AS expected_ab,
                   avg(expected_ba) FILTER (WHERE expected_ab IS NOT NULL OR r.orders <> 'both') AS expected_ba,
                   sum(n_expected) AS n_expected,
                   count(*) AS n_samples,
                   count(CASE WHEN r.orders = 'both' THEN score_ab - score_ba ELSE coalesce(score_ab, score_ba) END)
                       AS n_valid,
                   count(*) - count(CASE WHEN r.orders = 'both' THEN score_ab - score_ba
                                         ELSE coalesce(score_ab, score_ba) END) AS n_excluded
            FROM sym s JOIN runs r ON r.run_id = s.run_id GROUP BY ALL
        ), errors AS (
            SELECT rc.run_id, c.subject_id AS pair_id, c.juror_key, count(*) AS n_error
            FROM run_calls rc JOIN calls c USING (call_key)
            WHERE c.status = 'error' AND c.subject_kind = 'pair'
            GROUP BY ALL
        )
        SELECT s.run_id, s.subject_id AS pair_id, d.dimension AS category, rj.juror_key, rj.name AS juror,
               rj.weight,
               CASE WHEN ju.scores = 'expected' THEN j.juror_expected_epsilon ELSE j.juror_discrete_epsilon END
                   AS juror_epsilon,
               CASE WHEN ju.scores = 'expected' THEN j.expected_ab ELSE j.discrete_ab END AS juror_score_ab,
               CASE WHEN ju.scores = 'expected' THEN j.expected_ba ELSE j.discrete_ba END AS juror_score_ba,
               coalesce(j.n_samples, 0) AS n_samples, coalesce(j.n_valid, 0) AS n_valid,
               coalesce(j.n_excluded, 0) AS n_excluded, coalesce(e.n_error, 0) AS n_error,
               j.juror_discrete_epsilon, j.juror_expected_epsilon, coalesce(j.n_expected, 0)::BIGINT AS n_expected
        FROM run_subjects s
        JOIN runs r ON r.run_id = s.run_id
        LEFT JOIN juries ju ON ju.jury_id = r.jury_id
        JOIN rubric_dimensions d ON d.rubric_hash = r.rubric_hash
        JOIN run_jurors rj ON rj.run_id = s.run_id
        LEFT JOIN judged j ON j.run_id = s.run_id AND j.pair_id = s.subject_id
             AND j.category = d.dimension AND j.juror_key = rj.juror_key
        LEFT JOIN errors e ON e.run_id = s.run_id AND e.pair_id = s.subject_id AND e.juror_key = rj.juror_key
        WHERE s.subject_kind = 'pair'"""
    )
