"""The built-in statistics, one module each, registered as a third party's are
(:func:`jurybench.stats.register_statistic`)."""

from __future__ import annotations

from jurybench.stats.builtin.bias import bias
from jurybench.stats.builtin.cohens_d import cohens_d
from jurybench.stats.builtin.compare import mannwhitney, welch
from jurybench.stats.builtin.consistency import consistency
from jurybench.stats.builtin.directional import directional
from jurybench.stats.builtin.disparity import disparity
from jurybench.stats.builtin.drift import drift
from jurybench.stats.builtin.friedman import friedman
from jurybench.stats.builtin.gap import gap
from jurybench.stats.builtin.item_spearman import item_spearman
from jurybench.stats.builtin.kendall import kendall
from jurybench.stats.builtin.leaderboard import leaderboard
from jurybench.stats.builtin.pass_k import pass_k
from jurybench.stats.builtin.power import power
from jurybench.stats.builtin.ppi import ppi
from jurybench.stats.builtin.robustness import robustness
from jurybench.stats.builtin.sequential import sequential
from jurybench.stats.builtin.ttest import ttest
from jurybench.stats.builtin.winrate import winrate

BUILTIN = (
    directional,
    gap,
    consistency,
    robustness,
    friedman,
    ttest,
    welch,
    mannwhitney,
    kendall,
    cohens_d,
    item_spearman,
    disparity,
    leaderboard,
    power,
    winrate,
    sequential,
    ppi,
    bias,
    drift,
    pass_k,
)


def register() -> None:
    """Register the built-in statistics (the entry point ``jurybench.statistics: builtin``)."""
    from jurybench.stats._registry import register_statistic

    for stat in BUILTIN:
        register_statistic(stat)


__all__ = [
    "BUILTIN",
    "bias",
    "cohens_d",
    "consistency",
    "directional",
    "disparity",
    "drift",
    "friedman",
    "gap",
    "item_spearman",
    "kendall",
    "leaderboard",
    "mannwhitney",
    "pass_k",
    "power",
    "ppi",
    "register",
    "robustness",
    "sequential",
    "ttest",
    "welch",
    "winrate",
]
