"""Align one juror to human labels, held out: every variant is judged only on prompt groups its
training never saw, and one is kept only when its held-out gain over the original is significant.

The procedure (docs/statistics.md, "Aligning a juror"):

1. The labelled subjects' prompt groups are dealt into K folds (shuffled by the seed).
2. For each variant and fold, the variant is built from the other folds' subjects only (their
   labels and the juror's answers in the run) and the juror judges the fold's subjects with it.
   The original's answers are the run's own (the same prompt: nothing is asked again).
3. Per subject, the gain is |original - human| - |variant - human| (the humans' mean); the mean
   gain over the subjects both answered, with a cluster-robust standard error over prompt
   groups and t on groups - 1 degrees of freedom, gives a one-sided p-value (H0: gain <= 0).
4. Holm's step-down over the variants at ``alpha``; among the variants it rejects, the one with
   the largest held-out gain is kept: rebuilt from every labelled subject, stored as a new
   version of the rubric, and the labels it used are recorded (``label_uses``).

What the figures estimate is the procedure's gain on new prompts (each fold's variant was
trained without them); the kept version is trained on all labels, as cross-validation's
final model is.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from jurybench.alignment._variants import (
    guidance_request,
    guidance_text,
    most_disagreed,
    with_demonstrations,
    with_description,
)
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from jurybench.alignment._data import AlignmentData, Labelled
    from jurybench.rubric import AnyRubric

MIN_GROUPS = 6  # prompt groups an alignment needs: folds of two or more, and a t on >= 5 df


@dataclass(frozen=True)
class Judged:
    """What judging some subjects with a variant gave: the juror's score per subject (valid
    answers only), the calls it made and what they cost, and how the run ended."""

    answers: dict[str, float]
    calls: int
    cost: float | None
    status: str


# judge(rubric, subject ids, run name, budget left or None) -> Judged
Judge = Callable[["AnyRubric", list[str], str, "float | None"], Judged]
# plan(rubric, subject ids) -> (calls, cost or None when a price is unknown)
Plan = Callable[["AnyRubric", list[str]], "tuple[int, float | None]"]
# rewrite(messages, dollars left or None) -> (the optimizer's text, its cost or None); None when
# not even its planned answer fits in what is left (its answer is bounded by what is left)
Rewrite = Callable[[list[dict[str, str]], "float | None"], "tuple[str, float | None] | None"]


class _OverBudget(Exception):
    """The optimizer's call does not fit in what the budget has left."""


@dataclass
class Figure:
    """A mean with its cluster-robust two-sided interval (t on groups - 1)."""

    value: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}


@dataclass
class Variant:
    name: str
    mae: Figure | None = None
    gain: Figure | None = None
    p: float | None = None
    n: int = 0  # subjects compared (the original and the variant both answered)
    n_unanswered: int = 0  # labelled subjects the variant gave no valid answer on
    calls: int = 0
    cost: float | None = 0.0
    better: bool = False  # its held-out gain is significant (Holm over the variants)
    kept: bool = False  # the one kept: the largest held-out gain among those shown better
    holm_level: float | None = None
    notes: list[str] = field(default_factory=list)
    rubrics: list[str] = field(default_factory=list)  # the fold versions' hashes

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "mae": self.mae.as_dict() if self.mae else None,
            "gain": self.gain.as_dict() if self.gain else None,
            "p": self.p,
            "holm_level": self.holm_level,
            "better": self.better,
            "kept": self.kept,
            "n": self.n,
            "n_unanswered": self.n_unanswered,
            "calls": self.calls,
            "cost_usd": self.cost,
            "notes": self.notes,
            "fold_rubrics": self.rubrics,
        }


