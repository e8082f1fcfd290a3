"""Statistics over stored judgments: each function reads a run, records the result in
``stats_results`` and returns a tidy DataFrame (``.attrs["result_id"]`` names the recorded row).
The same statistics on plain arrays are in :mod:`jurybench.stats.functions`."""

from jurybench.stats import functions
from jurybench.stats._api import (
    ZERO_METHODS,
    cohens_d,
    consistency,
    directional,
    disparity,
    friedman,
    gap,
    item_spearman,
    kendall,
    leaderboard,
    mannwhitney,
    power,
    results,
    robustness,
    ttest,
    two_values,
    welch,
    winrate,
)
from jurybench.stats._effects import AnchorThresholds
from jurybench.stats._slices import run_dimensions
from jurybench.stats._store import jsonable, record_result
from jurybench.stats._tables import flatten

__all__ = [
    "ZERO_METHODS",
    "AnchorThresholds",
    "cohens_d",
    "consistency",
    "directional",
    "disparity",
    "flatten",
    "friedman",
    "functions",
    "gap",
    "item_spearman",
    "jsonable",
    "kendall",
    "leaderboard",
    "mannwhitney",
    "power",
    "record_result",
    "results",
    "robustness",
    "run_dimensions",
    "ttest",
    "two_values",
    "welch",
    "winrate",
]
