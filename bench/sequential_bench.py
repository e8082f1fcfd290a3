"""Sequential judging on simulated studies: subjects judged until the rule is met, against the
fixed design that judges all of them, at the error rates each keeps.

Each study has SUBJECTS scores on a 1..5 scale, looked at every BATCH subjects; the rule is
excludes(mean, 3) on the 95 % anytime-valid confidence sequence (jurybench.stats.sequential).
With no effect (mean 3) it reports the share of studies that decide anyway (false decisions),
beside a fixed-n t-test looked at after every batch (what optional stopping does to a test
that does not allow it). With an effect (mean 3.66) it reports the subjects judged on average
against the fixed design's SUBJECTS, and the share decided.

    python bench/sequential_bench.py STUDIES SUBJECTS BATCH
prints one JSON object.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from scipy.stats import ttest_1samp

from jurybench.stats import sequential as cs


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


def main(studies: int, subjects: int, batch: int) -> dict[str, object]:
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    null = [study(rng, 0.0, subjects, batch) for _ in range(studies)]
    effect = [study(rng, 1.0, subjects, batch) for _ in range(studies)]
    fixed_power = float(np.mean([ttest_1samp(rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], size=subjects,
                                                        p=np.array([0.01, 1, 3, 3, 2]) / 9.01), 3.0).pvalue < 0.05
                                 for _ in range(studies)]))  # fmt: skip
    judged = float(np.mean([s for _, s, _ in effect]))
    return {
        "studies": studies, "subjects": subjects, "batch": batch, "alpha": 0.05,
        "false_decisions_sequential": float(np.mean([d for d, _, _ in null])),
        "false_decisions_naive_looks": float(np.mean([n for _, _, n in null])),
        "decided_with_effect": float(np.mean([d for d, _, _ in effect])), "fixed_design_power": fixed_power,
        "judged_with_effect": judged, "judged_share_of_fixed": judged / subjects,
        "seconds": time.perf_counter() - started,
    }  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))))
