"""Sequential judging (``score --until``): false decisions under the null in five kinds of data,
and subjects judged against a fixed design of the same power at the same alpha.

Every study draws fresh data with a known mean. The sequence is read exactly as ``score --until``
reads it: observations in sampling order, a look every ``BATCH`` subjects (or clusters), stop
at the first look that meets the rule, judge at most ``CAP``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from jurybench.stats import anytime
from jurybench.validity._claims import Claim, mean_ratio, rate

Array = NDArray[np.float64]
ALPHA = 0.05
CAP = 400
BATCH = 10
SCALE = (1.0, 5.0)


def first_decision(values: Array, low: float, high: float, alpha: float, value: float, batch: int) -> tuple[bool, int]:
    """(decided, subjects judged) for excludes(value) looked at every ``batch`` observations."""
    path = anytime.log_capital(list(values), low, high, np.array([(value - low) / (high - low)]))[:, 0]
    crossed = np.flatnonzero(path >= math.log(1 / alpha))
    return _looked(int(crossed[0]) if len(crossed) else None, batch, len(values))


def _looked(first: int | None, batch: int, n: int) -> tuple[bool, int]:
    """(decided, judged) when the evidence first crossed at observation ``first`` (None: never),
    read at the look after it."""
    if first is None:
        return False, n
    return True, min(int(math.ceil((first + 1) / batch) * batch), n)


def legacy_decision(values: Array, low: float, high: float, alpha: float, value: float, batch: int) -> tuple[bool, int]:
    """The same for the normal-mixture sequence ``score --until`` used before (sigma = half the range)."""
    rho = anytime.legacy_rho(len(values), (high - low) / 2, alpha)
    for k in range(batch, len(values) + 1, batch):
        f = anytime.legacy_look(list(values[:k]), low, high, alpha, rho)
        if f["ci_low"] > value or f["ci_high"] < value:
            return True, k
    return False, len(values)


# -- data with a known mean ----------------------------------------------------------------------


def _rounded(rng: np.random.Generator, centre: Array | float, noise: Array) -> Array:
    return np.clip(np.rint(centre + noise), 1, 5)


def normal_like(rng: np.random.Generator, n: int, shift: float = 0.0) -> Array:
    return _rounded(rng, 3.0 + shift, rng.normal(0, 1.0, n))


SKEWED = np.array([0.04, 0.08, 0.18, 0.38, 0.32])  # a skewed 1..5 distribution


def skewed(rng: np.random.Generator, n: int) -> Array:
    return rng.choice(np.arange(1.0, 6.0), size=n, p=SKEWED)


def heavy_tailed(rng: np.random.Generator, n: int) -> Array:
    return _rounded(rng, 3.0, 0.8 * rng.standard_t(2, n))


def correlated_jurors(rng: np.random.Generator, n: int) -> Array:
    """A jury of three whose errors share a common part (correlation 0.6): the jury mean per subject."""
    truth = rng.normal(0, 0.7, n)
    shared = rng.normal(0, 0.6, n)
    jurors = [_rounded(rng, 3.0 + truth + shared, rng.normal(0, 0.5, n)) for _ in range(3)]
    return np.asarray(np.mean(jurors, axis=0), dtype=float)


def clustered(rng: np.random.Generator, n: int, *, as_items: bool = False) -> Array:
    """Prompts with a random effect and one to six items each. The cluster option observes each
    prompt's mean (what ``--until-cluster prompt`` does); ``as_items`` observes the items one by
    one, prompts taken whole, as a sequence that ignores the clusters would."""
    means: list[float] = []
    items: list[float] = []
    while len(means) < n and len(items) < n:
        size = int(rng.integers(1, 7))
        effect = rng.normal(0, 0.9)
        scores = _rounded(rng, 3.0 + effect, rng.normal(0, 0.6, size))
        means.append(float(np.mean(scores)))
        items.extend(scores.tolist())
    return np.asarray(items[:n] if as_items else means[:n], dtype=float)


NULLS: dict[str, tuple[Callable[[np.random.Generator, int], Array], float]] = {
    "normal-like": (normal_like, 3.0),
    "skewed bounded": (skewed, float(SKEWED @ np.arange(1.0, 6.0))),
    "heavy-tailed clipped": (heavy_tailed, 3.0),
    "correlated jurors": (correlated_jurors, 3.0),
    "clustered items, --until-cluster prompt": (clustered, 3.0),
}


def rounded_moments(shift: float) -> tuple[float, float]:
    """Exact mean and SD of clip(rint(3 + shift + N(0, 1)), 1, 5)."""
    from scipy.stats import norm

    cuts = np.array([-np.inf, 1.5, 2.5, 3.5, 4.5, np.inf]) - 3.0 - shift
    p = np.diff(norm.cdf(cuts))
    values = np.arange(1.0, 6.0)
    mean = float(p @ values)
    return mean, float(np.sqrt(p @ (values - mean) ** 2))


def shift_for(d: float) -> float:
    """The shift of the normal-like data whose standardised effect (mean - 3) / SD is ``d``."""
    from scipy.optimize import brentq

    return float(brentq(lambda s: (rounded_moments(s)[0] - 3.0) / rounded_moments(s)[1] - d, 0.0, 2.0))


def fixed_n_ttest(d: float, power: float, alpha: float = ALPHA) -> int:
    """The fewest subjects a two-sided one-sample t-test at ``alpha`` needs for ``power`` at effect d."""
    from scipy.stats import nct
    from scipy.stats import t as student

    for n in range(2, 100_000):
        c = float(student.ppf(1 - alpha / 2, n - 1))
        ncp = d * math.sqrt(n)
        if float(nct.sf(c, n - 1, ncp) + nct.cdf(-c, n - 1, ncp)) >= power:
            return n
    raise ValueError("no fixed design reaches that power")


def matched_power(decided: int, studies: int) -> float:
    """The power a fixed design must match: the share of studies the rule decided, at most
    (studies - 1/2) / studies (a rule that decided in every study is not credited with power 1)."""
    return min(decided / studies, (studies - 0.5) / studies)


def fixed_n_simulated(power: float, tests: Callable[[int], Array], top: int) -> int:
    """The fewest subjects whose simulated decision rate reaches ``power``: ``tests(n)`` returns
    one decision per replicate at n, the replicates drawn once and read as prefixes, so the rate
    rises with n as it should (bisection over n)."""
    lo, hi = 2, top
    if float(np.mean(tests(hi))) < power:
        return top
    while lo < hi:
        mid = (lo + hi) // 2
        if float(np.mean(tests(mid))) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo


# -- the claims ----------------------------------------------------------------------------------


def null_claims(studies: int, quick: bool, seed: int = 0) -> list[Claim]:
    """False decisions of excludes(true mean) in each kind of data, at most alpha."""
    out = []
    for k, (name, (draw, mean)) in enumerate(NULLS.items()):
        rng = np.random.default_rng(seed + k)
        hits = sum(first_decision(draw(rng, CAP), *SCALE, ALPHA, mean, BATCH)[0] for _ in range(studies))
        out.append(rate("score --until", f"false decisions <= alpha, {name}", hits, studies, high=ALPHA, quick=quick))
    rng = np.random.default_rng(seed + 99)
    ignored = sum(
        first_decision(clustered(rng, CAP, as_items=True), *SCALE, ALPHA, 3.0, BATCH)[0] for _ in range(studies)
    )
    out[-1].extra["false_decisions_items_as_independent"] = ignored / studies
    return out


def mean_rule_savings(d: float, studies: int, quick: bool, seed: int = 0) -> tuple[Claim, dict[str, float]]:
    """excludes(3) at effect d: subjects judged on average against the fixed t-test design of the
    same power (and judging all CAP, for the record)."""
    rng = np.random.default_rng(seed)
    shift = shift_for(d)
    runs = [first_decision(normal_like(rng, CAP, shift), *SCALE, ALPHA, 3.0, BATCH) for _ in range(studies)]
    decided = sum(ok for ok, _ in runs)
    n_fixed = fixed_n_ttest(d, matched_power(decided, studies))
    claim, figures = _savings(
        f"excludes at d = {d}: subjects judged <= 1.0 x the fixed design of the same power",
        runs,
        n_fixed,
        CAP,
        1.0,
        quick,
        "one-sample t-test",
    )
    figures["d"] = d
    claim.extra["d"] = d
    return claim, figures


LEADERBOARD = np.array([2.6, 3.0, 3.4])  # three models' centres; each prompt answered by all three


def leaderboard(rng: np.random.Generator, prompts: int) -> Array:
    """prompts x models scores: a prompt effect shared by its three answers, and noise."""
    effect = rng.normal(0, 0.5, (prompts, 1))
    return _rounded(rng, LEADERBOARD[None, :] + effect, rng.normal(0, 0.9, (prompts, len(LEADERBOARD))))


def separated_decision(scores: Array, alpha: float, batch: int) -> tuple[bool, int]:
    """separated(x) on prompts x models (each prompt answered by every model), a look every
    ``batch`` prompts: (decided, prompts judged)."""
    k_models = scores.shape[1]
    labels = np.tile(np.arange(k_models), len(scores))
    looks = [k * k_models for k in range(batch, len(scores) + 1, batch)]
    decided, judged = streams_decision(labels, scores.reshape(-1), k_models, alpha, looks)
    return decided, judged // k_models


def streams_decision(
    labels: NDArray[np.int_], scores: Array, k_models: int, alpha: float, looks: list[int]
) -> tuple[bool, int]:
    """separated(x) as ``anytime.look_groups`` decides it, for subjects arriving in order with a model
    label each: at each look (subjects judged so far) the models are ranked by mean and every
    adjacent pair's difference stream (the two models' scores taken in step) must have excluded
    0 at alpha over all pairs. Each pair's evidence path is computed once for the whole stream."""
    share = alpha / (k_models * (k_models - 1) / 2)
    span = SCALE[1] - SCALE[0]
    streams = [scores[labels == j] for j in range(k_models)]
    arrived = [np.cumsum(labels == j) for j in range(k_models)]  # model j's scores after each subject
    apart_at: dict[tuple[int, int], NDArray[np.bool_]] = {}
    for a in range(k_models):
        for b in range(a + 1, k_models):
            d = list(streams[a][: len(streams[b])] - streams[b][: len(streams[a])])
            path = anytime.log_capital(d, -span, span, np.array([0.5]))[:, 0] if d else np.zeros(0)
            apart_at[(a, b)] = np.maximum.accumulate(path) >= math.log(1 / share)
    for k in looks:
        counts = [int(arrived[j][k - 1]) for j in range(k_models)]
        if min(counts) == 0:
            continue
        order = sorted(range(k_models), key=lambda j: (-float(np.mean(streams[j][: counts[j]])), f"m{j}"))

        if all(_apart(apart_at, counts, u, w) for u, w in itertools.pairwise(order)):
            return True, k
    return False, len(scores)


