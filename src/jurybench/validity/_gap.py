"""The gap test (``stats gap``): type-I error of G_a = G_b at alpha over null studies, and power
against the bootstrap test it replaced as the default, on the same alternatives."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from jurybench.stats import functions as _pairwise
from jurybench.validity._claims import Claim, rate

Array = NDArray[np.float64]
ALPHA = 0.05
# The category means both groups share under the null: 19 categories as in the persuasion
# audit, three present and sixteen absent (where |D_j| biases a bootstrap of G).
CATEGORIES = np.array([0.5, 0.3, -0.2] + [0.0] * 16)


def group(rng: np.random.Generator, pairs: int, means: Array) -> Array:
    """Symmetrized scores on -2..2 (averages of two orders' -2..2 answers, so halves occur)."""
    ab = np.clip(np.rint(means[None, :] + rng.normal(0, 1.1, (pairs, len(means)))), -2, 2)
    ba = np.clip(np.rint(-means[None, :] + rng.normal(0, 1.1, (pairs, len(means)))), -2, 2)
    return np.asarray((ab - ba) / 2, dtype=float)


def study(rng: np.random.Generator, shift: float, pairs: int, draws: int, seed: int) -> tuple[float, float]:
    """(permutation p, bootstrap p) for G_a = G_b; group b's first category moved by ``shift``."""
    a = group(rng, pairs, CATEGORIES)
    b = group(rng, pairs, CATEGORIES + np.eye(len(CATEGORIES))[0] * shift)
    _, perm = _pairwise.treatment_gaps({"a": a, "b": b}, n_boot=draws, seed=seed, test="permutation")
    _, boot = _pairwise.treatment_gaps({"a": a, "b": b}, n_boot=draws, seed=seed, test="bootstrap")
    return perm["a"]["b"], boot["a"]["b"]


def true_gap(means: Array, noise: float = 1.1) -> float:
    """G = sum |E epsilon_j| for :func:`group`'s data, exactly: E epsilon_j is the mean of one
    order's rounded, clipped answer (the other order's is its mirror image)."""
    from scipy.stats import norm

    values = np.arange(-2.0, 3.0)
    cuts = np.array([-np.inf, -1.5, -0.5, 0.5, 1.5, np.inf])
    expected = [float(np.diff(norm.cdf((cuts - m) / noise)) @ values) for m in means]
    return float(np.sum(np.abs(expected)))


def interval_claim(replications: int, quick: bool) -> Claim:
    """The bias-aware 95 % interval of G (the default in ``stats gap``) covers the true G."""
    rng = np.random.default_rng(43)
    truth = true_gap(CATEGORIES)
    covered = percentile = 0
    for r in range(replications):
        eps = group(rng, 80, CATEGORIES)
        (result,), _ = _pairwise.treatment_gaps({"g": eps}, n_boot=1000, seed=r)
        covered += bool(result.ci_low <= truth <= result.ci_high)
        percentile += bool(result.pct_low <= truth <= result.pct_high)
    return rate(
        "stats gap",
        "the bias-aware 95 % interval of G covers the true G >= 95 % (16 of 19 categories absent)",
        covered,
        replications,
        low=0.95,
        quick=quick,
        note=f"true G = {truth:.3f}; 80 pairs; the percentile interval covered {percentile / replications:.1%}",
    )


def claims(quick: bool) -> list[Claim]:
    studies = 200 if quick else 1000
    draws = 400 if quick else 1000
    rng = np.random.default_rng(42)
    null = [study(rng, 0.0, 80, draws, 1000 + s) for s in range(studies)]
    power_studies = 100 if quick else 400
    alt = [study(rng, 0.4, 80, draws, 9000 + s) for s in range(power_studies)]
    perm_power = sum(p <= ALPHA for p, _ in alt)
    boot_power = sum(b <= ALPHA for _, b in alt)
    type_one = rate(
        "stats gap",
        "G_a = G_b: type-I error of the default (permutation) test within 3-6 % at alpha 5 %",
        sum(p <= ALPHA for p, _ in null),
        studies,
        low=0.03,
        high=0.06,
        quick=quick,
        note=f"the bootstrap test (--test bootstrap): {sum(b <= ALPHA for _, b in null) / studies:.1%}",
    )
    power = rate(
        "stats gap",
        "G_a = G_b: the default test's power at least the bootstrap test's (same alternatives)",
        perm_power,
        power_studies,
        low=boot_power / power_studies,
        quick=False,  # the same studies for both: the comparison is paired, read at its point
        note=f"bootstrap power {boot_power / power_studies:.1%}",
    )
    return [type_one, power, interval_claim(150 if quick else 500, quick)]