@dataclass
class Alignment:
    alignment_id: str
    run_id: str
    juror: str
    criterion: str
    measure: str  # mae, or error_rate (a classification: 1 - accuracy)
    alpha: float
    folds: int
    n_labelled: int
    n_groups: int
    original: Variant
    variants: list[Variant]
    chosen: str | None = None
    aligned: AnyRubric | None = None
    cost: float | None = 0.0
    status: str = "finished"  # finished, planned, stopped_budget, interrupted
    notes: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)  # the labelled subjects whose labels made the kept version

    @property
    def verdict(self) -> str:
        if self.status == "planned":
            return "planned: nothing was called"
        if self.aligned is None:
            return "no improvement shown: the rubric is unchanged"
        return f"kept {self.chosen}: {self.aligned.name}@{self.aligned.version}"

    def as_dict(self) -> dict[str, object]:
        return {
            "alignment_id": self.alignment_id,
            "run_id": self.run_id,
            "juror": self.juror,
            "criterion": self.criterion,
            "measure": self.measure,
            "alpha": self.alpha,
            "folds": self.folds,
            "n_labelled": self.n_labelled,
            "n_groups": self.n_groups,
            "status": self.status,
            "verdict": self.verdict,
            "chosen": self.chosen,
            "aligned_rubric": None
            if self.aligned is None
            else {"name": self.aligned.name, "version": self.aligned.version, "hash": self.aligned.content_hash},
            "original": self.original.as_dict(),
            "variants": [v.as_dict() for v in self.variants],
            "cost_usd": self.cost,
            "notes": self.notes,
        }


def group_folds(subjects: Sequence[Labelled], k: int, seed: int) -> list[list[int]]:
    """Each fold's subject positions: the prompt groups, sorted then shuffled by ``seed``, dealt
    round-robin into ``k`` folds."""
    groups = sorted({s.group for s in subjects})
    random.Random(seed).shuffle(groups)
    fold_of = {g: i % k for i, g in enumerate(groups)}
    return [[i for i, s in enumerate(subjects) if fold_of[s.group] == f] for f in range(k)]


def clustered_mean(values: np.ndarray, groups: Sequence[str], level: float = 0.95) -> tuple[Figure, float, int]:
    """The mean with its two-sided ``level`` interval from a cluster-robust (CR1) standard error
    over ``groups`` and t on groups - 1; also the standard error and the degrees of freedom."""
    from scipy.stats import t

    _, member = np.unique(np.asarray(groups, dtype=str), return_inverse=True)
    g = int(member.max()) + 1
    mean = float(np.mean(values))
    totals = np.bincount(member, weights=values - mean, minlength=g)
    se = float(np.sqrt(g / max(g - 1, 1) * np.sum(totals**2))) / len(values)
    df = max(g - 1, 1)
    half = float(t.ppf(0.5 + level / 2, df)) * se
    return Figure(mean, mean - half, mean + half), se, df


def error_figure(values: np.ndarray, groups: Sequence[str]) -> Figure:
    """A mean error with its interval, kept at or above 0 (an error is never negative)."""
    figure, _, _ = clustered_mean(values, groups)
    return Figure(figure.value, max(figure.low, 0.0), figure.high)


def one_sided_p(mean: float, se: float, df: int) -> float:
    """p of H0: the mean is at most 0 (t with ``df``; 0 or 1 when the standard error is 0)."""
    from scipy.stats import t

    if se == 0.0:
        return 0.0 if mean > 0 else 1.0
    return float(t.sf(mean / se, df))


def holm(ps: Sequence[float | None], alpha: float) -> list[tuple[bool, float | None]]:
    """Holm's step-down: for each p, whether it is rejected and the level it was tested at."""
    order = sorted((p, i) for i, p in enumerate(ps) if p is not None)
    m = len(order)
    out: list[tuple[bool, float | None]] = [(False, None)] * len(ps)
    going = True
    for rank, (p, i) in enumerate(order):
        level = alpha / (m - rank)
        going = going and p <= level
        out[i] = (going, level)
    return out


def _spend(total: float | None, more: float | None) -> float | None:
    return None if total is None or more is None else total + more


