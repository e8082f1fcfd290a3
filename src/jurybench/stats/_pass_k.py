"""pass^k: the chance that all k trials of a task succeed, from n >= k trials of each task.

For a task whose trials succeed independently with probability p, of which c of n succeeded,
C(c, k) / C(n, k) is an unbiased estimate of p^k (the share of the task's k-subsets of trials
that all succeeded: a hypergeometric count whose mean over the binomial c is p^k). pass^k is
its mean over tasks (Yao et al., "tau-bench", 2024, section 5, the estimator tau-bench's
``run.py`` prints); pass^1 is the success rate with every task weighted alike. Trials of one
task are not independent of each other as evidence about the task population, so the interval
treats the task as the unit: a Student t interval over the per-task estimates (T - 1 degrees of
freedom), cut to [0, 1], and none when every task gives the same value (no spread, no interval
that could be honest). The gap between two raters' pass^k (a jury's against the verified
outcomes) is paired by task the same way. Its coverage is checked in ``make validity``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from jurybench.errors import JurybenchError


def task_estimates(successes: Mapping[str, Sequence[bool]], k: int) -> dict[str, float]:
    """Each task's unbiased estimate of p^k: C(c, k) / C(n, k); refused when a task has fewer than k trials."""
    short = sorted(t for t, s in successes.items() if len(s) < k)
    if short:
        fewest = min(len(successes[t]) for t in short)
        raise JurybenchError(
            f"pass^{k} needs at least {k} trials of every task; {len(short)} task(s) have fewer (e.g. {short[0]!r}, "
            f"with {len(successes[short[0]])}; the fewest: {fewest}).",
            hint=f"Ask for k at most {min(len(s) for s in successes.values())}, or leave those tasks out with --where.",
        )
    return {t: math.comb(sum(map(bool, s)), k) / math.comb(len(s), k) for t, s in successes.items()}


def interval(
    values: Sequence[float], level: float = 0.95, bounds: tuple[float, float] = (0.0, 1.0)
) -> tuple[float | None, float | None]:
    """The t interval of the mean of per-task values, cut to ``bounds`` (None without spread)."""
    from jurybench.stats._pointwise import mean_t_interval

    n = len(values)
    if n < 2:
        return None, None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    low, high = mean_t_interval(mean, sd, n, level)
    if low is None or high is None:
        return None, None
    return max(low, bounds[0]), min(high, bounds[1])


def pass_k(successes: Mapping[str, Sequence[bool]], ks: Sequence[int], level: float = 0.95) -> list[dict[str, object]]:
    """pass^k for each k of ``ks``: the estimate, its interval over tasks, the tasks counted."""
    if not successes:
        raise JurybenchError("pass^k: no task with a trial to count.")
    out: list[dict[str, object]] = []
    for k in ks:
        values = list(task_estimates(successes, k).values())
        low, high = interval(values, level)
        out.append(
            {"k": k, "pass_k": sum(values) / len(values), "ci_low": low, "ci_high": high, "n_tasks": len(values)}
        )
    return out


def pass_k_gap(
    rater: Mapping[str, Sequence[bool]], truth: Mapping[str, Sequence[bool]], ks: Sequence[int], level: float = 0.95
) -> list[dict[str, object]]:
    """A rater's pass^k less the verified one, paired by task (the tasks both count)."""
    shared = sorted(set(rater) & set(truth))
    out: list[dict[str, object]] = []
    for k in ks:
        r = task_estimates({t: rater[t] for t in shared}, k)
        v = task_estimates({t: truth[t] for t in shared}, k)
        diffs = [r[t] - v[t] for t in shared]
        gap = sum(diffs) / len(diffs) if diffs else math.nan
        low, high = interval(diffs, level, bounds=(-1.0, 1.0))
        out.append({"k": k, "gap": gap, "gap_low": low, "gap_high": high, "n_tasks": len(diffs)})
    return out
