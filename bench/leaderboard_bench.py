"""Bradley–Terry leaderboards at the scale of published ones: 58 models, 100,000 battles, 1,000
bootstrap rounds, side by side with Arena-Hard-Auto's method on the same battles.

jurybench (``stats.functions`` / ``_leaderboard.leaderboard``): the battles become per-cluster
sparse counts of each pair of models once; a round is a sparse product and a few Newton steps
from the full data's estimate.

Arena-Hard-Auto's method, written here from its published description (its code is not copied
or fetched): each round resamples the battles with replacement (pandas), pivots them into win
counts per ordered pair of models (ties as half a win each way), and fits scikit-learn's
unpenalised logistic regression on the pairs' rows with the counts as sample weights. It is run
for fewer rounds and its time per round is scaled to 1,000 (reported as such).

    python bench/leaderboard_bench.py BATTLES ROUNDS REFERENCE_ROUNDS
prints one JSON object.
"""

from __future__ import annotations

import json
import math
import sys
import time
from typing import Any

import numpy as np

TARGET_SECONDS = 60.0


def battles(n_battles: int, n_models: int, seed: int = 0) -> tuple[Any, Any, Any, Any]:
    """Battles between models of planted strengths (each battle its own cluster), ties 10 %."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, n_models)
    first = rng.integers(0, n_models, n_battles)
    second = (first + rng.integers(1, n_models, n_battles)) % n_models
    p = 1 / (1 + np.exp(-(strength[first] - strength[second])))
    y = (rng.random(n_battles) < p).astype(float)
    y[rng.random(n_battles) < 0.1] = 0.5
    return first, second, y, np.arange(n_battles)


def arena_hard_round(frame: Any, n_models: int, rng_seed: int) -> np.ndarray[Any, Any]:
    """One bootstrap round as Arena-Hard-Auto does it: resample battles, pivot, weighted LR."""
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    sample = frame.sample(frac=1.0, replace=True, random_state=rng_seed)
    wins = pd.pivot_table(sample[sample.y == 1.0], index="first", columns="second", aggfunc="size", fill_value=0)
    losses = pd.pivot_table(sample[sample.y == 0.0], index="first", columns="second", aggfunc="size", fill_value=0)
    ties = pd.pivot_table(sample[sample.y == 0.5], index="first", columns="second", aggfunc="size", fill_value=0)
    full = pd.Index(range(n_models))
    wins, losses, ties = (t.reindex(index=full, columns=full, fill_value=0) for t in (wins, losses, ties))
    # a battle first-vs-second: 2 for a win, 1 each way for a tie (Arena-Hard's doubling)
    table = wins * 2 + losses.T * 2 + ties + ties.T
    rows, labels, weights = [], [], []
    scale = math.log(10)
    for a in range(n_models):
        for b in range(a + 1, n_models):
            x = np.zeros(n_models)
            x[a], x[b] = scale, -scale
            rows += [x, x]
            labels += [1.0, 0.0]
            weights += [float(table.loc[a, b]), float(table.loc[b, a])]
    model = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-6)  # unpenalised
    model.fit(np.array(rows), np.array(labels), sample_weight=np.array(weights))
    return np.asarray(model.coef_[0] * 400)


def main() -> None:
    n_battles, rounds, reference_rounds = (int(a) for a in sys.argv[1:4])
    import pandas as pd

    from jurybench.stats._leaderboard import leaderboard

    n_models = 58
    first, second, y, clusters = battles(n_battles, n_models)
    names = [f"m{k:02d}" for k in range(n_models)]
    started = time.perf_counter()
    board = leaderboard(first, second, y, clusters, names, n_boot=rounds, seed=0)
    ours = time.perf_counter() - started
    frame = pd.DataFrame({"first": first, "second": second, "y": y})
    started = time.perf_counter()
    for k in range(reference_rounds):
        arena_hard_round(frame, n_models, k)
    reference = time.perf_counter() - started
    reference_per_round = reference / max(reference_rounds, 1)
    print(
        json.dumps(
            {
                "battles": n_battles,
                "models": n_models,
                "rounds": rounds,
                "seconds": ours,
                "failed_replicates": board["failed_replicates"],
                "target_seconds": TARGET_SECONDS,
                "arena_hard_rounds_timed": reference_rounds,
                "arena_hard_seconds_per_round": reference_per_round,
                "arena_hard_seconds_for_rounds": reference_per_round * rounds,
                "speedup_vs_arena_hard": reference_per_round * rounds / ours,
            }
        )
    )


if __name__ == "__main__":
    main()
