"""Ordered, named migrations. Never edit a shipped one: add the next.

Each is a function taking a DuckDB connection; ``migrate`` applies the ones not
yet recorded in the ``migrations`` table, each in its own transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Migration = Callable[[Any], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


def _comment(con: Any, table: str, comments: dict[str, str]) -> None:
    for column, text in comments.items():
        quoted = text.replace("'", "''")
        if column == "":
            con.execute(f"COMMENT ON TABLE {table} IS '{quoted}'")
        else:
            con.execute(f"COMMENT ON COLUMN {table}.{column} IS '{quoted}'")


@migration
def m001_initial(con: Any) -> None:
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
    _comment(
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
    _comment(
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
    _comment(
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
    _comment(
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
    _comment(
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
    _comment(
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
    _comment(con, "run_calls", {"": "Which calls (made or reused from cache) belong to a run."})
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
        _comment(con, table, comments)
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
    _comment(
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
    _comment(
        con,
        "recordings",
        {
            "": "Recorded raw completions served by replay/<source> jurors.",
            "presented_order": "AB or BA for pairs; empty string for items",
        },
    )
    _views_v1(con)


def _views_v1(con: Any) -> None:
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


@migration
def m002_calibration(con: Any) -> None:
    con.execute(
        """
        CREATE TABLE calibrations (
            calibration_id VARCHAR PRIMARY KEY,
            name VARCHAR NOT NULL,
            rubric_hash VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            path VARCHAR,
            body JSON NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )"""
    )
    _comment(
        con,
        "calibrations",
        {
            "": "Fitted calibrations (also saved as files under calibration/).",
            "calibration_id": "sha256 of the calibration file's content",
            "kind": "pointwise (least-squares scores) or preference (logistic A/B)",
            "body": "the calibration artifact as JSON",
        },
    )
    con.execute(
        """
        CREATE TABLE calibrated_scores (
            run_id VARCHAR NOT NULL,
            calibration_id VARCHAR NOT NULL,
            subject_id VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            score DOUBLE,
            probability DOUBLE,
            n_imputed INTEGER NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (run_id, calibration_id, subject_id, criterion)
        )"""
    )
    _comment(
        con,
        "calibrated_scores",
        {
            "": "A calibration applied to a run: one calibrated score per subject and criterion.",
            "subject_id": "item_id (pointwise) or pair_id (preference)",
            "score": "calibrated score on the human scale (preference: +1 A, -1 B)",
            "probability": "preference calibrations: probability that A is preferred",
            "n_imputed": "juror votes missing or invalid for this subject, filled by the documented rule",
        },
    )
    con.execute(
        """
        CREATE VIEW calibrated_items AS
        SELECT c.run_id, c.calibration_id, k.name AS calibration, c.criterion, c.score,
               c.n_imputed, i.*
        FROM calibrated_scores c
        JOIN calibrations k USING (calibration_id)
        JOIN items i ON i.item_id = c.subject_id"""
    )


@migration
def m003_stats_results(con: Any) -> None:
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
    _comment(
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


@migration
def m004_jury(con: Any) -> None:
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
    _comment(
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
    _comment(
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
    _comment(con, "rubric_dimensions", {"": "Criteria (pointwise) or categories (pairwise) of each rubric, in order."})
    con.execute("ALTER TABLE runs ADD COLUMN jury_id VARCHAR")
    _comment(
        con,
        "runs",
        {
            "status": "running; finished; finished_with_errors (some calls ended in error: re-run to retry them); "
            "failed (no call answered); interrupted",
            "jury_id": "the jury definition (juries) the run's figures use",
        },
    )
    _comment(con, "calls", {"attempts": "requests made for this call: retries after errors and re-asks included"})
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


def _views_v2(con: Any) -> None:
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


def _jury_pointwise_view(con: Any, *, calibrated_cte: str = "", calibrated_source: str = "calibrated_scores") -> None:
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


def _jury_pairwise_views(con: Any, *, calibrated_cte: str = "", calibrated_source: str = "calibrated_scores") -> None:
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


@migration
def m005_studies(con: Any) -> None:
    """Audit studies: questionnaire and classification judgments, generation under treatments, baselines."""
    con.execute("ALTER TABLE calls ADD COLUMN presentation JSON")
    _comment(
        con,
        "calls",
        {
            "presentation": "questionnaires: the item order shown and the scale rotation drawn for the call "
            '({"order": [item ids by shown position], "rotation": [canonical label index per numeral]})',
            "subject_kind": "item, pair, or unit (a generation: one prompt under one treatment)",
        },
    )
    con.execute("ALTER TABLE pointwise_judgments ADD COLUMN label VARCHAR")
    con.execute("ALTER TABLE pointwise_judgments ADD COLUMN raw_value DOUBLE")
    con.execute("ALTER TABLE pointwise_judgments ADD COLUMN shown_position INTEGER")
    _comment(
        con,
        "pointwise_judgments",
        {
            "label": "classification: the canonical label answered; questionnaires: the scale label the numeral stood for",
            "raw_value": "questionnaires: the numeral answered, before rotation, rescaling and reverse keying",
            "shown_position": "questionnaires: the position (1-based) the item was shown at",
        },
    )
    con.execute(
        """
        CREATE TABLE inventory_structure (
            rubric_hash VARCHAR NOT NULL,
            dimension VARCHAR NOT NULL,
            facet VARCHAR NOT NULL,
            factor VARCHAR,
            reverse_keyed BOOLEAN NOT NULL,
            PRIMARY KEY (rubric_hash, dimension)
        )"""
    )
    _comment(
        con,
        "inventory_structure",
        {
            "": "Questionnaire rubrics: each item's facet and factor (NULL: an interstitial facet) and keying.",
            "dimension": "the questionnaire item id (the criterion of its judgments)",
        },
    )
    con.execute(
        """
        CREATE TABLE classification_gold (
            rubric_hash VARCHAR NOT NULL,
            item_id VARCHAR NOT NULL,
            gold VARCHAR NOT NULL,
            PRIMARY KEY (rubric_hash, item_id)
        )"""
    )
    _comment(
        con,
        "classification_gold",
        {"": "Each item's gold label (its reference) as the rubric's canonical label name, set when it is scored."},
    )
    con.execute(
        """
        CREATE TABLE generations (
            call_key VARCHAR PRIMARY KEY,
            study VARCHAR NOT NULL,
            unit_id VARCHAR NOT NULL,
            prompt_id VARCHAR NOT NULL,
            generator_key VARCHAR NOT NULL,
            treatment JSON NOT NULL,
            language VARCHAR,
            sample_index INTEGER NOT NULL,
            item_id VARCHAR NOT NULL,
            refused BOOLEAN,
            refusal_reason VARCHAR,
            excluded VARCHAR
        )"""
    )
    _comment(
        con,
        "generations",
        {
            "": "Responses generated for a study: one prompt under one treatment by one model, one sample.",
            "call_key": "the generation call (calls.call_key); its raw text and outcome are there",
            "unit_id": "prompt and treatment arms, e.g. p1|recipient_gender=female",
            "generator_key": "jurors.juror_key of the generating model with its parameters",
            "item_id": "the item the response becomes (when answered, not refused and not excluded)",
            "refused": "the response is a refusal (patterns or the provider's signal); NULL until answered",
            "refusal_reason": "which pattern or signal marked it",
            "excluded": "why the response is not an item: refused, or 'prompt refused by <model>' under "
            "consistent exclusion; NULL when it is an item",
        },
    )
    con.execute(
        """
        CREATE TABLE human_baselines (
            name VARCHAR NOT NULL,
            statistic VARCHAR NOT NULL,
            target VARCHAR NOT NULL,
            cell VARCHAR NOT NULL DEFAULT '',
            value DOUBLE NOT NULL,
            source_file VARCHAR,
            imported_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (name, statistic, target, cell)
        )"""
    )
    _comment(
        con,
        "human_baselines",
        {
            "": "Published human reference values, imported as data: effect sizes or means per target and cell.",
            "statistic": "d (a human effect size) or mean (a human mean score)",
            "target": "what the value is for: a criterion, facet:<name> or factor:<name>",
            "cell": "the country, language or group it holds for ('' = every cell)",
        },
    )
    _views_v3(con)


def _views_v3(con: Any) -> None:
    con.execute(
        """
        CREATE VIEW classification_outcomes AS
        SELECT rc.run_id, j.juror_key, coalesce(rj.name, ju.name) AS juror, ju.model AS juror_model,
               j.item_id, j.sample_index, i.language, i.model, i.dataset, i.treatment, i.metadata,
               j.status, j.reason, j.label AS predicted, g.gold,
               CASE WHEN g.gold IS NULL THEN NULL ELSE coalesce(j.status = 'valid' AND j.label = g.gold, false) END
                   AS correct,
               j.status <> 'valid' AS invalid
        FROM pointwise_judgments j
        JOIN run_calls rc USING (call_key)
        JOIN rubrics r ON r.rubric_hash = j.rubric_hash AND r.kind = 'classification'
        JOIN jurors ju ON ju.juror_key = j.juror_key
        LEFT JOIN run_jurors rj ON rj.run_id = rc.run_id AND rj.juror_key = j.juror_key
        JOIN items i USING (item_id)
        LEFT JOIN classification_gold g ON g.rubric_hash = j.rubric_hash AND g.item_id = j.item_id"""
    )
    con.execute(
        """
        CREATE VIEW inventory_scores AS
        WITH per_item AS (
            SELECT v.run_id, v.item_id, s.facet, s.factor, v.jury_score
            FROM jury_pointwise v JOIN runs r USING (run_id)
            JOIN inventory_structure s ON s.rubric_hash = r.rubric_hash AND s.dimension = v.criterion
        )
        SELECT run_id, item_id, 'facet' AS level, facet AS name, avg(jury_score) AS score,
               count(jury_score) AS n_answered, count(*) AS n_items
        FROM per_item GROUP BY ALL
        UNION ALL
        SELECT run_id, item_id, 'factor' AS level, factor AS name, avg(jury_score) AS score,
               count(jury_score) AS n_answered, count(*) AS n_items
        FROM per_item WHERE factor IS NOT NULL GROUP BY ALL"""
    )
    con.execute(
        """
        CREATE VIEW generation_outcomes AS
        SELECT g.study, g.call_key, g.unit_id, g.prompt_id, g.generator_key, ju.name AS generator, ju.model,
               g.treatment, g.language, g.sample_index, g.item_id, c.status AS call_status, c.reason AS call_reason,
               c.response_text, c.finish_reason, g.refused, g.refusal_reason, g.excluded
        FROM generations g JOIN jurors ju ON ju.juror_key = g.generator_key
        LEFT JOIN calls c USING (call_key)"""
    )
    con.execute(
        """
        CREATE VIEW refusal_rates AS
        WITH expanded AS (
            SELECT study, generator, model, treatment, refused, unnest(json_keys(treatment)) AS variable
            FROM generation_outcomes
        )
        SELECT study, generator, model, variable, treatment->>variable AS arm,
               count(refused) AS n_answered,
               count(*) FILTER (WHERE refused) AS n_refused,
               count(*) FILTER (WHERE refused) / nullif(count(refused), 0) AS refusal_rate,
               count(*) - count(refused) AS n_unanswered
        FROM expanded GROUP BY ALL"""
    )


@migration
def m006_service(con: Any) -> None:
    """Jobs submitted to the HTTP service (jurybench serve)."""
    con.execute(
        """
        CREATE TABLE jobs (
            job_id VARCHAR PRIMARY KEY,
            status VARCHAR NOT NULL,
            request JSON NOT NULL,
            run_id VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            started_at TIMESTAMP,
            finished_at TIMESTAMP,
            error VARCHAR,
            n_tasks INTEGER,
            n_done INTEGER,
            n_invalid INTEGER,
            n_refusal INTEGER,
            n_failed INTEGER,
            cost_usd DOUBLE
        )"""
    )
    _comment(
        con,
        "jobs",
        {
            "": "Scoring jobs submitted over HTTP; each runs as one run (run_id) of the judge engine.",
            "status": "queued, running, finished, finished_with_errors, failed, cancelled",
            "request": "the job as submitted, with secrets (api_key) removed",
            "n_done": "calls answered or reused so far (valid, invalid or refusal)",
            "n_failed": "calls that ended in error or were not made (their juror was unusable)",
        },
    )


@migration
def m007_calibrated_join(con: Any) -> None:
    """The jury views read calibrated scores through a materialized CTE.

    DuckDB 2.0.0 returns every row of a run for ``SELECT ... FROM jury_pointwise WHERE run_id =
    'q' LIMIT 6``: the run filter is pushed into the LEFT JOIN's calibrated_scores side, its
    statistics prove that side empty, and the rewrite that follows drops the LIMIT. A
    materialized CTE is not filtered through, so the LIMIT stays (same rows, same values)."""
    source = "calibrated AS MATERIALIZED (SELECT run_id, calibration_id, subject_id, criterion, score FROM calibrated_scores), "
    for view in ("jury_pointwise", "jury_pairwise", "jury_pairwise_orders"):
        con.execute(f"DROP VIEW {view}")
    _jury_pointwise_view(con, calibrated_cte=source, calibrated_source="calibrated")
    _jury_pairwise_views(con, calibrated_cte=source, calibrated_source="calibrated")


@migration
def m008_batches(con: Any) -> None:
    """Provider batches (``score --batch``): what was submitted, for which calls, and where it
    stands, so a killed process's batches are polled again and never submitted twice."""
    con.execute(
        """
        CREATE TABLE batches (
            batch_id VARCHAR PRIMARY KEY,
            protocol VARCHAR NOT NULL,
            provider_batch_id VARCHAR,
            api_base VARCHAR,
            juror_key VARCHAR NOT NULL,
            run_id VARCHAR NOT NULL,
            round INTEGER NOT NULL,
            status VARCHAR NOT NULL,
            n_requests INTEGER NOT NULL,
            n_completed INTEGER NOT NULL DEFAULT 0,
            n_failed INTEGER NOT NULL DEFAULT 0,
            input_file_id VARCHAR,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            submitted_at TIMESTAMP,
            finished_at TIMESTAMP,
            collected_at TIMESTAMP,
            error VARCHAR
        )"""
    )
    con.execute(
        """
        CREATE TABLE batch_requests (
            batch_id VARCHAR NOT NULL,
            call_key VARCHAR NOT NULL,
            messages VARCHAR,
            prior VARCHAR,
            collected BOOLEAN NOT NULL DEFAULT false,
            PRIMARY KEY (batch_id, call_key)
        )"""
    )
    _comment(
        con,
        "batches",
        {
            "": "Provider batches sent by score/generate --batch, one row per submission.",
            "batch_id": "jurybench's id for the submission (also in the provider batch's metadata where it has any)",
            "protocol": "openai (files + batches) or anthropic (message batches)",
            "provider_batch_id": "the provider's batch id; NULL while being submitted",
            "round": "0: first requests; 1 and up: re-asks after unusable answers and calls re-planned from "
            "expired or failed batches",
            "status": "submitting, validating, in_progress, finalizing, cancelling, completed, expired, failed, cancelled",
            "collected_at": "when its results were stored; NULL while the batch is open",
        },
    )
    _comment(
        con,
        "batch_requests",
        {
            "": "The calls in each batch (custom_id = call_key).",
            "messages": "the conversation sent, for re-asks (NULL: the call's rendered prompt)",
            "prior": "JSON: requests, tokens and cost the call had used before this batch",
            "collected": "its result was stored, or the call moved on to a later batch",
        },
    )
    # What a job paid, as the CLI says it: the known part, and calls whose price is unknown.
    con.execute("ALTER TABLE jobs ADD COLUMN n_cost_unknown INTEGER")
    con.execute("ALTER TABLE jobs ADD COLUMN cost_by_juror VARCHAR")
    _comment(con, "jobs", {
        "cost_usd": "what the job paid for calls with a known price (offline jurors cost 0); NULL when no call had one",
        "n_cost_unknown": "answered calls whose price is unknown (litellm's price map does not list the model)",
        "cost_by_juror": "JSON: juror name -> USD",
    })  # fmt: skip
    con.execute(
        """
        CREATE VIEW run_cost AS
        SELECT rc.run_id,
               count(*) AS n_calls,
               sum(c.cost_usd) AS cost_usd,
               count(c.cost_usd) AS n_cost_known,
               count(*) FILTER (WHERE c.cost_usd IS NULL AND c.status <> 'error') AS n_cost_unknown
        FROM run_calls rc JOIN calls c USING (call_key)
        GROUP BY rc.run_id"""
    )


