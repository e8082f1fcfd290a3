"""Statistics over stored judgments: each statistic reads a run, records the result in
``stats_results`` and returns a tidy DataFrame (``.attrs["result_id"]`` names the recorded row).

Every statistic is a :class:`Statistic` in a registry (:func:`statistics`); the CLI's
``stats`` commands, the service's ``/v1/stats/...`` endpoints and study steps are derived from
it, and :func:`register_statistic` adds one of your own (docs/extending.md). The same
statistics on plain arrays are in :mod:`jurybench.stats.functions`. Importing this package is
light: numpy, scipy and pandas load when a statistic runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jurybench.declare import Param, Parameter, param
from jurybench.stats import anytime, params
from jurybench.stats._api import result_rows, results
from jurybench.stats._registry import (
    ENTRY_POINT_GROUP,
    Statistic,
    flatten,
    get_statistic,
    register_statistic,
    statistic,
    statistics,
    unregister_statistic,
)
from jurybench.stats._silent import jurors_without_valid_answers, named_jurors, no_valid_answers_note, silent_label
from jurybench.stats.builtin import (
    bias,
    cohens_d,
    consistency,
    directional,
    disparity,
    drift,
    friedman,
    gap,
    item_spearman,
    kendall,
    leaderboard,
    mannwhitney,
    pass_k,
    power,
    ppi,
    robustness,
    sequential,
    ttest,
    welch,
    winrate,
)

if TYPE_CHECKING:
    from jurybench.stats import functions
    from jurybench.stats._bias_run import bias as compute_bias
    from jurybench.stats._drift import anchor_ids, draw_anchors
    from jurybench.stats._drift import drift as compute_drift
    from jurybench.stats._effects import AnchorThresholds
    from jurybench.stats._slices import run_dimensions
    from jurybench.stats._store import jsonable, record_result

_LAZY = {
    "compute_bias": ("jurybench.stats._bias_run", "bias"),
    "compute_drift": ("jurybench.stats._drift", "drift"),
    "draw_anchors": ("jurybench.stats._drift", "draw_anchors"),
    "anchor_ids": ("jurybench.stats._drift", "anchor_ids"),
    "functions": ("jurybench.stats.functions", None),
    "AnchorThresholds": ("jurybench.stats._effects", "AnchorThresholds"),
    "run_dimensions": ("jurybench.stats._slices", "run_dimensions"),
    "jsonable": ("jurybench.stats._store", "jsonable"),
    "record_result": ("jurybench.stats._store", "record_result"),
}


def __getattr__(name: str) -> Any:
    """The names that need numpy or scipy, imported when first used."""
    if name not in _LAZY:
        raise AttributeError(f"module 'jurybench.stats' has no attribute {name!r}")
    import importlib

    module, attribute = _LAZY[name]
    found = importlib.import_module(module)
    return found if attribute is None else getattr(found, attribute)


__all__ = [
    "ENTRY_POINT_GROUP",
    "AnchorThresholds",
    "Param",
    "Parameter",
    "Statistic",
    "anchor_ids",
    "anytime",
    "bias",
    "cohens_d",
    "compute_bias",
    "compute_drift",
    "consistency",
    "directional",
    "disparity",
    "draw_anchors",
    "drift",
    "flatten",
    "friedman",
    "functions",
    "gap",
    "get_statistic",
    "item_spearman",
    "jsonable",
    "jurors_without_valid_answers",
    "kendall",
    "leaderboard",
    "mannwhitney",
    "named_jurors",
    "no_valid_answers_note",
    "param",
    "params",
    "pass_k",
    "power",
    "ppi",
    "record_result",
    "register_statistic",
    "result_rows",
    "results",
    "robustness",
    "run_dimensions",
    "sequential",
    "silent_label",
    "statistic",
    "statistics",
    "ttest",
    "unregister_statistic",
    "welch",
    "winrate",
]
