"""Multiple-comparison corrections (NaN p-values are kept and not counted)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]


def _adjust(pvalues: ArrayLike, sorted_adjust: Callable[[Array], Array]) -> Array:
    """Apply an adjustment to the ascending non-NaN p-values and put them back in place."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full_like(p, np.nan)
    ok = ~np.isnan(p)
    order = np.argsort(p[ok])
    result = np.empty(int(ok.sum()))
    result[order] = np.minimum(sorted_adjust(p[ok][order]), 1.0)
    out[ok] = result
    return out


def holm(pvalues: ArrayLike) -> Array:
    """Holm-Bonferroni adjusted p-values: (m - i) p_(i), made monotone, capped at 1."""
    return _adjust(pvalues, lambda q: np.maximum.accumulate((len(q) - np.arange(len(q))) * q))


def benjamini_hochberg(pvalues: ArrayLike) -> Array:
    """Benjamini-Hochberg adjusted p-values: m p_(i) / i, made monotone from the top, capped at 1."""
    return _adjust(pvalues, lambda q: np.minimum.accumulate((q * len(q) / np.arange(1, len(q) + 1))[::-1])[::-1])