def alignment_key(data: AlignmentData, *parts: object) -> str:
    """An alignment's id: the same run, juror, criterion, labels and choices give the same id, so
    repeating an alignment reuses its runs (and their cached answers)."""
    labelled = [(s.subject_id, round(s.human, 9)) for s in data.subjects]
    text = repr((data.run_id, data.juror.key, data.criterion, labelled, *parts))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def align(
    data: AlignmentData,
    *,
    judge: Judge,
    plan: Plan,
    rewrite: Rewrite | None,
    price_rewrite: Callable[[list[dict[str, str]]], float | None] | None = None,
    demos: Sequence[int],
    folds: int,
    alpha: float,
    seed: int,
    max_cost: float | None,
    planning: bool,
    alignment_id: str,
    version: str,
) -> Alignment:
    """Propose the variants, judge each on held-out folds, test, and keep one or none (see the
    module's docstring); ``planning``: count the calls and price them, call nothing."""
    subjects = data.subjects
    n_groups = data.n_groups
    if n_groups < MIN_GROUPS:
        raise JurybenchError(
            f"run '{data.run_id}' has labels of '{data.criterion}' on {len(subjects)} subjects in {n_groups} prompt "
            f"groups; align needs at least {MIN_GROUPS} groups to hold some out and test what it finds.",
            hint="Label subjects of more prompts (jurybench annotations sample).",
        )
    k = min(folds, n_groups)
    fold_members = group_folds(subjects, k, seed)
    groups = [s.group for s in subjects]
    human = np.array([s.human for s in subjects])
    original_scores = np.array([np.nan if s.original is None else s.original for s in subjects])
    names = [f"demos-{n}" for n in demos] + (["guidance"] if rewrite is not None else [])
    if not names:
        raise JurybenchError("nothing to try: give --demos counts above 0, or --optimizer for a rewritten guidance.")
    result = Alignment(
        alignment_id,
        data.run_id,
        data.juror_name,
        data.criterion,
        data.measure,
        alpha,
        k,
        len(subjects),
        n_groups,
        Variant("original"),
        [Variant(n) for n in names],
    )
    answered = ~np.isnan(original_scores)
    result.original.n = int(answered.sum())
    result.original.n_unanswered = int((~answered).sum())
    if answered.sum() >= 2:
        result.original.mae = error_figure(data.error(original_scores, human)[answered], np.array(groups)[answered])

    def build(
        name: str, training: list[Labelled], tag: str, left: float | None = None
    ) -> tuple[AnyRubric | None, float | None, str | None]:
        """The variant ``name`` trained on ``training``: (rubric, optimizer cost, note); ``left``:
        the dollars the budget has left for the optimizer's call (_OverBudget when it cannot
        be made within them)."""
        v = f"{data.rubric.version}.align-{alignment_id}-{name}-{tag}"
        if name.startswith("demos-"):
            shown = most_disagreed(training, int(name[6:]), seed, labels=bool(data.labels))
            return with_demonstrations(data.rubric, data.criterion, shown, data.scale, v, data.labels), 0.0, None
        assert rewrite is not None
        if planning:  # judged calls priced at the original's prompt (the rewrite is not known before)
            request = guidance_request(data.rubric, data.criterion, training, seed)
            stand_in = with_description(data.rubric, data.criterion, "(the optimizer's rewrite)", v)
            return stand_in, None if price_rewrite is None else price_rewrite(request), None
        answered = rewrite(guidance_request(data.rubric, data.criterion, training, seed), left)
        if answered is None:
            raise _OverBudget
        text, cost = answered
        description = guidance_text(text)
        if description is None:
            return None, cost, f"fold {tag}: the optimizer's answer held no usable description; the original stood"
        return with_description(data.rubric, data.criterion, description, v), cost, None

    spent: float | None = 0.0

    def left(variant: Variant) -> float | None:
        """What the budget has left: every call the alignment made so far counted, the optimizer's too."""
        return None if max_cost is None or spent is None else max_cost - (spent + (variant.cost or 0.0))

    for variant in result.variants:
        scores = np.full(len(subjects), np.nan)
        for f, members in enumerate(fold_members):
            test_ids = [subjects[i].subject_id for i in members]
            training = [s for i, s in enumerate(subjects) if i not in set(members)]
            try:
                rubric, optimizer_cost, note = build(variant.name, training, f"f{f + 1}", left(variant))
            except _OverBudget:
                result.status = "stopped_budget"
                break
            variant.cost = _spend(variant.cost, optimizer_cost)
            if note:
                variant.notes.append(note)
            if rubric is None:
                scores[members] = original_scores[members]
                continue
            variant.rubrics.append(rubric.content_hash)
            if planning:
                calls, cost = plan(rubric, test_ids)
                variant.calls += calls + (1 if variant.name == "guidance" else 0)
                variant.cost = _spend(variant.cost, cost)
                continue
            judged = judge(rubric, test_ids, f"align-{alignment_id}-{variant.name}-f{f + 1}", left(variant))
            variant.calls += judged.calls
            variant.cost = _spend(variant.cost, judged.cost)
            for i in members:
                value = judged.answers.get(subjects[i].subject_id)
                scores[i] = np.nan if value is None else value
            if judged.status in ("stopped_budget", "interrupted"):
                result.status = judged.status
                break
        spent = _spend(spent, variant.cost)
        if planning:
            continue
        if result.status != "finished":
            break
        both = answered & ~np.isnan(scores)
        variant.n = int(both.sum())
        variant.n_unanswered = int(np.isnan(scores).sum())
        if variant.n < 2 or len({groups[i] for i in np.flatnonzero(both)}) < 2:
            variant.notes.append("too few subjects answered by both the original and the variant to compare")
            continue
        g = np.array(groups)[both]
        variant.mae = error_figure(data.error(scores, human)[both], g)
        gain = data.error(original_scores, human)[both] - data.error(scores, human)[both]
        variant.gain, se, df = clustered_mean(gain, g)
        variant.p = one_sided_p(variant.gain.value, se, df)
    result.cost = spent
    if planning:
        result.status = "planned"
        return result
    return _decide(result, data, build, alpha, version, max_cost)