def _apart(apart_at: dict[tuple[int, int], NDArray[np.bool_]], counts: list[int], u: int, w: int) -> bool:
    """Whether models u and w's difference stream had excluded 0 by the differences available."""
    pair = apart_at[(min(u, w), max(u, w))]
    steps = min(counts[u], counts[w], len(pair))
    return bool(steps and pair[steps - 1])


def _all_rejected(pvalues: list[float], alpha: float) -> bool:
    """Whether Holm's procedure rejects every hypothesis (the largest adjusted p-value <= alpha)."""
    from jurybench.stats.functions import holm

    return bool(np.all(holm(pvalues) <= alpha))


def _holm_adjacent(scores: Array, alpha: float) -> bool:
    """The fixed design's decision: paired t-tests of each adjacent pair in the observed ranking,
    Holm over the K - 1 comparisons, every one rejected."""
    from scipy.stats import ttest_rel

    order = np.argsort(-scores.mean(axis=0))
    ps = list(float(ttest_rel(scores[:, a], scores[:, b]).pvalue) for a, b in itertools.pairwise(order))
    return _all_rejected(ps, alpha)


def separated_savings(studies: int, quick: bool, cap: int = 600, seed: int = 0) -> tuple[Claim, dict[str, float]]:
    rng = np.random.default_rng(seed)
    runs = [separated_decision(leaderboard(rng, cap), ALPHA, BATCH) for _ in range(studies)]
    decided = sum(ok for ok, _ in runs)
    power = matched_power(decided, studies)
    pool = [leaderboard(np.random.default_rng(seed + 1000 + r), cap) for r in range(max(studies, 200))]
    n_fixed = fixed_n_simulated(power, lambda n: np.array([_holm_adjacent(x[:n], ALPHA) for x in pool]), cap)
    return _savings(
        "separated (3 models): prompts judged <= 1.5 x the fixed design of the same power",
        runs,
        n_fixed,
        cap,
        1.5,
        quick,
        "paired t, Holm over adjacent pairs",
    )


