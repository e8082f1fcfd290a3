"""The statistics as pure functions on arrays (no store): what the store-level functions in
``jurybench.stats`` compute, for data held elsewhere."""

from jurybench.stats._bias import Effect, bias_effects, cluster_ols
from jurybench.stats._bias_pairs import pair_bias_effects
from jurybench.stats._disparity import accuracy_table, disparity, gini
from jurybench.stats._drift import drift_figures
from jurybench.stats._effects import (
    FORMS,
    AnchorThresholds,
    anchor,
    cohens_d,
    cohens_d_cells,
    factor_pattern,
    item_level_spearman,
    mean_within_group_sd,
)
from jurybench.stats._held import Held, exact, held_labels, held_ols
from jurybench.stats._multiple import benjamini_hochberg, holm
from jurybench.stats._pairwise import (
    bootstrap_gaps,
    bootstrap_means,
    directional_differences,
    gap,
    gap_interval,
    no_difference_share,
    permutation_gap_p,
    positional_consistency,
    robustness,
    sign_flip_gap_p,
    treatment_gaps,
)
from jurybench.stats._pass_k import pass_k, pass_k_gap
from jurybench.stats._pointwise import (
    friedman_posthoc,
    kendall_rankings,
    mann_whitney,
    mean_t_interval,
    one_sample_t,
    welch_t,
)
from jurybench.stats._power import paired_power, pairs_needed, power_summary
from jurybench.stats._ppi import (
    VOTES_CLUSTER_SMALL_SAMPLE,
    VOTES_SMALL_SAMPLE,
    VOTES_WEIGHTED_SMALL_SAMPLE,
    labels_needed,
    power_tuning,
    ppi_mean,
    ppi_mean_weighted,
    slice_difference,
    small_sample_c,
)

__all__ = [
    "FORMS",
    "VOTES_CLUSTER_SMALL_SAMPLE",
    "VOTES_SMALL_SAMPLE",
    "VOTES_WEIGHTED_SMALL_SAMPLE",
    "AnchorThresholds",
    "Effect",
    "Held",
    "NotIdentifiable",
    "accuracy_table",
    "alpaca_winrate",
    "anchor",
    "benjamini_hochberg",
    "bias_effects",
    "bootstrap_gaps",
    "bootstrap_means",
    "bradley_terry",
    "bradley_terry_styled",
    "cluster_ols",
    "cohens_d",
    "cohens_d_cells",
    "directional_differences",
    "disparity",
    "drift_figures",
    "elo",
    "exact",
    "factor_pattern",
    "flatten",
    "friedman_posthoc",
    "gap",
    "gap_interval",
    "gini",
    "held_labels",
    "held_ols",
    "holm",
    "item_level_spearman",
    "kendall_rankings",
    "labels_needed",
    "length_controlled",
    "mann_whitney",
    "mean_t_interval",
    "mean_within_group_sd",
    "no_difference_share",
    "one_sample_t",
    "pair_bias_effects",
    "paired_power",
    "pairs_needed",
    "pass_k",
    "pass_k_gap",
    "permutation_gap_p",
    "positional_consistency",
    "power_summary",
    "power_tuning",
    "ppi_mean",
    "ppi_mean_weighted",
    "robustness",
    "sign_flip_gap_p",
    "slice_difference",
    "small_sample_c",
    "treatment_gaps",
    "welch_t",
    "win_rate",
]
from jurybench.stats._leaderboard import NotIdentifiable, bradley_terry, bradley_terry_styled, elo, win_rate
from jurybench.stats._registry import flatten
from jurybench.stats._winrate import alpaca_winrate, length_controlled
