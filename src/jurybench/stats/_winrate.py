"""Win rates against a reference model, as AlpacaEval defines them, and a length-controlled one.

Each pair that sets a model against the reference gives ``p``, the preference for the model in
[0, 1]: from the pair's score ``s`` in its own frame (+1 item_a better .. -1 item_b), p = (1 + s)/2
when the model is item_a and (1 - s)/2 when it is item_b. ``s`` is the jury's score by the run's
rule (a majority vote gives -1, 0 or +1; a mean of symmetrized or probabilistic verdicts anything
between), or each juror's symmetrized score with ``level='juror'``. With AlpacaEval's
preference in [1, 2] (2 = the model wins), p is the preference minus 1.

Per model (AlpacaEval's ``get_winrate``): n_total (pairs with a value), n_wins (p > 0.5),
n_wins_base (p < 0.5), n_draws (p = 0.5), win_rate = 100 mean(p), standard_error = 100 sem(p)
(sample standard deviation / sqrt(n)), discrete_win_rate = 100 (n_wins + n_draws / 2) / n_total.

Length-controlled: per model, a logistic regression of p (as a soft label) on a bias and
tanh(d / sd(d)), d = the model's response length minus the reference's in characters, fitted by
maximum likelihood; the length-controlled win rate is 100 sigma(bias), the win rate it predicts at
equal length. Where AlpacaEval's length_controlled_v1 differs: it adds an instruction-difficulty
term fitted on its own leaderboard's models (a table it downloads; not applicable to other data),
an L1 penalty chosen by cross-validation and a regularization towards "gamed" baselines; so the
figures agree with AlpacaEval's only where those terms are negligible.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray


def alpaca_winrate(p: NDArray[np.float64]) -> dict[str, Any]:
    """AlpacaEval's head-to-head figures from the model's preferences ``p`` in [0, 1]."""
    p = np.asarray(p, dtype=float)
    n = len(p)
    wins, base, draws = int(np.sum(p > 0.5)), int(np.sum(p < 0.5)), int(np.sum(p == 0.5))
    return {
        "n_total": n,
        "n_wins": wins,
        "n_wins_base": base,
        "n_draws": draws,
        "win_rate": float(100 * p.mean()) if n else None,
        "standard_error": float(100 * p.std(ddof=1) / math.sqrt(n)) if n > 1 else None,
        "discrete_win_rate": float(100 * (wins + draws / 2) / n) if n else None,
    }


def length_controlled(p: NDArray[np.float64], delta_len: NDArray[np.float64]) -> dict[str, Any]:
    """The win rate predicted at equal length by logit P(win) = bias + slope tanh(d / sd(d)),
    fitted to the soft labels ``p`` by Newton's method on the log-likelihood."""
    p = np.asarray(p, dtype=float)
    d = np.asarray(delta_len, dtype=float)
    sd = float(d.std(ddof=1)) if len(d) > 1 else 0.0
    feature = np.tanh(d / sd) if sd > 0 else np.zeros_like(d)
    x = np.column_stack([np.ones_like(p), feature])
    if not np.any(feature):  # no length differences: the slope is not identified, only the bias
        x = x[:, :1]
    beta = np.zeros(x.shape[1])
    for _ in range(100):
        mu = 1 / (1 + np.exp(-(x @ beta)))
        gradient = x.T @ (p - mu)
        hessian = (x * (mu * (1 - mu))[:, None]).T @ x + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.max(np.abs(step)) < 1e-12:
            break
    if not np.all(np.isfinite(beta)) or abs(beta[0]) > 30:  # all wins or all losses: the MLE runs off
        bias = math.copysign(math.inf, float(p.mean()) - 0.5) if p.mean() != 0.5 else 0.0
        return {"lc_win_rate": float(100 * p.mean()), "length_slope": None, "lc_separated": True, "lc_bias": bias}
    return {
        "lc_win_rate": float(100 / (1 + math.exp(-beta[0]))),
        "length_slope": float(beta[1]) if len(beta) > 1 else None,
        "lc_separated": False,
        "lc_bias": float(beta[0]),
    }
