"""Sequential judging on simulated studies: subjects judged until the rule is met, against the
fixed design that judges all of them, at the error rates each keeps.

Each study has SUBJECTS scores on a 1..5 scale, looked at every BATCH subjects; the rule is
excludes(mean, 3) on the 95 % anytime-valid confidence sequence (jurybench.stats.anytime).
With no effect (mean 3) it reports the share of studies that decide anyway (false decisions),
beside a fixed-n t-test looked at after every batch (what optional stopping does to a test
that does not allow it). With an effect (mean 3.66) it reports the subjects judged on average
against the fixed design's SUBJECTS, and the share decided. The same for the leaderboard rule
(separated: are the models' ranks settled?) and the gap rule (gap_excludes(0): is there a
treatment gap?).

    python bench/sequential_bench.py STUDIES SUBJECTS BATCH
prints one JSON object.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from scipy.stats import ttest_1samp

from jurybench.stats import anytime as cs


def study(rng: np.random.Generator, shift: float, n: int, batch: int) -> tuple[bool, int, bool]:
    p = np.clip(np.array([1, 2, 3, 2, 1], dtype=float) + shift * np.array([-1, -1, 0, 1, 1]), 0.01, None)
    scores = rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], size=n, p=p / p.sum())
    rule = cs.StoppingRule("excludes(x,3)", "excludes", "x", 3.0, 0.05)
    rho = cs.rho_for(n, 2.0, 0.05)
    decided, stopped, naive = False, n, False
    for k in range(batch, n + 1, batch):
        if not decided and cs.met(rule, cs.look(list(scores[:k]), 1.0, 5.0, 0.05, rho)):
            decided, stopped = True, k
        naive = naive or bool(ttest_1samp(scores[:k], 3.0).pvalue < 0.05)
    return decided, stopped, naive


def leaderboard(rng: np.random.Generator, means: list[float], n: int, batch: int) -> tuple[bool, int]:
    """separated(x) on models with the given true means (scores on 1..5, SD 1): decided, judged."""
    rule = cs.StoppingRule("separated(x)", "separated", "x", None, 0.05)
    models = rng.integers(0, len(means), size=n)
    scores = np.clip(np.rint(np.array(means)[models] + rng.normal(0, 1, n)), 1, 5)
    rho = cs.rho_for(n, 2.0, 0.05)
    for k in range(batch, n + 1, batch):
        groups: dict[str, list[float]] = {}
        for m, v in zip(models[:k], scores[:k], strict=True):
            groups.setdefault(str(m), []).append(float(v))
        if cs.met(rule, cs.look_groups(groups, 1.0, 5.0, 0.05, rho)):
            return True, k
    return False, n


def gap(rng: np.random.Generator, effect: float, n: int, batch: int) -> tuple[bool, int]:
    """gap_excludes(0) on four categories of symmetrized scores on -3..3, one with a true mean of ``effect``."""
    rule = cs.StoppingRule("gap_excludes(0)", "gap_excludes", "", 0.0, 0.05)
    scores = np.clip(np.rint(np.array([effect, 0.0, 0.0, 0.0]) + rng.normal(0, 1.2, (n, 4))), -3, 3)
    rho = cs.rho_for(n, 3.0, 0.05)
    for k in range(batch, n + 1, batch):
        if cs.met(rule, cs.look_gap({f"c{j}": list(scores[:k, j]) for j in range(4)}, -3.0, 3.0, 0.05, rho)):
            return True, k
    return False, n


def main(studies: int, subjects: int, batch: int) -> dict[str, object]:
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    null = [study(rng, 0.0, subjects, batch) for _ in range(studies)]
    effect = [study(rng, 1.0, subjects, batch) for _ in range(studies)]
    fixed_power = float(
        np.mean(
            [
                ttest_1samp(
                    rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], size=subjects, p=np.array([0.01, 1, 3, 3, 2]) / 9.01), 3.0
                ).pvalue
                < 0.05
                for _ in range(studies)
            ]
        )
    )
    judged = float(np.mean([s for _, s, _ in effect]))
    return {
        "studies": studies,
        "subjects": subjects,
        "batch": batch,
        "alpha": 0.05,
        "false_decisions_sequential": float(np.mean([d for d, _, _ in null])),
        "false_decisions_naive_looks": float(np.mean([n for _, _, n in null])),
        "decided_with_effect": float(np.mean([d for d, _, _ in effect])),
        "fixed_design_power": fixed_power,
        "judged_with_effect": judged,
        "judged_share_of_fixed": judged / subjects,
        **_rules(rng, max(studies // 5, 40), subjects, batch),
        "seconds": time.perf_counter() - started,
    }


def _rules(rng: np.random.Generator, studies: int, subjects: int, batch: int) -> dict[str, object]:
    """The leaderboard rule (three models 1 point apart, at 1,500 subjects, a look every 50) and
    the gap rule (one category at 1.0 of four, at ``subjects``): false decisions with no
    difference, and subjects judged with one, against the fixed design."""
    board_null = [leaderboard(rng, [3.0, 3.0], 1500, 50) for _ in range(studies)]
    board = [leaderboard(rng, [2.0, 3.0, 4.0], 1500, 50) for _ in range(studies)]
    gap_null = [gap(rng, 0.0, subjects, batch) for _ in range(studies)]
    gaps = [gap(rng, 1.0, subjects, batch) for _ in range(studies)]
    return {
        "separated_false_decisions": float(np.mean([d for d, _ in board_null])),
        "separated_decided": float(np.mean([d for d, _ in board])),
        "separated_judged_share_of_fixed": float(np.mean([k for _, k in board])) / 1500,
        "gap_false_decisions": float(np.mean([d for d, _ in gap_null])),
        "gap_decided": float(np.mean([d for d, _ in gaps])),
        "gap_judged_share_of_fixed": float(np.mean([k for _, k in gaps])) / subjects,
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))))
