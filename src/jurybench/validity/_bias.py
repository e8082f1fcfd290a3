"""stats bias: a planted length bias is found, null features are not (after the correction),
a length humans reward as much is no bias, and the intervals cover a planted effect.

Each replication is a run as ``stats bias`` reads it: 40 prompts x 4 responses whose length
(tokens), markdown headers, list items and bold spans vary within prompts; a latent quality per
response; two annotators and three jurors who score it on 1..5 (rounded, clipped) with noise;
the jury their mean. Juror 1 may add a length bias; the truth may itself rise with length. The
effects are fitted by the functions ``stats bias`` uses (stats/_bias.py), four features x four
raters, Holm-adjusted over the sixteen."""

from __future__ import annotations

import numpy as np

from jurybench.stats.functions import bias_effects, holm
from jurybench.validity._claims import Claim, rate

PROMPTS, PER_PROMPT = 40, 4
FEATURES = ["tokens", "headers", "lists", "bold"]
PLANTED = 0.3  # points per 100 tokens: the length bias the power claim is about


def run(
    rng: np.random.Generator, *, bias: float, humans_like_length: float = 0.0, rounded: bool = True
) -> list[dict[str, float | str | bool]]:
    """One simulated run's effects (rater, feature, estimate, interval, adjusted p)."""
    n = PROMPTS * PER_PROMPT
    prompt = np.repeat(np.arange(PROMPTS), PER_PROMPT)
    x = np.column_stack(
        [rng.uniform(0.1, 4.0, n), rng.binomial(1, 0.3, n), rng.poisson(1.0, n), rng.poisson(0.5, n)]
    ).astype(float)
    truth = rng.normal(0, 0.5, PROMPTS)[prompt] + rng.normal(0, 1, n) + humans_like_length * (x[:, 0] - 2.05)

    def rated(shift: np.ndarray | float) -> np.ndarray:
        value = 3 + truth + shift + rng.normal(0, 0.6, n)
        return np.clip(np.round(value), 1, 5) if rounded else value

    humans = np.mean([rated(0.0) for _ in range(2)], axis=0)
    jurors = {f"juror{j}": rated(bias * x[:, 0] if j == 1 else 0.0) for j in (1, 2, 3)}
    jurors["jury"] = np.mean(list(jurors.values()), axis=0)
    ids = [f"i{k}" for k in range(n)]
    clusters = {i: str(prompt[k]) for k, i in enumerate(ids)}
    features = {i: list(x[k]) for k, i in enumerate(ids)}
    human = dict(zip(ids, humans, strict=True))
    effects = []
    for rater, scores in jurors.items():
        for e in bias_effects(dict(zip(ids, scores, strict=True)), features, FEATURES, clusters, humans=human):
            e.rater = rater
            effects.append(e)
    adjusted = holm([e.p for e in effects])
    return [
        {
            "rater": e.rater,
            "feature": e.feature,
            "estimate": e.estimate,
            "low": e.ci_low,
            "high": e.ci_high,
            "significant": bool(q <= 0.05),
        }
        for e, q in zip(effects, adjusted, strict=True)
    ]


def claims(quick: bool) -> list[Claim]:
    reps = 150 if quick else 1000
    rng = np.random.default_rng(53)
    power = sum(
        any(e["significant"] for e in run(rng, bias=PLANTED) if e["rater"] == "juror1" and e["feature"] == "tokens")
        for _ in range(reps)
    )
    null = sum(any(e["significant"] for e in run(rng, bias=0.0)) for _ in range(reps))
    liked = sum(
        any(e["significant"] for e in run(rng, bias=0.0, humans_like_length=0.3) if e["feature"] == "tokens")
        for _ in range(reps)
    )
    covered = sum(
        next(
            e["low"] <= PLANTED <= e["high"]  # type: ignore[operator]
            for e in run(rng, bias=PLANTED, rounded=False)
            if e["rater"] == "juror1" and e["feature"] == "tokens"
        )
        for _ in range(reps)
    )
    design = f"{PROMPTS} prompts x {PER_PROMPT} responses, two annotators, three jurors, 1..5 scores"
    return [
        rate(
            "stats bias",
            f"a length bias of {PLANTED} points per 100 tokens is found (Holm over 4 features x 4 raters) "
            "with power >= 0.8",
            power,
            reps,
            low=0.8,
            quick=quick,
            note=design,
        ),
        rate(
            "stats bias",
            "no bias anywhere: any finding at all (family-wise, Holm over 16 effects) <= 0.05",
            null,
            reps,
            high=0.05,
            quick=quick,
            note=design,
        ),
        rate(
            "stats bias",
            "humans reward length as much as the jurors do: a length bias reported <= 0.05",
            liked,
            reps,
            high=0.05,
            quick=quick,
            note=design + "; the truth rises 0.3 points per 100 tokens",
        ),
        rate(
            "stats bias",
            "95 % interval of a planted length effect (unrounded scores) covers it 93-97 %",
            covered,
            reps,
            low=0.93,
            high=0.97,
            quick=quick,
            note=design + "; prompts share an effect (clustered), CR1 with t on G - 1",
        ),
    ]
