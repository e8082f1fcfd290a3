"""What each view holds, for docs/schema.md and the views' catalog comments."""

from __future__ import annotations

VIEW_DOCS = {
    "conversation_summary": (
        "Per conversation: its task and trial, messages by role, tool calls, characters, and its verified outcome."
    ),
    "conversation_tools": "Per conversation x tool: calls made, calls no result answers, characters of the results.",
    "calibrated_items": "Calibrated pointwise scores joined to their items.",
    "pointwise_scores": "Pointwise judgments with juror names and item model/language.",
    "pairwise_symmetrized": (
        "Per juror x pair x category x sample: both orders side by side and the symmetrized "
        "score epsilon = (score_ab - score_ba) / 2, NULL unless both orders are valid."
    ),
    "juror_order_bias": (
        "Per run x juror (with the rubric's name) over valid symmetrized scores: flip_rate (the preferred item "
        "changes when the order is swapped: sign(score_ab) <> sign(-score_ba)) and the "
        "share where both orders were exact ties."
    ),
    "juror_position_stats": (
        "Per run x juror (with the rubric's name) over single-order judgments: first-position win rate, "
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
        "Per run: what the run spent (cost_usd: the calls it made, with a known price; a simulated juror's declared "
        "cost counts, other offline jurors cost 0), how many calls have a known cost and how many answered calls have "
        "none (their model's price is unknown), and the calls it reused from the cache apart (n_cached, and "
        "cached_cost_usd: what they cost the earlier run that made them, not spent again)."
    ),
    "run_summary": (
        "Per run x juror (name as in that run): calls by status, requests made, tokens, cost spent by the run "
        "(calls reused from the cache, n_cached, cost nothing again), mean latency."
    ),
}
