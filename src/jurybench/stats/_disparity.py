"""Disparity across groups (e.g. languages) for classification tasks.

Accuracy counts invalid outputs as wrong (total-instance accuracy); the invalid rate is
reported beside it. Groups whose invalid rate exceeds a threshold can be left out.
Inequity is the Gini coefficient of per-group accuracy:
G = 2 * sum_i i * x_(i) / (n * sum x) - (n + 1) / n over values sorted ascending (i = 1..n).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
RESAMPLE_UNITS = ("instances", "groups")


def _defined(reduce: Any, values: Any) -> float:
    """``reduce`` over the values that are defined; NaN (and no warning) when none is."""
    found = [v for v in values if not np.isnan(v)]
    return float(reduce(found)) if found else float("nan")


def gini(values: Array) -> float:
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    total = x.sum()
    if n == 0 or total == 0:
        return float("nan")
    return float(2 * np.sum(np.arange(1, n + 1) * x) / (n * total) - (n + 1) / n)


def accuracy_table(
    group: list[str], category: list[str], correct: Array, invalid: Array
) -> dict[str, dict[str, dict[str, float]]]:
    """Per group and category (and '*' = all categories): n, accuracy, invalid rate."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    g_arr, c_arr = np.asarray(group), np.asarray(category)
    correct = np.asarray(correct, dtype=bool) & ~np.asarray(invalid, dtype=bool)
    invalid = np.asarray(invalid, dtype=bool)
    for g in sorted(set(group)):
        in_g = g_arr == g
        out[g] = {}
        for c in ["*", *sorted(set(category))]:
            mask = in_g if c == "*" else in_g & (c_arr == c)
            n = int(mask.sum())
            out[g][c] = {
                "n": float(n),
                "accuracy": float(correct[mask].mean()) if n else float("nan"),
                "invalid_rate": float(invalid[mask].mean()) if n else float("nan"),
            }
    return out


def disparity(
    group: list[str],
    category: list[str],
    correct: Array,
    invalid: Array,
    *,
    max_invalid_rate: float | None = 0.10,
    reference: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    resample: str = "instances",
    clusters: list[str] | None = None,
) -> dict[str, object]:
    """Accuracy by group x category, Gini inequity with a bootstrap CI, max-min gaps, reference premium.

    ``resample`` is the bootstrap's unit for the Gini CI: ``instances`` (the rows within each
    group, groups fixed; the default) or ``groups`` (the kept groups themselves, drawn with
    replacement with their observed accuracies, as a study that treats its languages as a
    sample of languages does) or ``clusters:<column>`` (``clusters``: a label per row, e.g. the
    source item of translated items; a drawn cluster brings its rows in every group)."""
    if not isinstance(n_boot, int) or isinstance(n_boot, bool) or n_boot < 10:
        from jurybench.errors import JurybenchError

        raise JurybenchError(
            f"--boot {n_boot!r}: the bootstrap needs at least 10 draws.",
            hint="Give --boot 2000 (the default) or another whole number >= 10.",
        )
    if resample.startswith("clusters:"):
        if clusters is None:
            from jurybench.errors import JurybenchError

            raise JurybenchError(f"--resample {resample}: the input has no cluster column.")
    elif resample not in RESAMPLE_UNITS:
        from jurybench.errors import JurybenchError

        raise JurybenchError(
            f"--resample {resample!r} is not valid.",
            hint=f"Valid: {', '.join(RESAMPLE_UNITS)}, or clusters:<column of the input>.",
        )
    table = accuracy_table(group, category, correct, invalid)
    excluded = sorted(
        g for g, t in table.items() if max_invalid_rate is not None and t["*"]["invalid_rate"] > max_invalid_rate
    )
    kept = [g for g in table if g not in excluded]
    accuracies = np.array([table[g]["*"]["accuracy"] for g in kept])
    categories = sorted(set(category))
    gaps = {}
    for c in categories:
        vals = [table[g][c]["accuracy"] for g in kept if table[g][c]["n"] > 0]
        gaps[c] = float(max(vals) - min(vals)) if vals else float("nan")
    rng = np.random.default_rng(seed)
    draws = np.empty(n_boot)
    if clusters is not None and resample.startswith("clusters:"):  # whole clusters, across the groups
        g_arr = np.asarray(group)
        ok = np.asarray(correct, dtype=bool) & ~np.asarray(invalid, dtype=bool)
        labels, member = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
        drawn = rng.multinomial(len(labels), np.full(len(labels), 1 / len(labels)), size=n_boot).astype(float)
        weight = drawn[:, member]  # B x rows: how often each row's cluster was drawn
        per_group = []
        for g in kept:
            rows = g_arr == g
            with np.errstate(all="ignore"):
                per_group.append((weight[:, rows] @ ok[rows].astype(float)) / weight[:, rows].sum(axis=1))
        stacked = np.column_stack(per_group)
        draws = np.array([gini(r) if not np.isnan(r).any() else np.nan for r in stacked])
    elif resample == "groups":  # the groups are the sample: draw them, keep each one's accuracy
        for b in range(n_boot):
            draws[b] = gini(accuracies[rng.integers(0, len(accuracies), len(accuracies))])
    else:  # the rows within each kept group
        g_arr = np.asarray(group)
        ok = np.asarray(correct, dtype=bool) & ~np.asarray(invalid, dtype=bool)
        per_group = [ok[g_arr == g].astype(float) for g in kept]
        for b in range(n_boot):
            draws[b] = gini(np.array([v[rng.integers(0, len(v), len(v))].mean() for v in per_group]))
    defined = draws[~np.isnan(draws)]
    low, high = np.percentile(defined, [2.5, 97.5]) if len(kept) > 1 and len(defined) else (float("nan"), float("nan"))
    result: dict[str, object] = {
        "groups": kept,
        "excluded_for_invalid_rate": excluded,
        "max_invalid_rate": max_invalid_rate,
        "accuracy": table,
        "gini": gini(accuracies),
        "gini_ci": [float(low), float(high)],
        "resample": resample,
        "max_min_gap": gaps,
        "mean_gap": _defined(np.mean, gaps.values()),
        "max_gap": _defined(np.max, gaps.values()),
    }
    if all(t["*"]["invalid_rate"] == 1 for t in table.values()):  # said as such, never a blank row
        result["no_valid_answers"] = True
        result["note"] = "no valid answers in any group: accuracy, Gini and gaps are undefined"
    if reference is not None:
        if reference not in table:
            from jurybench.errors import JurybenchError

            raise JurybenchError(
                f"reference group {reference!r} is not in the data.", hint=f"Groups: {', '.join(table)}."
            )
        result["reference"] = reference
        result["reference_premium"] = (
            float(table[reference]["*"]["accuracy"] - np.mean(accuracies)) if len(accuracies) else float("nan")
        )
    return result
