"""Migration 11: judgments from anywhere. How each answer was structured; expected scores and
probabilistic verdicts (from token probabilities or imported); a jury that aggregates either;
single-order designs; empty responses; continuous human targets."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection, comment

# The views this migration changed; their current definitions are in store/_views.py.
VIEWS = ("juror_pointwise", "juror_pairwise")

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
