"""Migration 1: the core tables (rubrics, jurors, items, pairs, runs, calls, judgments, human labels) and the first views."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment

# The views this migration changed; their current definitions are in store/_views.py.
VIEWS = (
    "pointwise_scores",
    "pairwise_symmetrized",
    "juror_order_bias",
    "juror_position_stats",
    "jury_pointwise",
    "jury_pairwise",
    "run_summary",
)


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