UNPAIRED = np.array([2.0, 3.0, 4.0])  # the former bench's leaderboard: each subject one model's answer


def unpaired_board(rng: np.random.Generator, n: int) -> tuple[NDArray[np.int_], Array]:
    labels = rng.integers(0, len(UNPAIRED), n)
    return labels, _rounded(rng, UNPAIRED[labels], rng.normal(0, 1, n))


def _holm_adjacent_unpaired(labels: NDArray[np.int_], scores: Array, alpha: float) -> bool:
    from scipy.stats import ttest_ind

    groups = [scores[labels == j] for j in range(len(UNPAIRED))]
    if min(len(g) for g in groups) < 2:
        return False
    order = np.argsort([-g.mean() for g in groups])
    ps = list(float(ttest_ind(groups[a], groups[b], equal_var=False).pvalue) for a, b in itertools.pairwise(order))
    return _all_rejected(ps, alpha)


def unpaired_savings(studies: int, quick: bool, cap: int = 1500, seed: int = 0) -> tuple[Claim, dict[str, float]]:
    """The former bench's leaderboard design (three models a point apart, each subject one
    model's answer), a look every BATCH subjects, against Welch t-tests with Holm."""
    rng = np.random.default_rng(seed)
    looks = list(range(BATCH, cap + 1, BATCH))
    runs = [streams_decision(*unpaired_board(rng, cap), len(UNPAIRED), ALPHA, looks) for _ in range(studies)]
    pool = [unpaired_board(np.random.default_rng(seed + 3000 + r), cap) for r in range(max(studies, 200))]
    n_fixed = fixed_n_simulated(
        matched_power(sum(ok for ok, _ in runs), studies),
        lambda n: np.array([_holm_adjacent_unpaired(x[:n], y[:n], ALPHA) for x, y in pool]),
        cap,
    )
    return _savings(
        "separated (3 models, unpaired subjects): subjects judged <= 1.5 x the fixed design of the same power",
        runs,
        n_fixed,
        cap,
        1.5,
        quick,
        "Welch t, Holm over adjacent pairs",
    )


