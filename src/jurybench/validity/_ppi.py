"""Prediction-powered inference (``stats ppi``): coverage of the humans' mean with a biased jury,
where the jury's own interval misses; and active sampling against uniform sampling at the same
number of labels.

Each study has N = 1000 subjects with a true score t (the humans' mean label is t plus their
noise), a hardness h (how much the jurors disagree on the subject; most subjects are easy, a
few are hard) and a jury that overrates by half a point with an error that grows with h. The
target is the humans' mean over the population the N subjects are drawn from (for the mean over
the N themselves the intervals are conservative: the jury's part then has no sampling error). Active sampling draws each subject with a chance that
mixes uniform and the jurors' spread half and half (``annotations sample --design active``);
it is compared with uniform Poisson draws of the same expected size, analysed alike.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import NDArray

from jurybench.annotations import active_probabilities, proportional_draw
from jurybench.stats.functions import (
    ppi_mean,
    ppi_mean_weighted,
    slice_difference,
    small_sample_c,
)
from jurybench.validity._claims import Claim, coverage, mean_ratio, rate

Array = NDArray[np.float64]
N = 1000
LABELS = 100
BIAS = 0.5
TRUE_MEAN = 3.0  # of the humans' labels, over the population the subjects come from


def population(rng: np.random.Generator) -> tuple[Array, Array, Array]:
    """(humans' labels, jury scores, jurors' spread) for N subjects."""
    truth = rng.normal(TRUE_MEAN, 1.0, N)
    hardness = rng.gamma(0.6, 0.4, N)
    humans = truth + rng.normal(0, 0.2, N)
    jury = truth + BIAS + rng.normal(0, 1, N) * (0.05 + hardness)
    spread = hardness * rng.uniform(0.7, 1.3, N)  # what the jurors' disagreement shows of it
    return humans, jury, spread


def study(rng: np.random.Generator) -> dict[str, float]:
    humans, jury, spread = population(rng)
    target = TRUE_MEAN  # the mean over the population the N subjects are drawn from
    drawn = rng.choice(N, size=LABELS, replace=False)
    uniform = ppi_mean(humans[drawn], jury[drawn], jury)
    p = active_probabilities(spread, LABELS)
    picked = np.flatnonzero(rng.random(N) < p)
    active = ppi_mean_weighted(humans[picked], jury[picked], p[picked], jury)
    even = np.full(N, LABELS / N)
    poisson = np.flatnonzero(rng.random(N) < even)
    alike = ppi_mean_weighted(humans[poisson], jury[poisson], even[poisson], jury)
    return {
        "uniform_covers": uniform["ci_low"] <= target <= uniform["ci_high"],
        "uniform_width": uniform["ci_high"] - uniform["ci_low"],
        "jury_covers": uniform["jury_low"] <= target <= uniform["jury_high"],
        "human_covers": uniform["human_low"] <= target <= uniform["human_high"],
        "human_width": uniform["human_high"] - uniform["human_low"],
        "active_covers": active["ci_low"] <= target <= active["ci_high"],
        "active_width": active["ci_high"] - active["ci_low"],
        "active_labels": float(len(picked)),
        "poisson_width": alike["ci_high"] - alike["ci_low"],
    }


def claims(quick: bool) -> list[Claim]:
    studies = 150 if quick else 1000
    rng = np.random.default_rng(23)
    runs = [study(rng) for _ in range(studies)]

    def count(key: str) -> int:
        return sum(bool(r[key]) for r in runs)

    uniform_width = float(np.mean([r["uniform_width"] for r in runs]))
    poisson_width = float(np.mean([r["poisson_width"] for r in runs]))
    return [
        rate(
            "stats ppi",
            "95 % PPI interval of the humans' mean covers 93-97 % (a jury half a point too high, 100 of 1,000 labelled)",
            count("uniform_covers"),
            studies,
            low=0.93,
            high=0.97,
            quick=quick,
            note=f"the jury's own interval covered {count('jury_covers') / studies:.0%}; the labels alone "
            f"{count('human_covers') / studies:.0%}, {float(np.mean([r['human_width'] for r in runs])) / uniform_width:.2f} "
            "x as wide",
        ),
        rate(
            "stats ppi",
            "active sampling: 95 % interval covers 93-97 %",
            count("active_covers"),
            studies,
            low=0.93,
            high=0.97,
            quick=quick,
            note=f"about {float(np.mean([r['active_labels'] for r in runs])):.0f} labels a study",
        ),
        mean_ratio(
            "stats ppi",
            "active sampling: interval width <= 1.0 x uniform sampling's at the same number of labels",
            [r["active_width"] for r in runs],
            poisson_width,
            high=1.0,
            quick=quick,
            note="uniform Poisson draws of the same expected size, the same estimator",
        ),
        cluster_claim(quick),
        *few_label_claims(quick),
        *few_cluster_claims(quick),
        *hanna_like_claims(quick),
        *few_active_claims(quick),
        *few_vote_claims(quick),
        *few_vote_design_claims(quick),
        *few_stratified_claims(quick),
    ]


PROMPTS = 300
PER_PROMPT = 4
DRAWN_PROMPTS = 25


def clustered_study(rng: np.random.Generator) -> tuple[bool, bool]:
    """(covered with --cluster, covered without) for prompts of four items sharing a prompt
    effect in the humans' labels and in the jury's error; whole prompts drawn."""
    prompt_effect = np.repeat(rng.normal(0, 0.6, PROMPTS), PER_PROMPT)
    jury_effect = np.repeat(rng.normal(0, 0.5, PROMPTS), PER_PROMPT)
    truth = TRUE_MEAN + prompt_effect + rng.normal(0, 0.4, PROMPTS * PER_PROMPT)
    humans = truth + rng.normal(0, 0.2, len(truth))
    jury = truth + BIAS + jury_effect + rng.normal(0, 0.3, len(truth))
    labels = np.repeat(np.arange(PROMPTS), PER_PROMPT)
    chosen = rng.choice(PROMPTS, DRAWN_PROMPTS, replace=False)
    drawn = np.flatnonzero(np.isin(labels, chosen))
    with_clusters = ppi_mean(humans[drawn], jury[drawn], jury, clusters=(labels[drawn], labels))
    plain = ppi_mean(humans[drawn], jury[drawn], jury)

    def covers(out: dict[str, float]) -> bool:
        return bool(out["ci_low"] <= TRUE_MEAN <= out["ci_high"])

    return covers(with_clusters), covers(plain)


def cluster_claim(quick: bool) -> Claim:
    studies = 150 if quick else 1000
    rng = np.random.default_rng(29)
    runs = [clustered_study(rng) for _ in range(studies)]
    return rate(
        "stats ppi",
        "--cluster prompt: 95 % interval covers 93-97 % (4 items a prompt, whole prompts drawn)",
        sum(w for w, _ in runs),
        studies,
        low=0.93,
        high=0.97,
        quick=quick,
        note=f"without --cluster: {sum(p for _, p in runs) / studies:.0%}",
    )


# Few labels (issue 57): 1..5 integer labels, symmetric and skewed, a jury of three integer
# jurors (each the label plus noise, rounded and clipped) whose mean is 0 or 0.5 too high.
SHAPES = {
    "symmetric": np.array([0.10, 0.20, 0.40, 0.20, 0.10]),
    "skewed": np.array([0.02, 0.04, 0.09, 0.25, 0.60]),  # skewness -1.6: most labels are 5
}
FEW = (10, 20, 30, 50, 100)
FEW_N = 1000


def few_label_study(rng: np.random.Generator, shape: str, bias: float, n: int) -> dict[str, float]:
    """One slice of FEW_N subjects with n labelled, as ``stats ppi`` analyses it."""
    p = SHAPES[shape]
    humans = rng.choice(np.arange(1, 6), size=FEW_N, p=p).astype(float)
    jurors = np.clip(np.round(humans[:, None] + rng.normal(0, 0.9, (FEW_N, 3))), 1, 5)
    jury = jurors.mean(axis=1) + bias
    drawn = rng.choice(FEW_N, n, replace=False)
    rest = np.delete(jury, drawn)
    return ppi_mean(humans[drawn], jury[drawn], rest, scale=(1, 5))


def few_label_claims(quick: bool) -> list[Claim]:
    """Coverage at n = 10..100 of the mean and of a two-slice difference (FIRST with the jury's
    bias, SECOND without, both of one shape: the difference's truth is 0), pooled over the four
    populations (symmetric and skewed, bias 0 and 0.5), each population's own rate in the note."""
    reps = 150 if quick else 2000
    rng = np.random.default_rng(31)
    out = []
    for n in FEW:
        cells: dict[str, list[tuple[bool, bool, bool, bool]]] = {}
        for shape, p in SHAPES.items():
            truth = float(np.dot(p, np.arange(1, 6)))
            for bias in (0.0, 0.5):
                runs = []
                for _ in range(reps):
                    first = few_label_study(rng, shape, bias, n)
                    second = few_label_study(rng, shape, 0.0, n)
                    diff = slice_difference(first, second, alpha=0.05)
                    runs.append(
                        (
                            bool(first["ci_low"] <= truth <= first["ci_high"]),
                            bool(diff["ci_low"] <= 0 <= diff["ci_high"]),
                            bool(first["human_low"] <= truth <= first["human_high"]),
                            bool(first["jury_low"] <= truth <= first["jury_high"]),
                        )
                    )
                cells[f"{shape}, bias {bias:g}"] = runs
        every = [r for runs in cells.values() for r in runs]

        def share(runs: list[tuple[bool, bool, bool, bool]], k: int) -> float:
            return sum(r[k] for r in runs) / len(runs)

        for k, what in ((0, "the mean"), (1, "a two-slice difference")):
            out.append(
                rate(
                    "stats ppi",
                    f"{n} labels: 95 % interval of {what} covers 93-97 % (1..5 labels, 1,000 subjects)",
                    sum(r[k] for r in every),
                    len(every),
                    low=0.93,
                    high=0.97,
                    quick=quick,
                    note="; ".join(f"{name} {share(runs, k):.1%}" for name, runs in cells.items())
                    + (
                        f"; the labels alone {share(every, 2):.1%}, the jury alone {share(every, 3):.1%}"
                        if k == 0
                        else ""
                    ),
                )
            )
    return out


def _latent_labels(rng: np.random.Generator, p: Array, latent: Array) -> Array:
    """1..5 labels with shares p (for a standard normal latent value), cut from ``latent``."""
    from scipy.stats import norm

    return (np.searchsorted(norm.ppf(np.cumsum(p)[:-1]), latent) + 1).astype(float)


def _integer_jury(rng: np.random.Generator, humans: Array, bias: float) -> tuple[Array, Array]:
    """(the jury's mean, the jurors' spread) of three integer jurors, each the label plus noise."""
    jurors = np.clip(np.round(humans[:, None] + rng.normal(0, 0.9, (len(humans), 3))), 1, 5)
    return jurors.mean(axis=1) + bias, jurors.std(axis=1)


FEW_CLUSTERS = (5, 10, 25)


def few_cluster_study(rng: np.random.Generator, shape: str, bias: float, g: int) -> bool:
    """Whole prompts drawn (g of 300, four items each; a prompt effect as large as the items' own,
    so half the labels' variance is the prompt's), ``stats ppi --cluster``'s interval: covers?"""
    prompt = np.repeat(rng.normal(0, 0.7, PROMPTS), PER_PROMPT)
    humans = _latent_labels(rng, SHAPES[shape], (prompt + rng.normal(0, 0.7, len(prompt))) / 0.99)
    jury, _ = _integer_jury(rng, humans, bias)
    labels = np.repeat(np.arange(PROMPTS), PER_PROMPT)
    drawn = np.isin(labels, rng.choice(PROMPTS, g, replace=False))
    out = ppi_mean(humans[drawn], jury[drawn], jury[~drawn], clusters=(labels[drawn], labels[~drawn]), scale=(1, 5))
    return bool(out["ci_low"] <= float(np.dot(SHAPES[shape], np.arange(1, 6))) <= out["ci_high"])


HANNA_PROMPTS, HANNA_STORIES = 96, 11  # HANNA's shape: 96 prompts, a story by each of 11 systems
HANNA_CLUSTERS = (10, 20)


def hanna_like_study(rng: np.random.Generator, g: int) -> tuple[bool, float]:
    """g of HANNA_PROMPTS prompts labelled whole: the humans' mean (rounded, 1..5) shares a prompt
    effect, and so does the jury's error (a jury that misreads some prompts, as LLM jurors do);
    (covers, the interval's width over the labels alone's, clustered alike)."""
    n = HANNA_PROMPTS * HANNA_STORIES
    truth = TRUE_MEAN + np.repeat(rng.normal(0, 0.5, HANNA_PROMPTS), HANNA_STORIES) + rng.normal(0, 0.6, n)
    humans = np.clip(np.round(truth + rng.normal(0, 0.5, n)), 1, 5)
    jury = truth + 0.4 + np.repeat(rng.normal(0, 0.4, HANNA_PROMPTS), HANNA_STORIES) + rng.normal(0, 0.5, n)
    labels = np.repeat(np.arange(HANNA_PROMPTS), HANNA_STORIES)
    drawn = np.isin(labels, rng.choice(HANNA_PROMPTS, g, replace=False))
    out = ppi_mean(humans[drawn], jury[drawn], jury[~drawn], clusters=(labels[drawn], labels[~drawn]), scale=(1, 5))
    # The target: the rounded labels' mean over the population (truth ~ N(3, 0.78^2), noise 0.5)
    covers = bool(out["ci_low"] <= HANNA_TARGET <= out["ci_high"])
    return covers, (out["ci_high"] - out["ci_low"]) / (out["human_high"] - out["human_low"])


def _hanna_target() -> float:
    """E[clip(round(t + e), 1, 5)] for t ~ N(3, 0.5^2 + 0.6^2) and e ~ N(0, 0.5^2), by quadrature."""
    from scipy.stats import norm

    sd = math.sqrt(0.5**2 + 0.6**2 + 0.5**2)
    cuts = norm.cdf((np.array([1.5, 2.5, 3.5, 4.5]) - TRUE_MEAN) / sd)
    shares = np.diff(np.concatenate([[0.0], cuts, [1.0]]))
    return float(np.dot(shares, np.arange(1, 6)))


HANNA_TARGET = _hanna_target()


def hanna_like_claims(quick: bool) -> list[Claim]:
    """--cluster on a HANNA-shaped design at 10 and 20 labelled prompts: coverage, and the width
    against the labels alone clustered the same way. (At 5 prompts it covered 92.8 % in 1,000
    runs: stats ppi warns below 10 clusters.)"""
    reps = 150 if quick else 1000
    rng = np.random.default_rng(43)
    out = []
    for g in HANNA_CLUSTERS:
        runs = [hanna_like_study(rng, g) for _ in range(reps)]
        design = f"{g} of {HANNA_PROMPTS} prompts of {HANNA_STORIES} stories, the jury's error sharing a prompt effect"
        claim = f"--cluster, {g} HANNA-like prompts labelled: 95 % interval covers 93-97 %"
        out.append(coverage("stats ppi", claim, sum(c for c, _ in runs), reps, quick=quick, note=design))
        out.append(
            mean_ratio(
                "stats ppi",
                f"--cluster, {g} HANNA-like prompts: width <= 1.0 x the clustered labels alone's",
                [w for _, w in runs],
                1.0,
                high=1.0,
                quick=quick,
                note=design,
            )
        )
    return out


def few_cluster_claims(quick: bool) -> list[Claim]:
    """Coverage with 5, 10 and 25 whole prompts labelled (20-100 labels), pooled over the four
    populations of the few-label claims, each one's rate in the note."""
    claim = "--cluster, {} prompts of 4 labelled: 95 % interval covers 93-97 % (1..5 labels)"
    return _coverage_by_size(few_cluster_study, np.random.default_rng(37), FEW_CLUSTERS, LABEL_CELLS, claim, quick)


# The four label populations the few-label claims pool over: two shapes, jury bias 0 and 0.5.
LABEL_CELLS = {f"{shape}, bias {bias:g}": (shape, bias) for shape in SHAPES for bias in (0.0, 0.5)}


def _coverage_by_size(
    study: Callable[[np.random.Generator, str, float, int], bool | None],
    rng: np.random.Generator,
    sizes: Iterable[int],
    cells: dict[str, tuple[str, float]],
    claim: str,
    quick: bool,
) -> list[Claim]:
    """One pooled coverage claim per sample size (``claim`` formatted with it): each population's
    ``study`` repeated 100 (quick) or 1,000 times, a None (fewer than two drawn) left out."""
    reps = 100 if quick else 1000
    out = []
    for size in sizes:
        runs = {
            name: [c for c in (study(rng, shape, shift, size) for _ in range(reps)) if c is not None]
            for name, (shape, shift) in cells.items()
        }
        out.append(_pooled(claim.format(size), runs, quick))
    return out


def _pooled(claim: str, cells: dict[str, list[bool]], quick: bool) -> Claim:
    """A coverage claim pooled over the populations, each one's own rate in the note."""
    every = [c for runs in cells.values() for c in runs]
    return rate(
        "stats ppi",
        claim,
        sum(every),
        len(every),
        low=0.93,
        high=0.97,
        quick=quick,
        note="; ".join(f"{name} {sum(runs) / len(runs):.1%}" for name, runs in cells.items()),
    )


def few_active_study(rng: np.random.Generator, shape: str, bias: float, n: int) -> bool | None:
    """An active sample of about n of FEW_N subjects (``annotations sample --design active``),
    analysed with its inclusion probabilities: covers? None when fewer than two were drawn."""
    humans = rng.choice(np.arange(1, 6), size=FEW_N, p=SHAPES[shape]).astype(float)
    jury, spread = _integer_jury(rng, humans, bias)
    chance = active_probabilities(spread, n)
    picked = np.flatnonzero(rng.random(FEW_N) < chance)
    if len(picked) < 2:
        return None
    out = ppi_mean_weighted(humans[picked], jury[picked], chance[picked], jury, scale=(1, 5))
    return bool(out["ci_low"] <= float(np.dot(SHAPES[shape], np.arange(1, 6))) <= out["ci_high"])


def few_active_claims(quick: bool) -> list[Claim]:
    """Coverage of active samples of about 10..100 labels, pooled over the four populations."""
    claim = "active sample of about {} labels: 95 % interval covers 93-97 % (1..5 labels, 1,000 subjects)"
    return _coverage_by_size(few_active_study, np.random.default_rng(41), FEW, LABEL_CELLS, claim, quick)


# Win rates (a preference or pairwise run: votes -1 for B, 0 a tie, +1 for A): the humans' shares
# of B, tie and A, and a jury of three voters each agreeing with the humans 3 times in 4 (else a
# vote at random), leaning to A in 0 or 30 % of their votes.
VOTES = {"even": np.array([0.45, 0.10, 0.45]), "lopsided": np.array([0.20, 0.05, 0.75])}
VOTE_VALUES = np.array([-1.0, 0.0, 1.0])
VOTE_CELLS = {f"{shape}, lean {lean:g}": (shape, lean) for shape in VOTES for lean in (0.0, 0.3)}


def _vote_jury(rng: np.random.Generator, humans: Array, lean: float) -> tuple[Array, Array]:
    """(the jury's mean vote, the voters' spread): three voters, each agreeing with the humans
    3 times in 4 (else a vote at random), then voting A with chance ``lean``."""
    n = len(humans)
    voters = np.where(rng.random((n, 3)) < 0.75, humans[:, None], rng.choice(VOTE_VALUES, size=(n, 3)))
    voters = np.where(rng.random((n, 3)) < lean, 1.0, voters)
    return voters.mean(axis=1), voters.std(axis=1)


def few_vote_study(rng: np.random.Generator, shape: str, lean: float, n: int) -> bool:
    """n of FEW_N pairs labelled, ``stats ppi``'s interval of the mean vote (its win rate is
    (mean + 1) / 2, so it covers exactly when the win rate's does): covers?"""
    humans = rng.choice(VOTE_VALUES, size=FEW_N, p=VOTES[shape])
    jury, _ = _vote_jury(rng, humans, lean)
    drawn = rng.choice(FEW_N, n, replace=False)
    out = ppi_mean(
        humans[drawn], jury[drawn], np.delete(jury, drawn), scale=(-1, 1), pseudo=small_sample_c("uniform", votes=True)
    )
    return bool(out["ci_low"] <= float(np.dot(VOTES[shape], VOTE_VALUES)) <= out["ci_high"])


def few_vote_claims(quick: bool) -> list[Claim]:
    """Coverage of a win rate from 10..100 labelled pairs, pooled over the four populations."""
    claim = "win rate from {} labelled pairs: 95 % interval covers 93-97 % (1,000 pairs)"
    return _coverage_by_size(few_vote_study, np.random.default_rng(43), FEW, VOTE_CELLS, claim, quick)


def few_vote_cluster_study(rng: np.random.Generator, shape: str, lean: float, g: int) -> bool:
    """Votes on whole prompts (g of 300, four pairs each; the prompt moves the humans' verdicts as
    much as the pair does), ``stats ppi --cluster``'s interval of the mean vote: covers?"""
    prompt = np.repeat(rng.normal(0, 0.7, PROMPTS), PER_PROMPT)
    humans = _latent_labels(rng, VOTES[shape], (prompt + rng.normal(0, 0.7, len(prompt))) / 0.99) - 2
    jury, _ = _vote_jury(rng, humans, lean)
    labels = np.repeat(np.arange(PROMPTS), PER_PROMPT)
    drawn = np.isin(labels, rng.choice(PROMPTS, g, replace=False))
    out = ppi_mean(
        humans[drawn],
        jury[drawn],
        jury[~drawn],
        clusters=(labels[drawn], labels[~drawn]),
        scale=(-1, 1),
        cluster_pseudo=small_sample_c("clusters", votes=True),
    )
    return bool(out["ci_low"] <= float(np.dot(VOTES[shape], VOTE_VALUES)) <= out["ci_high"])


def few_vote_active_study(rng: np.random.Generator, shape: str, lean: float, n: int) -> bool | None:
    """An active sample of about n of FEW_N pairs (chance rising with the voters' spread), the
    mean vote's interval weighted by 1 / pi: covers? None when fewer than two were drawn."""
    humans = rng.choice(VOTE_VALUES, size=FEW_N, p=VOTES[shape])
    jury, spread = _vote_jury(rng, humans, lean)
    chance = active_probabilities(spread, n)
    picked = np.flatnonzero(rng.random(FEW_N) < chance)
    if len(picked) < 2:
        return None
    out = ppi_mean_weighted(
        humans[picked], jury[picked], chance[picked], jury, scale=(-1, 1), pseudo=small_sample_c("active", votes=True)
    )
    return bool(out["ci_low"] <= float(np.dot(VOTES[shape], VOTE_VALUES)) <= out["ci_high"])


def few_vote_design_claims(quick: bool) -> list[Claim]:
    """Win rates from whole prompts (5, 10, 25 labelled) and from active samples (about 10..100
    pairs), pooled over the four vote populations, each one's rate in the note."""
    rng = np.random.default_rng(47)
    clustered = "win rate, --cluster, {} prompts of 4 pairs labelled: 95 % interval covers 93-97 %"
    active = "win rate, active sample of about {} pairs: 95 % interval covers 93-97 % (1,000 pairs)"
    return _coverage_by_size(few_vote_cluster_study, rng, FEW_CLUSTERS, VOTE_CELLS, clustered, quick) + (
        _coverage_by_size(few_vote_active_study, rng, FEW, VOTE_CELLS, active, quick)
    )


# The stratified design (``annotations sample --design stratified --stratify model``): four
# strata of unequal size whose humans differ (a shift of the latent score) and whose jury's bias
# differs too, so a sample analysed as uniform would be off wherever the allocation rounds.
STRATIFIED_PSEUDO = small_sample_c("stratified", votes=False)
STRATA = {"a": (500, -0.5, 0.0), "b": (250, 0.0, 0.5), "c": (150, 0.4, 1.0), "d": (100, 0.9, 1.5)}


def _stratum_truth(p: Array, shift: float) -> float:
    """The humans' mean label in a stratum: 1..5 cut from a latent N(shift, 1) at p's quantiles."""
    from scipy.stats import norm

    below = np.concatenate([[0.0], norm.cdf(norm.ppf(np.cumsum(p)[:-1]) - shift), [1.0]])
    return float(np.dot(np.diff(below), np.arange(1, 6)))


@functools.cache
def _strata() -> tuple[list[str], dict[str, str], Array, Array]:
    """STRATA laid out once over FEW_N subjects: their ids, each one's stratum, the humans' shift
    and the jury's bias multiplier of each subject."""
    names = [h for h, (size, _, _) in STRATA.items() for _ in range(size)]
    subjects = [f"s{i}" for i in range(FEW_N)]
    shift = np.array([STRATA[h][1] for h in names])
    lean = np.array([STRATA[h][2] for h in names])
    return subjects, dict(zip(subjects, names, strict=True)), shift, lean


def few_stratified_study(rng: np.random.Generator, shape: str, bias: float, n: int) -> bool:
    """n of FEW_N subjects by proportional allocation over the strata (``proportional_draw``, the
    sampler's own), analysed with their inclusion probabilities n_h / N_h: covers the mean?"""
    subjects, stratum_of, shift, lean = _strata()
    humans = _latent_labels(rng, SHAPES[shape], shift + rng.normal(0, 1, FEW_N))
    jury, _ = _integer_jury(rng, humans, 0.0)
    jury += bias * lean
    drawn = proportional_draw(rng, subjects, stratum_of, n)
    picked = np.array([int(s[1:]) for s in drawn])
    chance = np.array(list(drawn.values()))
    out = ppi_mean_weighted(humans[picked], jury[picked], chance, jury, scale=(1, 5), pseudo=STRATIFIED_PSEUDO)
    truth = sum(size * _stratum_truth(SHAPES[shape], s) for size, s, _ in STRATA.values()) / FEW_N
    return bool(out["ci_low"] <= truth <= out["ci_high"])


def few_stratified_claims(quick: bool) -> list[Claim]:
    """Coverage of stratified samples of 10..100 labels, pooled over the four populations."""
    claim = "stratified sample of {} labels (4 unequal strata): 95 % interval covers 93-97 % (1..5 labels)"
    return _coverage_by_size(few_stratified_study, np.random.default_rng(53), FEW, LABEL_CELLS, claim, quick)