Build = Callable[[str, list["Labelled"], str, "float | None"], "tuple[AnyRubric | None, float | None, str | None]"]


def _decide(
    result: Alignment, data: AlignmentData, build: Build, alpha: float, version: str, max_cost: float | None
) -> Alignment:
    """What is kept: nothing when the judging did not finish; else Holm over the variants' p and,
    among those shown better, the one with the largest held-out gain, rebuilt from every labelled
    subject as ``version`` (a rewritten guidance asks the optimizer once more, within the budget)."""
    if result.status == "interrupted":
        result.notes.append("interrupted before every variant was judged: nothing is kept (run it again to go on)")
        return result
    if result.status == "stopped_budget":
        result.notes.append(
            "the budget ran out before every variant was judged on every fold: nothing is kept (run again with a "
            "higher --max-cost; answers already given are reused)"
        )
        return result
    for variant, (rejected, level) in zip(result.variants, holm([v.p for v in result.variants], alpha), strict=True):
        variant.holm_level = level
        variant.better = rejected
    winners = [v for v in result.variants if v.better]
    if not winners:
        return result
    best = max(winners, key=lambda v: (v.gain.value if v.gain else 0.0, v.name))
    left = None if max_cost is None or result.cost is None else max_cost - result.cost
    try:
        rubric, cost, note = build(best.name, list(data.subjects), "all", left)
    except _OverBudget:
        result.status = "stopped_budget"
        result.notes.append(
            f"{best.name} was shown better held out, but the budget has too little left to ask the optimizer for "
            "the version trained on every label: nothing is kept (run again with a higher --max-cost; answers "
            "already given are reused)"
        )
        return result
    result.cost = _spend(result.cost, cost)
    if rubric is None:
        result.notes.append(f"{best.name} was shown better held out, but {note}: nothing is kept")
        return result
    from jurybench.rubric import rubric_from_data

    result.aligned = rubric_from_data(rubric.model_copy(update={"version": version}).model_dump(mode="json"))
    result.chosen = best.name
    best.kept = True
    result.used = [s.subject_id for s in data.subjects]
    return result
