"""Jury selection (``jury select``): on simulated pilots with planted truth, how often the chosen
jury is worse than the full jury on fresh items, and how often a jury as cheap as the planted
good pair is found.

Five simulated jurors: two cheap ones (noise 0.5) whose mean is about as accurate as the full
jury's equal-weight mean, two mid-priced (noise 0.8) and one dear and noisy (1.3); each has its
own bias and slope. A pilot is 40 prompts x 4 items with a human label (truth + noise 0.5). The
chosen jury is then judged on 400 fresh items: each jury's mean rescaled by least squares on 200
of them and compared with the truth on the other 200.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from jurybench.calibration import PilotRows, SubJury, choose_sub_jury, no_worse, score_candidates
from jurybench.validity._claims import Claim, rate

Array = NDArray[np.float64]
NOISE = np.array([0.5, 0.5, 0.8, 0.8, 1.3])
BIAS = np.array([0.3, -0.2, 0.1, -0.3, 0.4])
SLOPE = np.array([0.9, 1.1, 0.95, 1.05, 0.8])
COST = np.array([1.0, 1.0, 5.0, 5.0, 20.0])
PAIR_COST = 2.0
HUMAN_NOISE = 0.5
NAMES = ["cheap-a", "cheap-b", "mid-a", "mid-b", "dear"]


def items(rng: np.random.Generator, prompts: int, per_prompt: int) -> tuple[Array, Array, list[str]]:
    """(truth, jurors' scores, prompt of each item)."""
    effect = np.repeat(rng.normal(0, 0.6, prompts), per_prompt)
    truth = 3.0 + effect + rng.normal(0, 0.6, prompts * per_prompt)
    scores = BIAS[None, :] + SLOPE[None, :] * truth[:, None] + rng.normal(0, 1, (len(truth), 5)) * NOISE[None, :]
    return truth, scores, [f"p{i // per_prompt}" for i in range(len(truth))]


def pilot_candidates(rng: np.random.Generator, seed: int) -> tuple[list[SubJury], PilotRows]:
    truth, scores, groups = items(rng, 40, 4)
    labels = truth + rng.normal(0, HUMAN_NOISE, len(truth))
    data = PilotRows("pointwise", [(f"s{i}", "q") for i in range(len(truth))], groups, scores, labels, ["q"])
    cost: dict[str, float | None] = {name: float(c) for name, c in zip(NAMES, COST, strict=True)}
    candidates, _ = score_candidates(
        data, [(n, n) for n in NAMES], cost, dict.fromkeys(NAMES), method="mean", folds=5, seed=seed
    )
    return candidates, data


def fresh_errors(rng: np.random.Generator, juries: list[tuple[str, ...]]) -> list[Array]:
    """Each jury's squared errors against the truth on 200 fresh items, its mean rescaled on 200 others."""
    truth, scores, _ = items(rng, 100, 4)
    fit, test = np.arange(0, 400, 2), np.arange(1, 400, 2)
    out = []
    for jury in juries:
        mean = scores[:, [NAMES.index(n) for n in jury]].mean(axis=1)
        slope, intercept = np.polyfit(mean[fit], truth[fit], 1)
        out.append((slope * mean[test] + intercept - truth[test]) ** 2)
    return out


def trial(seed: int) -> dict[str, float]:
    """One pilot, the new rule's and the old rule's choices, and how each fares on fresh items."""
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(seed)
    candidates, data = pilot_candidates(rng, seed)
    full = next(c for c in candidates if len(c.jurors) == 5)
    chosen, _, margin = choose_sub_jury(candidates, full, max_error=None, budget=None, subjects=160, groups=data.groups)
    old = next(
        c
        for c in sorted(candidates, key=lambda c: (c.cost_per_subject or 0.0, c.error, len(c.jurors)))
        if no_worse(c.error_folds, full.error_folds)
    )
    full_sq, new_sq, old_sq = fresh_errors(rng, [full.jurors, chosen.jurors, old.jurors])

    def fares(sq: Array) -> tuple[bool, bool]:
        """(significantly worse than the full jury on the fresh items, worse by more than the margin)."""
        worse = bool(ttest_rel(sq, full_sq, alternative="greater").pvalue < 0.05)
        return worse, float(sq.mean() - full_sq.mean()) > margin

    new_worse, new_beyond = fares(new_sq) if chosen is not full else (False, False)
    old_worse, old_beyond = fares(old_sq) if old is not full else (False, False)
    return {
        "new_worse": new_worse,
        "new_beyond": new_beyond,
        "new_cheap": (chosen.cost_per_subject or 0.0) <= PAIR_COST,
        "old_worse": old_worse,
        "old_beyond": old_beyond,
        "old_cheap": (old.cost_per_subject or 0.0) <= PAIR_COST,
        "margin": margin,
    }


def claims(quick: bool) -> list[Claim]:
    seeds = 30 if quick else 100
    runs = [trial(s) for s in range(seeds)]

    def count(key: str) -> int:
        return sum(bool(r[key]) for r in runs)

    note = (
        f"the former rule (t-test over fold means): significantly worse {count('old_worse')}/{seeds}, "
        f"beyond the margin {count('old_beyond')}/{seeds}"
    )
    return [
        rate(
            "jury select",
            "chosen jury significantly worse than the full jury on fresh items <= 10 %",
            count("new_worse"),
            seeds,
            high=0.10,
            quick=quick,
            note=note,
        ),
        rate(
            "jury select",
            "chosen jury worse than the full jury by more than the margin <= 5 %",
            count("new_beyond"),
            seeds,
            high=0.05,
            quick=quick,
        ),
        rate(
            "jury select",
            "a jury as cheap as the planted pair chosen >= 60 %",
            count("new_cheap"),
            seeds,
            low=0.60,
            quick=quick,
            note=f"the former rule: {count('old_cheap')}/{seeds}, with the errors above",
        ),
    ]
