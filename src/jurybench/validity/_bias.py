"""stats bias: a lean is a rater's answer moving with a feature *with the truth held fixed*
(stats/_held.py). Checked here by simulation with known truth, with the functions ``stats bias``
fits with:

Pointwise (40 prompts x 4 responses whose length, markdown headers, list items and bold spans
vary within prompts; a latent quality per response; two annotators and three jurors score it
on 1..5, rounded and clipped, with noise; the jury their mean; four features x four raters,
Holm over the sixteen): a planted length lean is found; none is found where there is none; a
length the humans reward as much is no lean; a juror whose scale is compressed against sharper
humans, while the truth itself rises with length, leans on nothing; the interval covers a
planted lean.

Pairwise (200 pairs, one a prompt; each pair's length difference and markdown counts; verdicts
in both orders, symmetrized): a juror blind to length on pairs whose gold winner is the shorter
in 82 % of them (as adversarial sets are built; one gold label a pair, taken as exact) leans on
nothing; with five annotators a pair who reward length exactly as jurors do, the jury row (its
jurors' mean) leans on nothing; a planted lean (a linear change in the chance of choosing A, so
the lean has one true value) is found, and its interval covers it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from jurybench.stats.functions import Held, bias_effects, held_labels, holm, pair_bias_effects
from jurybench.validity._claims import Claim, rate

if TYPE_CHECKING:
    from jurybench.stats.functions import Effect

PROMPTS, PER_PROMPT = 40, 4
FEATURES = ["tokens", "headers", "lists", "bold"]
PLANTED = 0.3  # points per 100 tokens: the length bias the power claim is about
PAIRS = 500
PAIR_FEATURES = ["tokens", "lists"]
ANNOTATORS = 5  # a pair's annotators in the 'annotated' design
PAIR_LEAN = 0.08  # added to the chance of choosing A per 100 tokens A has more: epsilon moves by 0.16


def _annotated(ratings: list[np.ndarray], ids: list[str]) -> Held:
    """The humans' mean of each subject with its noise from their disagreement (as stored)."""
    stacked = np.array(ratings)
    k = len(ratings)
    return held_labels(
        (i, float(stacked[:, j].mean()), k, float(stacked[:, j].var(ddof=1)) if k > 1 else None)
        for j, i in enumerate(ids)
    )


def run(
    rng: np.random.Generator,
    *,
    bias: float,
    humans_like_length: float = 0.0,
    rounded: bool = True,
    compressed: float = 1.0,
) -> list[dict[str, float | str | bool]]:
    """One simulated pointwise run's effects (rater, feature, estimate, interval, Holm-adjusted
    significance). ``compressed``: juror 2 uses that share of the humans' scale (0.5: half)."""
    n = PROMPTS * PER_PROMPT
    prompt = np.repeat(np.arange(PROMPTS), PER_PROMPT)
    x = np.column_stack(
        [rng.uniform(0.1, 4.0, n), rng.binomial(1, 0.3, n), rng.poisson(1.0, n), rng.poisson(0.5, n)]
    ).astype(float)
    truth = rng.normal(0, 0.5, PROMPTS)[prompt] + rng.normal(0, 1, n) + humans_like_length * (x[:, 0] - 2.05)

    def rated(shift: np.ndarray | float, scale: float = 1.0) -> np.ndarray:
        value = 3 + scale * truth + shift + rng.normal(0, 0.6, n)
        return np.clip(np.round(value), 1, 5) if rounded else value

    ids = [f"i{k}" for k in range(n)]
    humans = _annotated([rated(0.0) for _ in range(2)], ids)
    jurors = {f"juror{j}": rated(bias * x[:, 0] if j == 1 else 0.0, compressed if j == 2 else 1.0) for j in (1, 2, 3)}
    jurors["jury"] = np.mean(list(jurors.values()), axis=0)
    clusters = {i: str(prompt[k]) for k, i in enumerate(ids)}
    features = {i: list(x[k]) for k, i in enumerate(ids)}
    effects = []
    for rater, scores in jurors.items():
        for e in bias_effects(dict(zip(ids, scores, strict=True)), features, FEATURES, clusters, humans=humans):
            e.rater = rater
            effects.append(e)
    return _adjusted(effects)


def _adjusted(effects: list[Effect]) -> list[dict[str, float | str | bool]]:
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


