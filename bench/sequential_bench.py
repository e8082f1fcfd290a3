"""Sequential judging on simulated studies, against two baselines: a fixed design of the same
power at the same alpha (computed for the planted effect: the honest one) and judging every
subject (the cap).

The studies are the validity suite's (jurybench.validity._sequential): scores on 1..5 looked at
every BATCH subjects up to CAP; the mean rule excludes(3) at d = 0.44 and 0.58, the
leaderboard rule (three models, a shared prompt effect) and the gap rule (one category of four
moved). With no effect it reports false decisions, beside a t-test looked at as often.

    python bench/sequential_bench.py STUDIES
prints one JSON object.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from scipy.stats import ttest_1samp

import jurybench.validity._sequential as v


def main(studies: int) -> dict[str, object]:
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    null = [v.normal_like(rng, v.CAP) for _ in range(studies)]
    false_sequential = float(np.mean([v.first_decision(x, 1.0, 5.0, v.ALPHA, 3.0, v.BATCH)[0] for x in null]))
    false_naive = float(
        np.mean(
            [any(ttest_1samp(x[:k], 3.0).pvalue < v.ALPHA for k in range(v.BATCH, v.CAP + 1, v.BATCH)) for x in null]
        )
    )
    rules = {
        "mean_d044": v.mean_rule_savings(0.44, studies, False)[1],
        "mean_d058": v.mean_rule_savings(0.58, studies, False, seed=1)[1],
        "separated": v.separated_savings(max(studies // 2, 100), False)[1],
        "gap": v.gap_savings(studies, False)[1],
    }
    return {
        "studies": studies,
        "cap": v.CAP,
        "batch": v.BATCH,
        "alpha": v.ALPHA,
        "false_decisions_sequential": false_sequential,
        "false_decisions_naive_looks": false_naive,
        "rules": {
            name: {
                **figures,
                "share_of_power_matched": figures["mean_judged"] / figures["fixed_design"],
                "share_of_all": figures["mean_judged"] / figures["all"],
            }
            for name, figures in rules.items()
        },
        "seconds": time.perf_counter() - started,
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]))))
