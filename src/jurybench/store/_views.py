"""The store's views, defined once: the current definition of each, in an order where every
view comes after the views it reads.

Views are the reporting surface (docs/schema.md): every statistic, page and report reads them.
A migration no longer carries view SQL forward: it names the views it changes (its module's
``VIEWS``), and once the pending migrations are applied every view is made again from here
(:func:`create_views`), so a store at any migration ends with these definitions. To change a
view, change it here and add a migration that names it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

# The calibrated scores, read through a materialized CTE: DuckDB 2.0.0 pushed a run filter into
# the LEFT JOIN's calibrated side, proved it empty and dropped a LIMIT (migration m007).
CALIBRATED = (
    "calibrated AS MATERIALIZED (SELECT run_id, calibration_id, subject_id, criterion, score FROM calibrated_scores), "
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


def _jury_pointwise() -> str:
    """The jury's score per run x item x criterion, by the run's rule."""
    return f"""
        WITH {CALIBRATED}agg AS (
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
        LEFT JOIN calibrated cs ON cs.run_id = a.run_id AND cs.calibration_id = ju.calibration_id
             AND cs.subject_id = a.item_id AND cs.criterion = a.criterion"""


def _jury_pairwise(orders: bool) -> str:
    """The jury's symmetrized score per run x pair x category (``orders``: per order shown)."""
    value, keys = (
        ("CASE o.presented_order WHEN 'AB' THEN juror_score_ab ELSE juror_score_ba END", ", o.presented_order")
        if orders
        else ("juror_epsilon", "")
    )
    source = "juror_pairwise" if not keys else "juror_pairwise CROSS JOIN (VALUES ('AB'), ('BA')) AS o(presented_order)"
    return f"""
        WITH {CALIBRATED}per_juror AS (
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
        LEFT JOIN calibrated cs ON cs.run_id = a.run_id AND cs.calibration_id = ju.calibration_id
             AND cs.subject_id = a.pair_id AND cs.criterion = a.category"""


_POINTWISE_SCORES = """
    SELECT j.rubric_hash, j.juror_key, ju.name AS juror, j.item_id, i.model, i.language,
                   j.sample_index, j.criterion, j.score, j.status, j.reason, j.call_key
            FROM pointwise_judgments j
            JOIN jurors ju USING (juror_key)
            LEFT JOIN items i USING (item_id)"""

_PAIRWISE_SYMMETRIZED = """
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

_CALIBRATED_ITEMS = """
    SELECT c.run_id, c.calibration_id, k.name AS calibration, c.criterion, c.score,
                   c.n_imputed, i.*
            FROM calibrated_scores c
            JOIN calibrations k USING (calibration_id)
            JOIN items i ON i.item_id = c.subject_id"""

_RUN_SUBJECTS = """
    SELECT DISTINCT rc.run_id, c.subject_kind, c.subject_id
            FROM run_calls rc JOIN calls c USING (call_key)"""


def _juror_view(judged: str, columns: str, *, subject: str, dimension: str, kind: str) -> str:
    """A per-juror view: a row for every subject x dimension x juror of a run, judged or not, its
    errors counted; ``judged`` is the CTE(s) of its judgments by (run_id, ``subject``,
    ``dimension``, juror_key) and ``columns`` what it adds to the row's keys."""
    return f"""
    WITH {judged}), errors AS (
                SELECT rc.run_id, c.subject_id AS {subject}, c.juror_key, count(*) AS n_error
                FROM run_calls rc JOIN calls c USING (call_key)
                WHERE c.status = 'error' AND c.subject_kind = '{kind}'
                GROUP BY ALL
            )
            SELECT s.run_id, s.subject_id AS {subject}, d.dimension AS {dimension}, rj.juror_key, rj.name AS juror,
                   rj.weight,
{columns}
            FROM run_subjects s
            JOIN runs r ON r.run_id = s.run_id
            LEFT JOIN juries ju ON ju.jury_id = r.jury_id
            JOIN rubric_dimensions d ON d.rubric_hash = r.rubric_hash
            JOIN run_jurors rj ON rj.run_id = s.run_id
            LEFT JOIN judged j ON j.run_id = s.run_id AND j.{subject} = s.subject_id
                 AND j.{dimension} = d.dimension AND j.juror_key = rj.juror_key
            LEFT JOIN errors e ON e.run_id = s.run_id AND e.{subject} = s.subject_id AND e.juror_key = rj.juror_key
            WHERE s.subject_kind = '{kind}'"""


_JUROR_POINTWISE = _juror_view(
    """judged AS (
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
            """,
    """                   CASE WHEN ju.scores = 'expected' THEN j.juror_expected ELSE j.juror_discrete END AS juror_score,
                   coalesce(j.n_samples, 0) AS n_samples, coalesce(j.n_valid, 0) AS n_valid,
                   coalesce(j.n_invalid, 0) AS n_invalid, coalesce(j.n_refusal, 0) AS n_refusal,
                   coalesce(e.n_error, 0) AS n_error,
                   j.juror_discrete, j.juror_expected, coalesce(j.n_expected, 0) AS n_expected""",
    subject="item_id",
    dimension="criterion",
    kind="item",
)

_JUROR_PAIRWISE = _juror_view(
    """sym AS (
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
            """,
    """                   CASE WHEN ju.scores = 'expected' THEN j.juror_expected_epsilon ELSE j.juror_discrete_epsilon END
                       AS juror_epsilon,
                   CASE WHEN ju.scores = 'expected' THEN j.expected_ab ELSE j.discrete_ab END AS juror_score_ab,
                   CASE WHEN ju.scores = 'expected' THEN j.expected_ba ELSE j.discrete_ba END AS juror_score_ba,
                   coalesce(j.n_samples, 0) AS n_samples, coalesce(j.n_valid, 0) AS n_valid,
                   coalesce(j.n_excluded, 0) AS n_excluded, coalesce(e.n_error, 0) AS n_error,
                   j.juror_discrete_epsilon, j.juror_expected_epsilon, coalesce(j.n_expected, 0)::BIGINT AS n_expected""",
    subject="pair_id",
    dimension="category",
    kind="pair",
)

_RUN_SUMMARY = """
    SELECT rc.run_id, rj.name AS juror, ju.model, c.juror_key,
                   count(*) AS n_calls,
                   count(*) FILTER (WHERE c.status = 'ok') AS n_ok,
                   count(*) FILTER (WHERE c.status = 'invalid') AS n_invalid,
                   count(*) FILTER (WHERE c.status = 'refusal') AS n_refusal,
                   count(*) FILTER (WHERE c.status = 'error') AS n_error,
                   sum(c.attempts) AS n_requests,
                   sum(c.prompt_tokens) AS prompt_tokens,
                   sum(c.completion_tokens) AS completion_tokens,
                   sum(c.cost_usd) FILTER (WHERE c.run_id = rc.run_id) AS cost_usd,
                   count(c.cost_usd) AS n_costed,
                   count(*) FILTER (WHERE c.run_id IS DISTINCT FROM rc.run_id) AS n_cached,
                   avg(c.latency_ms) AS mean_latency_ms
            FROM run_calls rc JOIN calls c USING (call_key) JOIN jurors ju USING (juror_key)
            LEFT JOIN run_jurors rj ON rj.run_id = rc.run_id AND rj.juror_key = c.juror_key
            GROUP BY ALL"""

_JUROR_ORDER_BIAS = """
    SELECT m.run_id, ru.name AS rubric, s.rubric_hash, s.juror_key, ju.name AS juror, ju.model,
                   count(*) FILTER (WHERE s.status = 'valid') AS n_valid,
                   count(*) FILTER (WHERE s.status <> 'valid') AS n_excluded,
                   avg(CASE WHEN sign(s.score_ab) <> sign(-s.score_ba) THEN 1.0 ELSE 0.0 END)
                       FILTER (WHERE s.status = 'valid') AS flip_rate,
                   avg(CASE WHEN s.score_ab = 0 AND s.score_ba = 0 THEN 1.0 ELSE 0.0 END)
                       FILTER (WHERE s.status = 'valid') AS both_tie_rate
            FROM pairwise_symmetrized s
            JOIN (SELECT DISTINCT rc.run_id, j.rubric_hash, j.juror_key, j.pair_id
                  FROM pairwise_judgments j JOIN run_calls rc USING (call_key)) m USING (rubric_hash, juror_key, pair_id)
            JOIN jurors ju USING (juror_key) JOIN rubrics ru USING (rubric_hash)
            GROUP BY ALL"""

_JUROR_POSITION_STATS = """
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

_CLASSIFICATION_OUTCOMES = """
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

_INVENTORY_SCORES = """
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

_GENERATION_OUTCOMES = """
    SELECT g.study, g.call_key, g.unit_id, g.prompt_id, g.generator_key, ju.name AS generator, ju.model,
                   g.treatment, g.language, g.sample_index, g.item_id, c.status AS call_status, c.reason AS call_reason,
                   c.response_text, c.finish_reason, g.refused, g.refusal_reason, g.excluded
            FROM generations g JOIN jurors ju ON ju.juror_key = g.generator_key
            LEFT JOIN calls c USING (call_key)"""

_REFUSAL_RATES = """
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

_RUN_COST = """
    SELECT rc.run_id,
                   count(*) AS n_calls,
                   CASE WHEN count(c.cost_usd) > 0  -- unknown only when no call has a known cost
                        THEN coalesce(sum(c.cost_usd) FILTER (WHERE c.run_id = rc.run_id), 0) END AS cost_usd,
                   count(c.cost_usd) AS n_cost_known,
                   count(*) FILTER (WHERE c.cost_usd IS NULL AND c.status <> 'error') AS n_cost_unknown,
                   count(*) FILTER (WHERE c.run_id IS DISTINCT FROM rc.run_id) AS n_cached,
                   coalesce(sum(c.cost_usd) FILTER (WHERE c.run_id IS DISTINCT FROM rc.run_id), 0) AS cached_cost_usd
            FROM run_calls rc JOIN calls c USING (call_key)
            GROUP BY rc.run_id"""


_CONVERSATION_SUMMARY = """
    SELECT c.item_id, i.dataset, c.task_id, c.trial, c.agent_model, c.n_messages,
                   count(*) FILTER (WHERE m.role = 'user') AS n_user_turns,
                   count(*) FILTER (WHERE m.role = 'assistant') AS n_assistant_turns,
                   count(*) FILTER (WHERE m.role = 'tool') AS n_tool_results,
                   c.n_tool_calls,
                   coalesce(sum(m.n_chars), 0) AS n_chars,
                   c.outcome, c.outcome_passed, c.outcome_source
            FROM conversations c JOIN items i USING (item_id) LEFT JOIN messages m USING (item_id)
            GROUP BY c.item_id, i.dataset, c.task_id, c.trial, c.agent_model, c.n_messages, c.n_tool_calls,
                     c.outcome, c.outcome_passed, c.outcome_source"""

_CONVERSATION_TOOLS = """
    SELECT item_id, tool, count(*) AS n_calls,
                   count(*) FILTER (WHERE result_position IS NULL) AS n_unanswered,
                   coalesce(sum(result_chars), 0) AS result_chars
            FROM tool_calls GROUP BY item_id, tool"""


def views() -> list[tuple[str, str]]:
    """Every view's name and its query, in creation order."""
    return [
        ("pointwise_scores", _POINTWISE_SCORES),
        ("pairwise_symmetrized", _PAIRWISE_SYMMETRIZED),
        ("calibrated_items", _CALIBRATED_ITEMS),
        ("run_subjects", _RUN_SUBJECTS),
        ("juror_pointwise", _JUROR_POINTWISE),
        ("jury_pointwise", _jury_pointwise()),
        ("juror_pairwise", _JUROR_PAIRWISE),
        ("jury_pairwise", _jury_pairwise(orders=False)),
        ("jury_pairwise_orders", _jury_pairwise(orders=True)),
        ("run_summary", _RUN_SUMMARY),
        ("juror_order_bias", _JUROR_ORDER_BIAS),
        ("juror_position_stats", _JUROR_POSITION_STATS),
        ("classification_outcomes", _CLASSIFICATION_OUTCOMES),
        ("inventory_scores", _INVENTORY_SCORES),
        ("generation_outcomes", _GENERATION_OUTCOMES),
        ("refusal_rates", _REFUSAL_RATES),
        ("run_cost", _RUN_COST),
        ("conversation_summary", _CONVERSATION_SUMMARY),
        ("conversation_tools", _CONVERSATION_TOOLS),
    ]


def create_views(con: Connection) -> None:
    """Make every view from its current definition (replacing what a store had)."""
    for name, query in views():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {query}")
