"""Migration 5: generation, classification and questionnaire studies."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment

# The views this migration changed; their current definitions are in store/_views.py.
VIEWS = ("classification_outcomes", "inventory_scores", "generation_outcomes", "refusal_rates")


def m005_studies(con: Connection) -> None:
    """Audit studies: questionnaire and classification judgments, generation under treatments, baselines."""
    con.execute("ALTER TABLE calls ADD COLUMN presentation JSON")
    comment(
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
    comment(
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
    comment(
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
    comment(
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
    comment(
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
    comment(
        con,
        "human_baselines",
        {
            "": "Published human reference values, imported as data: effect sizes or means per target and cell.",
            "statistic": "d (a human effect size) or mean (a human mean score)",
            "target": "what the value is for: a criterion, facet:<name> or factor:<name>",
            "cell": "the country, language or group it holds for ('' = every cell)",
        },
    )
