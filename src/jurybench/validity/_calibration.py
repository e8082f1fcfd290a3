"""Calibration (``calibrate``): the weights table's intervals against the weights that generated
the data.

A GLOBE-like design: 40 countries (the groups), each scored in two languages; three jurors whose
scores are the country's latent value plus noise of their own; the human panel mean
S = 0.5 J_1 + 0.3 J_2 + 0.2 J_3 + 0.4 language + 0.3 + a country effect + noise. Each replication
runs the whole per-criterion fit (every variant, the cross-validated choice, the shrinkage) and
reads the weights to report (least squares with jackknife intervals) and, for the record, the
applied winner's bootstrap intervals.
"""

from __future__ import annotations

import numpy as np

from jurybench.calibration import CalibrationData, fit_criterion
from jurybench.validity._claims import Claim, rate

WEIGHTS = {"j1": 0.5, "j2": 0.3, "j3": 0.2, "language": 0.4}
INTERCEPT = 0.3
METHODS = ["ols", "ridge", "nnls", "shrunk", "mean"]


def panel(rng: np.random.Generator, countries: int = 40, languages: int = 2) -> CalibrationData:
    n = countries * languages
    latent = np.repeat(rng.normal(3, 0.8, countries), languages) + rng.normal(0, 0.2, n)
    scores = np.column_stack([latent + rng.normal(0, s, n) for s in (0.4, 0.6, 0.8)])
    language = np.tile((np.arange(languages) > 0).astype(float), countries)
    country = np.repeat(rng.normal(0, 0.25, countries), languages)
    target = scores @ np.array([WEIGHTS[j] for j in ("j1", "j2", "j3")]) + WEIGHTS["language"] * language
    target = target + INTERCEPT + country + rng.normal(0, 0.2, n)
    return CalibrationData(
        "dimension",
        [f"c{i // languages}-{i % languages}" for i in range(n)],
        ["j1", "j2", "j3"],
        ["j1", "j2", "j3"],
        scores,
        target,
        [f"c{i // languages}" for i in range(n)],
        {"language": language},
    )


def coverage(replications: int, n_boot: int = 100) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """(reported least-squares intervals covering, applied winner's intervals covering, winners)."""
    rng = np.random.default_rng(17)
    reported = dict.fromkeys(WEIGHTS, 0)
    applied = dict.fromkeys(WEIGHTS, 0)
    winners: dict[str, int] = {}
    for r in range(replications):
        report = fit_criterion(
            panel(rng),
            cross_features=None,
            cross_names=None,
            methods=METHODS,
            test_size=0.2,
            folds=5,
            seed=r,
            n_boot=n_boot,
        )
        ci = report["least_squares"]["ci"]
        winner = report["winner"]
        winners[winner] = winners.get(winner, 0) + 1
        applied_ci = report["variants"][winner].get("coefficient_ci") or {}
        for name, true in WEIGHTS.items():
            reported[name] += ci[name]["low"] <= true <= ci[name]["high"]
            if name in applied_ci:
                applied[name] += applied_ci[name]["low"] <= true <= applied_ci[name]["high"]
    return reported, applied, winners


def claims(quick: bool) -> list[Claim]:
    replications = 80 if quick else 600
    reported, applied, winners = coverage(replications)
    chosen = ", ".join(f"{w} {k}" for w, k in sorted(winners.items(), key=lambda x: -x[1]))
    return [
        rate(
            "calibrate",
            f"the reported weight of {name} (least squares): 95 % interval covers 93-97 %",
            reported[name],
            replications,
            low=0.93,
            high=0.97,
            quick=quick,
            note=f"the applied winner's bootstrap interval: {applied[name] / replications:.0%} (winners: {chosen})",
        )
        for name in WEIGHTS
    ]
