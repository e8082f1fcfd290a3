"""The humans' verdict held fixed: what ``stats bias --against humans`` conditions on.

The question is whether a rater's score (or symmetrized verdict) moves with a feature *holding
the truth fixed*. The truth is measured by the humans' mean label of each subject, which
carries the annotators' noise. Regressing the rater's score on the features and on that mean
leaves part of the truth unheld (the noisy mean is attenuated), and a feature tied to the truth
(length, where the gold winner is mostly the shorter) then takes up what was left: a finding for
a rater that cannot see the feature. The fix is the classical errors-in-variables correction
(method of moments; Fuller, *Measurement Error Models*, 1987, ch. 2; Carroll, Ruppert, Stefanski
and Crainiceanu, *Measurement Error in Nonlinear Models*, 2006, ch. 3): with Z the design
(intercept, the humans' mean, the features) and D the summed error variance of the humans' mean,
known from the annotators' own disagreement,

    beta = (Z'Z - D)^-1 Z'y,

whose sandwich variance comes from the estimating function psi_i = z_i (y_i - z_i'beta) +
d_i beta (d_i: subject i's error variance in the mean's place), summed per cluster; Student's t
on clusters - 1. A subject's error variance is its annotators' sample variance over their number;
a subject with one label takes the pooled variance of those with more. With one label a subject
throughout (a gold label), the mean is taken as exact; when it then takes at most three values
(A, B, tie) it enters as indicators, so the rater's dependence on the gold label is left free
(not forced to be linear), and a rater blind to a feature shows no effect of it whatever the
gold label's tie to the feature.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Array = NDArray[np.float64]


@dataclass
class Fit:
    """Coefficients and their cluster-robust standard errors from :func:`~jurybench.stats._bias.cluster_ols` and :func:`held_ols`."""

    beta: Array
    se: Array
    df: int
    n: int
    n_clusters: int


@dataclass(frozen=True)
class Held:
    """The humans' mean label per subject, and the variance of each mean's error (its
    annotators' disagreement over their number; 0 where it is taken as exact)."""

    means: dict[str, float]
    noise: dict[str, float]
    doubled: int = 0  # subjects with two labels or more: where the noise was measured

    def __contains__(self, subject: object) -> bool:
        return subject in self.means

    def __getitem__(self, subject: str) -> float:
        return self.means[subject]

    def __len__(self) -> int:
        return len(self.means)

    @property
    def exact(self) -> bool:
        return not any(self.noise.values())

    @property
    def reliability(self) -> float | None:
        """The share of the humans' means' spread that is not their noise: 1 - mean noise /
        variance of the means (None for fewer than two subjects; below 0 when the annotators'
        disagreement is larger than the subjects' differences)."""
        if len(self.means) < 2:
            return None
        spread = float(np.var(list(self.means.values()), ddof=1))
        if spread <= 0:
            return None
        return 1.0 - float(np.mean(list(self.noise.values()))) / spread

    def summary(self) -> dict[str, object]:
        """What a result says of the verdict held fixed: how, and how reliable."""
        r = self.reliability
        return {
            "how": self.how(),
            "subjects": len(self.means),
            "labelled_twice": self.doubled,
            "reliability": None if r is None else round(r, 6),
        }

    def how(self) -> str:
        """What was held fixed, in words (the readings' and the notes' phrase)."""
        if self.exact:
            return "the humans' label taken as exact (one label a subject: its noise cannot be measured)"
        return (
            f"the humans' mean, corrected for their disagreement (measured on {self.doubled} subjects labelled "
            "twice or more)"
        )


def exact(means: Mapping[str, float]) -> Held:
    """Labels taken as they are (a gold label, a simulation's truth)."""
    return Held(dict(means), dict.fromkeys(means, 0.0))


def held_labels(rows: Iterable[tuple[str, float, int, float | None]]) -> Held:
    """From (subject, mean label, number of labels, their sample variance or None): each
    subject's error variance is its own variance over its labels' number; one labelled once takes
    the pooled variance of those labelled more (0 when none is)."""
    listed = list(rows)
    spread = [(n - 1, var) for _, _, n, var in listed if n >= 2 and var is not None and math.isfinite(var)]
    dof = sum(d for d, _ in spread)
    pooled = sum(d * v for d, v in spread) / dof if dof else 0.0
    noise = {
        s: (var / n if n >= 2 and var is not None and math.isfinite(var) else pooled / max(n, 1))
        for s, _, n, var in listed
    }
    return Held({s: m for s, m, _, _ in listed}, noise, len(spread))


def truth_columns(held: Held, subjects: Sequence[str]) -> tuple[list[Array], int | None, Array, list[str]]:
    """The design's first columns for ``subjects``: the intercept and the humans' mean (its
    column's index, and each row's error variance), or, for an exact mean of at most three
    values, indicators of each but the first (no error column). Also their names."""
    values = np.array([held.means[s] for s in subjects], dtype=float)
    ones = np.ones(len(subjects))
    levels = sorted(set(np.round(values, 12)))
    if held.exact and len(levels) <= 3:
        dummies = [np.isclose(values, level).astype(float) for level in levels[1:]]
        return [ones, *dummies], None, np.zeros(len(subjects)), [f"humans={level:g}" for level in levels[1:]]
    noise = np.array([held.noise.get(s, 0.0) for s in subjects], dtype=float)
    return [ones, values], 1, noise, ["humans"]


def held_ols(y: Array, x: Array, clusters: Sequence[str], noisy: int | None, noise: Array) -> Fit | None:
    """Least squares of ``y`` on ``x`` with column ``noisy`` measured with error of per-row
    variance ``noise``, corrected by moments (the module's doc), with the cluster-robust sandwich
    of its estimating function and the CR1 factor G/(G-1) * (N-1)/(N-K); with no error (``noisy``
    None, or no variance) it is :func:`~jurybench.stats._bias.cluster_ols` exactly. None when it
    cannot be fitted: fewer than two clusters, no more rows than columns, collinear columns, or
    an error so large against the mean's spread that nothing of the truth is left to hold."""
    n, k = x.shape
    groups: dict[str, list[int]] = defaultdict(list)
    for row, g in enumerate(clusters):
        groups[g].append(row)
    g_count = len(groups)
    if g_count < 2 or n <= k:
        return None
    correction = np.zeros((k, k))
    if noisy is not None:
        correction[noisy, noisy] = float(np.sum(noise))
    moment = x.T @ x - correction
    if np.linalg.matrix_rank(x.T @ x) < k:
        return None
    if noisy is not None:
        centred = x[:, noisy] - x[:, noisy].mean()
        if float(centred @ centred) - correction[noisy, noisy] <= 0.05 * float(centred @ centred):
            return None  # the humans' noise is nearly all of their mean's spread
    bread = np.linalg.inv(moment)
    beta = bread @ (x.T @ y)
    resid = y - x @ beta
    scores = x * resid[:, None]
    if noisy is not None:
        scores[:, noisy] += noise * beta[noisy]
    meat = np.zeros((k, k))
    for rows in groups.values():
        s = scores[rows].sum(axis=0)
        meat += np.outer(s, s)
    factor = g_count / (g_count - 1) * (n - 1) / (n - k)
    cov = factor * bread @ meat @ bread
    return Fit(beta, np.sqrt(np.clip(np.diag(cov), 0, None)), g_count - 1, n, g_count)
