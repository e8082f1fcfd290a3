"""Fixed-n statistics: Wilcoxon signed-rank (``stats directional``) and Friedman with its
post-hoc tests (``stats friedman``) against scipy and under their nulls, and the bootstrap
intervals of Cohen's d (``stats cohens-d``) against a known effect."""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import NDArray

from jurybench.stats.functions import cohens_d_cells, directional_differences, friedman_posthoc
from jurybench.validity._claims import Claim, rate

Array = NDArray[np.float64]
ALPHA = 0.05


def epsilons(rng: np.random.Generator, pairs: int, categories: int, shift: float = 0.0) -> Array:
    """Symmetrized scores on -2..2 in halves: (answer in one order - answer in the other) / 2."""
    ab = np.clip(np.rint(shift + rng.normal(0, 1.1, (pairs, categories))), -2, 2)
    ba = np.clip(np.rint(-shift + rng.normal(0, 1.1, (pairs, categories))), -2, 2)
    return np.asarray((ab - ba) / 2, dtype=float)


def wilcoxon_claims(studies: int, quick: bool) -> list[Claim]:
    from scipy.stats import wilcoxon

    rng = np.random.default_rng(7)
    worst, hits, tests = 0.0, 0, 0
    for _ in range(studies):
        eps = epsilons(rng, 40, 5)
        rows = directional_differences(eps, [f"c{j}" for j in range(5)])
        for j, row in enumerate(rows):
            x = eps[:, j]
            if np.any(x != 0):
                reference = float(wilcoxon(x, zero_method="wilcox", method="approx").pvalue)
                p = float(cast(float, row["p"]))
                worst = max(worst, abs(p - reference)) if not np.isnan(p) else worst
                hits += bool(p <= ALPHA)
                tests += 1
    return [
        Claim(
            "stats directional",
            "Wilcoxon p-values equal scipy's (max |difference|)",
            worst,
            (worst, worst),
            None,
            1e-12,
            tests,
            "scipy.stats.wilcoxon, normal approximation with tie correction",
            quick,
        ),
        rate(
            "stats directional",
            "Wilcoxon type-I error at alpha 5 % within 3-6 % (symmetric epsilon, ties)",
            hits,
            tests,
            low=0.03,
            high=0.06,
            quick=quick,
        ),
    ]


def friedman_claims(studies: int, quick: bool) -> list[Claim]:
    from scipy.stats import friedmanchisquare

    rng = np.random.default_rng(8)
    worst, hits, any_posthoc = 0.0, 0, 0
    for _ in range(studies):
        prompt = rng.normal(0, 0.7, (30, 1))
        scores = np.clip(np.rint(3 + prompt + rng.normal(0, 0.9, (30, 4))), 1, 5)
        out = friedman_posthoc(scores, ["a", "b", "c", "d"])
        reference = float(friedmanchisquare(*scores.T).pvalue)
        p = float(cast(float, out["p"]))
        worst = max(worst, abs(p - reference))
        hits += bool(p <= ALPHA)
        matrix = out["posthoc_holm"]
        assert isinstance(matrix, dict)
        any_posthoc += any(float(q) <= ALPHA for a in matrix for b, q in matrix[a].items() if a < b)
    return [
        Claim(
            "stats friedman",
            "Friedman p-values equal scipy's (max |difference|)",
            worst,
            (worst, worst),
            None,
            1e-12,
            studies,
            "scipy.stats.friedmanchisquare",
            quick,
        ),
        rate(
            "stats friedman",
            "Friedman type-I error at alpha 5 % within 3-6 % (four equal models, ties)",
            hits,
            studies,
            low=0.03,
            high=0.06,
            quick=quick,
        ),
        rate(
            "stats friedman",
            "Holm post-hoc: some pair declared different <= 5 % (family-wise, no effect)",
            any_posthoc,
            studies,
            high=ALPHA,
            quick=quick,
        ),
    ]


def cohens_d_claims(replications: int, quick: bool) -> list[Claim]:
    """95 % bootstrap intervals of d_avg for two arms of 60 runs with a true d of 0.5 (normal
    scores, equal SDs): coverage, one replication per cell of one call."""
    rng = np.random.default_rng(9)
    arm1 = rng.normal(0.5, 1.0, (60, replications))
    arm2 = rng.normal(0.0, 1.0, (60, replications))
    cells = cohens_d_cells(arm1, arm2, n_boot=1000 if quick else 2000, seed=3)["d_avg"]
    covered = int(np.sum((cells["low"] <= 0.5) & (cells["high"] >= 0.5)))
    return [
        rate(
            "stats cohens-d",
            "95 % bootstrap interval of d covers the true d 93-97 % (60 runs per arm)",
            covered,
            replications,
            low=0.93,
            high=0.97,
            quick=quick,
            note="percentile bootstrap, runs resampled within each arm",
        ),
    ]


def claims(quick: bool) -> list[Claim]:
    return [
        *wilcoxon_claims(100 if quick else 500, quick),
        *friedman_claims(200 if quick else 1000, quick),
        *cohens_d_claims(300 if quick else 1000, quick),
    ]