def pair_run(rng: np.random.Generator, *, design: str, lean: float = 0.0) -> list[dict[str, float | str | bool]]:
    """One simulated pairwise run (see the module): ``design`` 'adversarial' (a gold label a
    pair, the gold winner the shorter in 82 %; jurors right 75 % of the time whatever the
    lengths) or 'annotated' (five annotators; the chance of choosing A is 0.12 + 0.76 sigmoid(the
    quality difference + 0.8 a 100 tokens more) for humans and jurors alike, plus ``lean`` a 100
    tokens for juror 1, never past 0 or 1)."""
    ids = [f"p{k}" for k in range(PAIRS)]
    lists = rng.poisson(1.0, PAIRS) - rng.poisson(1.0, PAIRS)
    if design == "adversarial":
        gold = np.where(rng.random(PAIRS) < 0.5, 1.0, -1.0)  # +1: A wins
        shorter_wins = rng.random(PAIRS) < 0.82
        size = rng.uniform(0.2, 3.0, PAIRS)  # the length gap, in 100 tokens
        longer_is_a = np.where(shorter_wins, gold < 0, gold > 0)
        tokens = np.where(longer_is_a, size, -size)

        def chose_a(juror: int) -> np.ndarray:  # right 75 % of the time, whatever the lengths
            right = rng.random(PAIRS) < 0.75
            return np.where(right, gold > 0, gold < 0)

        humans = held_labels((i, float(g), 1, None) for i, g in zip(ids, gold, strict=True))
    else:
        tokens = rng.uniform(-1.5, 1.5, PAIRS)
        quality = rng.normal(0, 2.0, PAIRS)
        base = 0.12 + 0.76 / (1 + np.exp(-(quality + 0.8 * tokens)))

        def chose_a(juror: int) -> np.ndarray:
            chance = base + (lean * tokens if juror == 1 else 0.0)
            return rng.random(PAIRS) < chance

        votes = [np.where(rng.random(PAIRS) < base, 1.0, -1.0) for _ in range(ANNOTATORS)]
        humans = _annotated(votes, ids)
    differences = {i: [float(tokens[k]), float(lists[k])] for k, i in enumerate(ids)}
    clusters = {i: i for i in ids}
    epsilons = {}
    for juror in (1, 2, 3):  # both orders, symmetrized in the A frame: (a first + b first) / 2
        first, second = chose_a(juror), chose_a(juror)
        epsilons[f"juror{juror}"] = (np.where(first, 1.0, -1.0) + np.where(second, 1.0, -1.0)) / 2
    epsilons["jury"] = np.mean([epsilons[f"juror{j}"] for j in (1, 2, 3)], axis=0)  # its jurors' mean
    effects = []
    for rater, eps in epsilons.items():
        found = pair_bias_effects(dict(zip(ids, eps, strict=True)), differences, PAIR_FEATURES, clusters, humans=humans)
        for e in found:
            e.rater = rater
            effects.append(e)
    return _adjusted(effects)


def _any(effects: list[dict[str, float | str | bool]], *, rater: str | None = None, feature: str | None = None) -> bool:
    return any(
        e["significant"]
        for e in effects
        if (rater is None or e["rater"] == rater) and (feature is None or e["feature"] == feature)
    )


def _covers(effects: list[dict[str, float | str | bool]], truth: float) -> bool:
    e = next(e for e in effects if e["rater"] == "juror1" and e["feature"] == "tokens")
    return bool(e["low"] <= truth <= e["high"])  # type: ignore[operator]


def claims(quick: bool) -> list[Claim]:
    reps = 150 if quick else 1000
    rng = np.random.default_rng(53)
    power = sum(_any(run(rng, bias=PLANTED), rater="juror1", feature="tokens") for _ in range(reps))
    null = sum(_any(run(rng, bias=0.0)) for _ in range(reps))
    liked = sum(_any(run(rng, bias=0.0, humans_like_length=0.3), feature="tokens") for _ in range(reps))
    compressed = sum(
        _any(run(rng, bias=0.0, humans_like_length=0.3, compressed=0.5), feature="tokens") for _ in range(reps)
    )
    covered = sum(_covers(run(rng, bias=PLANTED, rounded=False), PLANTED) for _ in range(reps))
    blind = sum(_any(pair_run(rng, design="adversarial")) for _ in range(reps))
    jury_alike = sum(_any(pair_run(rng, design="annotated"), rater="jury", feature="tokens") for _ in range(reps))
    leaning = [pair_run(rng, design="annotated", lean=PAIR_LEAN) for _ in range(reps)]
    pair_power = sum(_any(r, rater="juror1", feature="tokens") for r in leaning)
    pair_covered = sum(_covers(r, 2 * PAIR_LEAN) for r in leaning)
    design = f"{PROMPTS} prompts x {PER_PROMPT} responses, two annotators, three jurors, 1..5 scores"
    pairs = f"{PAIRS} pairs, both orders symmetrized, three jurors and the jury (their mean)"
    return [
        rate(
            "stats bias",
            f"a length bias of {PLANTED} points per 100 tokens is found (Holm over 4 features x 4 "
            "raters) with power >= 0.8",
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
            "a juror using half the humans' scale, the truth rising with length, no lean: a length finding <= 0.05",
            compressed,
            reps,
            high=0.05,
            quick=quick,
            note=design
            + "; the error-based figure of before (score - human mean) reported a length bias in 12 % of 200 runs",
        ),
        rate(
            "stats bias",
            "95 % interval of a planted length effect (unrounded scores) covers it 93-97 %",
            covered,
            reps,
            low=0.93,
            high=0.97,
            quick=quick,
            note=design + "; prompts share an effect (clustered), CR1 with t on G - 1, the annotators' noise corrected",
        ),
        rate(
            "stats bias",
            "pairs whose gold winner is the shorter in 82 %, jurors blind to length: any finding "
            "(Holm over 2 features x 4 raters) <= 0.05",
            blind,
            reps,
            high=0.05,
            quick=quick,
            note=pairs + "; one gold label a pair, jurors right 75 %; the error-based figure found a length bias "
            "in 200 of 200 runs",
        ),
        rate(
            "stats bias",
            "the jury row, humans rewarding length exactly as the jurors: a length finding <= 0.05",
            jury_alike,
            reps,
            high=0.05,
            quick=quick,
            note=pairs + "; five annotators a pair",
        ),
        rate(
            "stats bias",
            f"a pairwise lean (+{PAIR_LEAN} to the chance of choosing A per 100 tokens more) is found "
            "with power >= 0.8",
            pair_power,
            reps,
            low=0.8,
            quick=quick,
            note=pairs,
        ),
        rate(
            "stats bias",
            "95 % interval of the planted pairwise lean (+0.16 epsilon per 100 tokens) covers it 93-97 %",
            pair_covered,
            reps,
            low=0.93,
            high=0.97,
            quick=quick,
            note=pairs + "; five annotators a pair, their noise corrected",
        ),
    ]