GAP_EFFECT = np.array([0.6, 0.0, 0.0, 0.0])  # one category of four moved; scores on -3..3


def gap_scores(rng: np.random.Generator, n: int) -> Array:
    return np.clip(np.rint(GAP_EFFECT[None, :] + rng.normal(0, 1.2, (n, len(GAP_EFFECT)))), -3, 3)


def gap_decision(scores: Array, alpha: float, batch: int) -> tuple[bool, int]:
    share = alpha / scores.shape[1]
    paths = [anytime.log_capital(list(scores[:, j]), -3.0, 3.0, np.array([0.5]))[:, 0] for j in range(scores.shape[1])]
    crossed = [np.flatnonzero(p >= math.log(1 / share)) for p in paths]
    return _looked(min((int(c[0]) for c in crossed if len(c)), default=None), batch, len(scores))


def _bonferroni_t(scores: Array, alpha: float) -> bool:
    from scipy.stats import ttest_1samp

    return bool(np.min(ttest_1samp(scores, 0.0, axis=0).pvalue) <= alpha / scores.shape[1])


def gap_savings(studies: int, quick: bool, cap: int = 400, seed: int = 0) -> tuple[Claim, dict[str, float]]:
    rng = np.random.default_rng(seed)
    runs = [gap_decision(gap_scores(rng, cap), ALPHA, BATCH) for _ in range(studies)]
    decided = sum(ok for ok, _ in runs)
    pool = [gap_scores(np.random.default_rng(seed + 2000 + r), cap) for r in range(max(studies, 200))]
    n_fixed = fixed_n_simulated(
        matched_power(decided, studies), lambda n: np.array([_bonferroni_t(x[:n], ALPHA) for x in pool]), cap
    )
    return _savings(
        "gap_excludes(0) (4 categories): pairs judged <= 1.5 x the fixed design of the same power",
        runs,
        n_fixed,
        cap,
        1.5,
        quick,
        "t-tests, Bonferroni over categories",
    )


def _savings(
    claim: str, runs: list[tuple[bool, int]], n_fixed: int, cap: int, high: float, quick: bool, design: str
) -> tuple[Claim, dict[str, float]]:
    """A savings claim: subjects judged on average over the power-matched fixed design's n."""
    decided = sum(ok for ok, _ in runs)
    figures = {
        "decided": decided / len(runs),
        "mean_judged": float(np.mean([n for _, n in runs])),
        "fixed_design": float(n_fixed),
        "all": float(cap),
    }
    made = mean_ratio(
        "score --until",
        claim,
        [float(n) for _, n in runs],
        n_fixed,
        high=high,
        quick=quick,
        note=f"decided {decided}/{len(runs)}; fixed design ({design}) {n_fixed}; judging all {cap}",
    )
    made.extra.update(figures)
    return made, figures


def claims(quick: bool) -> list[Claim]:
    studies = 100 if quick else 400
    saving = 60 if quick else 300
    return [
        *null_claims(studies, quick),
        mean_rule_savings(0.44, saving, quick)[0],
        mean_rule_savings(0.58, saving, quick, seed=1)[0],
        separated_savings(40 if quick else 200, quick)[0],
        unpaired_savings(40 if quick else 200, quick)[0],
        gap_savings(60 if quick else 300, quick)[0],
    ]