VIEW_DOCS = {
    "calibrated_items": "Calibrated pointwise scores joined to their items.",
    "pointwise_scores": "Pointwise judgments with juror names and item model/language.",
    "pairwise_symmetrized": (
        "Per juror x pair x category x sample: both orders side by side and the symmetrized "
        "score epsilon = (score_ab - score_ba) / 2, NULL unless both orders are valid."
    ),
    "juror_order_bias": (
        "Per rubric x juror over valid symmetrized scores: flip_rate (the preferred item "
        "changes when the order is swapped: sign(score_ab) <> sign(-score_ba)) and the "
        "share where both orders were exact ties."
    ),
    "juror_position_stats": (
        "Per rubric x juror over single-order judgments: first-position win rate, "
        "second-position win rate and tie rate."
    ),
    "run_subjects": "The items and pairs each run judged (made or reused calls).",
    "juror_pointwise": (
        "Per run x item x criterion x juror of the run's panel (run_jurors): the juror's score, the "
        "mean of its valid samples (NULL when it has none: invalid, refusal, error or never asked), "
        "and counts of samples by outcome."
    ),
    "jury_pointwise": (
        "Per run x item x criterion: jury_score by the run's jury rule (juries: mean of juror means, "
        "median, weighted, or calibrated), NULL below quorum; n_jurors_expected (the panel) and "
        "n_jurors_present (jurors with a valid score); jury_mean and jury_median for reference."
    ),
    "juror_pairwise": (
        "Per run x pair x category x juror of the panel: the juror's symmetrized score (mean over "
        "samples with both orders valid) and its mean valid score in each order."
    ),
    "jury_pairwise": (
        "Per run x pair x category: jury_score over the jurors' symmetrized scores by the run's rule "
        "(mean, median, weighted, or majority of signs with the tie rule), NULL below quorum; votes "
        "for A, B and tie; jurors expected and present."
    ),
    "jury_pairwise_orders": (
        "As jury_pairwise, per presented order (AB, BA), over the jurors' mean scores in that order: "
        "positive = the first-shown response wins. The preference report's jury verdicts."
    ),
    "classification_outcomes": (
        "Classification runs, per run x juror x item x sample: the label answered (predicted), the gold label, "
        "correct (NULL without gold) and invalid (no label matched, or a refusal: counted, never guessed)."
    ),
    "inventory_scores": (
        "Questionnaire runs, per run x item (target) x facet or factor: the mean of the jury's canonical item "
        "scores (reference scale, reverse keying applied), with items answered vs items in it."
    ),
    "generation_outcomes": "Generations with their call's outcome and raw text, refusal flag and exclusion reason.",
    "refusal_rates": (
        "Per study x generator x treatment variable x arm: answered responses, refusals and the refusal rate."
    ),
    "run_cost": (
        "Per run: what its calls cost in total (calls with a known price; offline jurors cost 0), how many have a "
        "known cost and how many answered calls have none (their model's price is unknown)."
    ),
    "run_summary": "Per run x juror (name as in that run): calls by status, requests made, tokens, cost, mean latency.",
}
