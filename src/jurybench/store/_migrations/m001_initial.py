"""Migration 1: the core tables (rubrics, jurors, items, pairs, runs, calls, judgments, human labels) and the first views."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurybench.store._migrations._base import comment

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def m001_initial(con: Connection) -> None:
    con.execute(
        """
        CREATE TABLE rubrics (
            rubric_hash VARCHAR PRIMARY KEY,
            name VARCHAR NOT NULL,
            version VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            body JSON NOT NULL,
            first_seen TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    comment(
        con,
        "rubrics",
        {
            "": "Every rubric a judgment was made with, keyed by content hash.",
            "rubric_hash": "sha256 of the validated rubric in canonical JSON",
            "kind": "pointwise, pairwise or preference",
            "body": "the validated rubric as JSON",
        },
    )
    con.execute(
        """
        CREATE TABLE jurors (
            juror_key VARCHAR PRIMARY KEY,
            name VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            params JSON NOT NULL
        )"""
    )
    comment(
        con,
        "jurors",
        {
            "": "A juror is a model string with the parameters that change its answers.",
            "juror_key": "sha256 of model and answer-changing params (temperature, seed, ...)",
            "name": "display name (defaults to the model string)",
            "model": "litellm model string, or fake/<name>, replay/<source>",
            "params": "the answer-changing parameters as JSON",
        },
    )
    con.execute(
        """
        CREATE TABLE items (
            item_id VARCHAR PRIMARY KEY,
            prompt VARCHAR,
            response VARCHAR NOT NULL,
            reference VARCHAR,
            model VARCHAR,
            language VARCHAR,
            treatment JSON,
            metadata JSON,
            dataset VARCHAR,
            source_file VARCHAR,
            imported_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    comment(
        con,
        "items",
        {
            "": "Generations to be judged: one response to one prompt.",
            "prompt": "the instruction or premise the response answers",
            "response": "the generated text being judged",
            "reference": "an optional reference answer",
            "model": "the model that produced the response",
            "language": "language code choosing the rubric template (en, ko, zh, ...)",
            "treatment": "treatment attributes as a JSON object (e.g. recipient gender)",
            "metadata": "any other columns of the imported file, as a JSON object",
            "dataset": "name of the dataset the item came from",
        },
    )
    con.execute(
        """
        CREATE TABLE pairs (
            pair_id VARCHAR PRIMARY KEY,
            item_a VARCHAR NOT NULL,
            item_b VARCHAR NOT NULL,
            dataset VARCHAR,
            metadata JSON,
            source_file VARCHAR,
            imported_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    comment(
        con,
        "pairs",
        {
            "": "Two items compared by pairwise rubrics; A and B name the items, not positions.",
            "item_a": "item_id of response A",
            "item_b": "item_id of response B",
        },
    )
    con.execute(
        """
        CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY,
            rubric_hash VARCHAR NOT NULL,
            mode VARCHAR NOT NULL,
            jurors JSON NOT NULL,
            selection VARCHAR,
            n_subjects INTEGER,
            status VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            finished_at TIMESTAMP
        )"""
    )
    comment(
        con,
        "runs",
        {
            "": "One scoring job: a rubric, a jury and a set of items or pairs.",
            "mode": "pointwise or pairwise",
            "jurors": "JSON list of juror_key",
            "selection": "the filter that chose the subjects (SQL predicate or glob)",
            "status": "running, finished or interrupted",
        },
    )
    con.execute(
        """
        CREATE TABLE calls (
            call_key VARCHAR PRIMARY KEY,
            rubric_hash VARCHAR NOT NULL,
            juror_key VARCHAR NOT NULL,
            subject_kind VARCHAR NOT NULL,
            subject_id VARCHAR NOT NULL,
            presented_order VARCHAR,
            sample_index INTEGER NOT NULL,
            messages JSON NOT NULL,
            response_text VARCHAR,
            finish_reason VARCHAR,
            status VARCHAR NOT NULL,
            reason VARCHAR,
            attempts INTEGER NOT NULL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            cost_usd DOUBLE,
            latency_ms DOUBLE,
            run_id VARCHAR,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    comment(
        con,
        "calls",
        {
            "": "Every request to a juror and its raw answer; the cache of the engine.",
            "call_key": "sha256 of (rubric hash, juror key, subject, order, sample index)",
            "subject_kind": "item (pointwise) or pair (pairwise)",
            "presented_order": "AB (A shown first) or BA; NULL for pointwise",
            "sample_index": "0..n-1 when a juror is sampled n times",
            "messages": "the rendered request messages",
            "response_text": "the raw completion text, as returned",
            "status": "ok, invalid (unparseable), refusal, or error (no answer; retried on re-run)",
            "reason": "why a call is invalid, a refusal or an error",
            "attempts": "requests made, including re-asks after invalid answers",
            "cost_usd": "cost reported by litellm's price table; NULL where unknown",
            "run_id": "the run that made the call (later runs reuse it from the cache)",
        },
    )
    con.execute(
        """
        CREATE TABLE run_calls (
            run_id VARCHAR NOT NULL,
            call_key VARCHAR NOT NULL,
            PRIMARY KEY (run_id, call_key)
        )"""
    )
    comment(con, "run_calls", {"": "Which calls (made or reused from cache) belong to a run."})
    for table, subject, dim in (
        ("pointwise_judgments", "item_id", "criterion"),
        ("pairwise_judgments", "pair_id", "category"),
    ):
        order_col = "presented_order VARCHAR NOT NULL," if table == "pairwise_judgments" else ""
        con.execute(
            f"""
            CREATE TABLE {table} (
                call_key VARCHAR NOT NULL,
                rubric_hash VARCHAR NOT NULL,
                juror_key VARCHAR NOT NULL,
                {subject} VARCHAR NOT NULL,
                {order_col}
                sample_index INTEGER NOT NULL,
                {dim} VARCHAR NOT NULL,
                score {"DOUBLE" if table == "pointwise_judgments" else "INTEGER"},
                status VARCHAR NOT NULL,
                reason VARCHAR,
                rationale VARCHAR,
                PRIMARY KEY (call_key, {dim})
            )"""
        )
        comments = {
            "score": (
                "the juror's score; NULL unless status is valid (engine judgments are integers; "
                "imported pointwise judgments may be means of samples)"
            ),
            "status": "valid, invalid or refusal: invalid and refusal rows are never coerced",
            "reason": "why the answer was invalid or a refusal",
            "rationale": "the juror's short rationale, if the rubric asks for one",
        }
        if table == "pairwise_judgments":
            comments[""] = (
                "One row per juror x pair x order x category x sample. score is 'how much more "
                "in the first-shown response than in the second'; for preference rubrics +1 = "
                "first shown better, -1 = second, 0 = tie."
            )
            comments["presented_order"] = "AB: item_a shown first; BA: item_b shown first"
        else:
            comments[""] = "One row per juror x item x criterion x sample."
        comment(con, table, comments)
    con.execute(
        """
        CREATE TABLE human_labels (
            subject_kind VARCHAR NOT NULL,
            subject_id VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            annotator VARCHAR NOT NULL,
            value DOUBLE,
            label VARCHAR,
            source_file VARCHAR,
            imported_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (subject_id, criterion, annotator)
        )"""
    )
    comment(
        con,
        "human_labels",
        {
            "": "Human annotations: scores on items, preferences or category scores on pairs.",
            "subject_kind": "item or pair",
            "criterion": "criterion or category name; 'preference' for A/B preferences",
            "value": "numeric label (a score; for preferences +1 = A, -1 = B, 0 = tie)",
            "label": "the label as given (e.g. A, B, tie)",
        },
    )
    con.execute(
        """
        CREATE TABLE recordings (
            source VARCHAR NOT NULL,
            subject_id VARCHAR NOT NULL,
            presented_order VARCHAR NOT NULL,
            sample_index INTEGER NOT NULL,
            response_text VARCHAR NOT NULL,
            finish_reason VARCHAR,
            PRIMARY KEY (source, subject_id, presented_order, sample_index)
        )"""
    )
    comment(
        con,
        "recordings",
        {
            "": "Recorded raw completions served by replay/<source> jurors.",
            "presented_order": "AB or BA for pairs; empty string for items",
        },
    )
    _views_v1(con)


def _views_v1(con: Connection) -> None:
    con.execute(
        """
        CREATE VIEW pointwise_scores AS
        SELECT j.rubric_hash, j.juror_key, ju.name AS juror, j.item_id, i.model, i.language,
               j.sample_index, j.criterion, j.score, j.status, j.reason, j.call_key
        FROM pointwise_judgments j
        JOIN jurors ju USING (juror_key)
        LEFT JOIN items i USING (item_id)"""
    )
    con.execute(
        """
        CREATE VIEW pairwise_symmetrized AS
        WITH ab AS (SELECT * FROM pairwise_judgments WHERE presented_order = 'AB'),
             ba AS (SELECT * FROM pairwise_judgments WHERE presented_order = 'BA')
        SELECT coalesce(ab.rubric_hash, ba.rubric_hash) AS rubric_hash,
               coalesce(ab.juror_key, ba.juror_key) AS juror_key,
               coalesce(ab.pair_id, ba.pair_id) AS pair_id,
               coalesce(ab.sample_index, ba.sample_index) AS sample_index,
               coalesce(ab.category, ba.category) AS category,
               ab.score AS score_ab,
               ba.score AS score_ba,
               CASE WHEN ab.status = 'valid' AND ba.status = 'valid'
                    THEN (ab.score - ba.score) / 2.0 END AS epsilon,
               CASE WHEN ab.status IS NULL OR ba.status IS NULL THEN 'missing_order'
                    WHEN ab.status = 'valid' AND ba.status = 'valid' THEN 'valid'
                    ELSE 'invalid' END AS status
        FROM ab FULL OUTER JOIN ba
          ON ab.rubric_hash = ba.rubric_hash AND ab.juror_key = ba.juror_key
         AND ab.pair_id = ba.pair_id AND ab.sample_index = ba.sample_index
         AND ab.category = ba.category"""
    )
    con.execute(
        """
        CREATE VIEW juror_order_bias AS
        SELECT s.rubric_hash, s.juror_key, ju.name AS juror, ju.model,
               count(*) FILTER (WHERE s.status = 'valid') AS n_valid,
               count(*) FILTER (WHERE s.status <> 'valid') AS n_excluded,
               avg(CASE WHEN sign(s.score_ab) <> sign(-s.score_ba) THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE s.status = 'valid') AS flip_rate,
               avg(CASE WHEN s.score_ab = 0 AND s.score_ba = 0 THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE s.status = 'valid') AS both_tie_rate
        FROM pairwise_symmetrized s JOIN jurors ju USING (juror_key)
        GROUP BY ALL"""
    )
    con.execute(
        """
        CREATE VIEW juror_position_stats AS
        SELECT j.rubric_hash, j.juror_key, ju.name AS juror, ju.model,
               count(*) FILTER (WHERE j.status = 'valid') AS n_valid,
               count(*) FILTER (WHERE j.status <> 'valid') AS n_excluded,
               avg(CASE WHEN j.score > 0 THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE j.status = 'valid') AS first_position_win_rate,
               avg(CASE WHEN j.score < 0 THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE j.status = 'valid') AS second_position_win_rate,
               avg(CASE WHEN j.score = 0 THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE j.status = 'valid') AS tie_rate
        FROM pairwise_judgments j JOIN jurors ju USING (juror_key)
        GROUP BY ALL"""
    )
    con.execute(
        """
        CREATE VIEW jury_pointwise AS
        WITH per_juror AS (
            SELECT rc.run_id, j.item_id, j.criterion, j.juror_key,
                   avg(j.score) FILTER (WHERE j.status = 'valid') AS juror_mean,
                   count(*) FILTER (WHERE j.status = 'invalid') AS n_invalid,
                   count(*) FILTER (WHERE j.status = 'refusal') AS n_refusal
            FROM pointwise_judgments j JOIN run_calls rc USING (call_key)
            GROUP BY ALL
        )
        SELECT run_id, item_id, criterion,
               avg(juror_mean) AS jury_mean,
               median(juror_mean) AS jury_median,
               count(juror_mean) AS n_jurors_valid,
               count(*) AS n_jurors,
               sum(n_invalid)::INTEGER AS n_invalid,
               sum(n_refusal)::INTEGER AS n_refusal
        FROM per_juror GROUP BY ALL"""
    )
    con.execute(
        """
        CREATE VIEW jury_pairwise AS
        WITH runs_pairs AS (
            SELECT DISTINCT rc.run_id, j.rubric_hash, j.juror_key, j.pair_id
            FROM pairwise_judgments j JOIN run_calls rc USING (call_key)
        ), per_juror AS (
            SELECT r.run_id, s.pair_id, s.category, s.juror_key,
                   avg(s.epsilon) AS juror_epsilon,
                   count(*) FILTER (WHERE s.status <> 'valid') AS n_excluded
            FROM pairwise_symmetrized s JOIN runs_pairs r USING (rubric_hash, juror_key, pair_id)
            GROUP BY ALL
        )
        SELECT run_id, pair_id, category,
               avg(juror_epsilon) AS jury_epsilon,
               median(juror_epsilon) AS jury_median_epsilon,
               count(juror_epsilon) AS n_jurors_valid,
               count(*) AS n_jurors,
               sum(n_excluded)::INTEGER AS n_excluded
        FROM per_juror GROUP BY ALL"""
    )
    con.execute(
        """
        CREATE VIEW run_summary AS
        SELECT rc.run_id, ju.name AS juror, ju.model, c.juror_key,
               count(*) AS n_calls,
               count(*) FILTER (WHERE c.status = 'ok') AS n_ok,
               count(*) FILTER (WHERE c.status = 'invalid') AS n_invalid,
               count(*) FILTER (WHERE c.status = 'refusal') AS n_refusal,
               count(*) FILTER (WHERE c.status = 'error') AS n_error,
               sum(c.prompt_tokens) AS prompt_tokens,
               sum(c.completion_tokens) AS completion_tokens,
               sum(c.cost_usd) AS cost_usd,
               count(c.cost_usd) AS n_costed,
               avg(c.latency_ms) AS mean_latency_ms
        FROM run_calls rc JOIN calls c USING (call_key) JOIN jurors ju USING (juror_key)
        GROUP BY ALL"""
    )
