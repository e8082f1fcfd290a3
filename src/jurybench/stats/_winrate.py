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

Length-controlled, two methods named apart (docs/statistics.md): ``glm`` (``length_controlled``),
per model a logistic regression of p (as a soft label) on a bias and tanh(d / sd(d)), d = the
model's response length minus the reference's in characters, fitted by maximum likelihood; its
win rate is 100 sigma(bias), the win rate it predicts at equal length. ``alpaca-eval``
(``alpaca_length_controlled``): AlpacaEval's length_controlled_v1 as AlpacaEval fits it, with
its instruction-difficulty table, an L1 penalty chosen by cross-validation and, given its
gamed baselines' rows, the regularization towards them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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


def length_controlled(p: NDArray[np.float64], delta_len: NDArray[np.float64]) -> dict[str, object]:
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


# AlpacaEval's length_controlled_v1 (Dubois et al. 2024, "Length-Controlled AlpacaEval"), fitted
# as AlpacaEval fits it: docs/statistics.md has the model; the numbers below are its settings.
ALPACA_CS = np.logspace(-4, 4, 10)  # the penalty grid searched (scikit-learn's default Cs=10)
ALPACA_FOLDS = 5
ALPACA_GAMED_WEIGHT = 0.2 / 2  # regularize_to_baseline_lambda over the two gamed baselines


@dataclass(frozen=True)
class GamedRows:
    """AlpacaEval's annotations of its deliberately gamed baselines (df_gamed.csv): soft labels,
    standardized length differences and instruction difficulties; fitted beside each model's
    rows with weight 0.1 and the not-gamed feature 0, they hold the length and difficulty slopes
    near what those baselines show."""

    preference: NDArray[np.float64]
    std_delta_len: NDArray[np.float64]
    difficulty: NDArray[np.float64]


def l1_soft_logistic(
    x: NDArray[np.float64], p: NDArray[np.float64], weight: NDArray[np.float64], c: float, *, tol: float = 1e-12
) -> NDArray[np.float64]:
    """argmin_w ||w||_1 + c sum_i weight_i CE(p_i, sigma(x_i w)), CE the cross-entropy of the soft
    label p_i (no intercept: liblinear's L1 logistic regression on the rows doubled as label 1
    with weight p and label 0 with weight 1 - p). Proximal Newton: each step minimizes the
    quadratic model plus the L1 term by coordinate descent, then backtracks on the objective."""
    n_features = x.shape[1]
    w = np.zeros(n_features)

    def objective(v: NDArray[np.float64]) -> float:
        z = x @ v
        # CE(p, sigma(z)) = log(1 + e^z) - p z
        return float(np.abs(v).sum() + c * np.sum(weight * (np.logaddexp(0, z) - p * z)))

    current = objective(w)
    for _ in range(200):
        z = x @ w
        q = 1 / (1 + np.exp(-z))
        gradient = c * x.T @ (weight * (q - p))
        hessian = c * (x * (weight * q * (1 - q))[:, None]).T @ x
        target = w.copy()  # minimize g.(t - w) + (t - w)' H (t - w)/2 + |t|_1 over t
        for _ in range(500):
            largest = 0.0
            for j in range(n_features):
                h = hessian[j, j]
                if h <= 0:
                    continue
                partial = gradient[j] + hessian[j] @ (target - w)
                unpenalized = target[j] - partial / h
                new = math.copysign(max(abs(unpenalized) - 1 / h, 0.0), unpenalized)
                largest = max(largest, abs(new - target[j]))
                target[j] = new
            if largest < tol:
                break
        step, direction = 1.0, target - w
        while True:
            trial = w + step * direction
            value = objective(trial)
            if value <= current + 1e-15 * max(1.0, abs(current)) or step < 1e-10:
                break
            step /= 2
        moved = float(np.max(np.abs(trial - w)))
        w, current = trial, min(value, current)
        if moved < tol:
            break
    return w


ALPACA_TOL = 1e-4  # liblinear's tolerance in AlpacaEval's fit (scikit-learn's default): its published figures
ALPACA_SEED = 123  # AlpacaEval's random_state (liblinear visits the features in a seeded random order)
ALPACA_MAX_ITER = 100  # scikit-learn's default, which AlpacaEval keeps


def liblinear_soft_logistic(
    x: NDArray[np.float64], p: NDArray[np.float64], weight: NDArray[np.float64], c: float, *, tol: float
) -> NDArray[np.float64]:
    """The same problem as :func:`l1_soft_logistic`, solved as AlpacaEval solves it: liblinear
    (through scikit-learn) on the rows doubled as label 1 with weight p and label 0 with weight
    1 - p, stopped at ``tol``, with AlpacaEval's seed and iteration limit. At AlpacaEval's 1e-4
    it stops short of the optimum by up to about 0.1 percentage point of the win rate: the figures
    AlpacaEval publishes carry that."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    n = len(p)
    # scikit-learn 1.8 names the L1 penalty l1_ratio=1 (its penalty argument is deprecated)
    l1: dict[str, object] = {"l1_ratio": 1.0} if LogisticRegression().penalty == "deprecated" else {"penalty": "l1"}
    model = LogisticRegression(
        **l1,
        solver="liblinear",
        C=c,
        fit_intercept=False,
        tol=tol,
        random_state=ALPACA_SEED,
        max_iter=ALPACA_MAX_ITER,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(np.vstack([x, x]), np.r_[np.ones(n), np.zeros(n)], sample_weight=np.r_[p * weight, (1 - p) * weight])
    return np.asarray(model.coef_[0], dtype=float)


def alpaca_folds(n: int) -> NDArray[np.int_]:
    """The cross-validation fold of each of n rows (each its own group): scikit-learn's GroupKFold
    puts equal groups on the lightest fold in turn, taking them from last to first."""
    return np.asarray((n - 1 - np.arange(n)) % ALPACA_FOLDS, dtype=int)


def alpaca_length_controlled(
    p: NDArray[np.float64],
    delta_len: NDArray[np.float64],
    difficulty: NDArray[np.float64],
    gamed: GamedRows | None = None,
    *,
    solver_tol: float | None = None,
) -> dict[str, object]:
    """AlpacaEval's length-controlled win rate of one model against the reference. ``p``: the
    model's preference per instruction (NaN where the judge gave none), ``delta_len`` the
    reference's length minus the model's (characters), ``difficulty`` the instruction's
    difficulty. Features: tanh(delta_len / sd(delta_len)), the difficulty and a not-gamed
    indicator (1), no intercept; soft labels; an L1 penalty chosen from ``ALPACA_CS`` by 5-fold
    cross-validated weighted log loss, then refitted on all rows. The win rate is the mean over
    every instruction of sigma(w_difficulty d_i + w_not_gamed): the model at the reference's length;
    ``lc_standard_error`` is 100 times the standard error of those predictions over instructions,
    as AlpacaEval reports it. ``solver_tol``: None fits each penalty to its optimum
    (:func:`l1_soft_logistic`); a number fits it as AlpacaEval does, with liblinear stopped at that
    tolerance (``ALPACA_TOL`` reproduces the published figures)."""
    p, delta_len, difficulty = (np.asarray(v, dtype=float) for v in (p, delta_len, difficulty))
    sd = float(np.std(delta_len, ddof=1)) if len(delta_len) > 1 else 0.0
    standardized = delta_len / sd if sd > 0 else np.zeros_like(delta_len)
    keep = ~np.isnan(p)
    rows = [np.column_stack([np.tanh(standardized[keep]), difficulty[keep], np.ones(int(keep.sum()))])]
    labels, weights = [p[keep]], [np.ones(int(keep.sum()))]
    if gamed is not None:
        kept = ~np.isnan(gamed.preference)
        rows.insert(
            0, np.column_stack([np.tanh(gamed.std_delta_len[kept]), gamed.difficulty[kept], np.zeros(int(kept.sum()))])
        )
        labels.insert(0, gamed.preference[kept])
        weights.insert(0, np.full(int(kept.sum()), ALPACA_GAMED_WEIGHT))
    x, y, w = np.vstack(rows), np.concatenate(labels), np.concatenate(weights)
    if solver_tol is not None and not (0 < solver_tol < 1):
        from jurybench.errors import JurybenchError

        raise JurybenchError(
            f"--solver-tol {solver_tol}: a tolerance is above 0 and below 1.", hint="AlpacaEval's: 1e-4."
        )

    def fit(rows: NDArray[np.bool_] | slice, c: float) -> NDArray[np.float64]:
        if solver_tol is None:
            return l1_soft_logistic(x[rows], y[rows], w[rows], c)
        return liblinear_soft_logistic(x[rows], y[rows], w[rows], c, tol=solver_tol)

    folds = alpaca_folds(len(y))
    scores = []
    for c in ALPACA_CS:
        losses = []
        for fold in range(ALPACA_FOLDS):
            train, test = folds != fold, folds == fold
            coef = fit(train, float(c))
            q = np.clip(1 / (1 + np.exp(-(x[test] @ coef))), 1e-15, 1 - 1e-15)
            losses.append(float(-np.mean(w[test] * (y[test] * np.log(q) + (1 - y[test]) * np.log(1 - q)))))
        scores.append(-float(np.mean(losses)))
    best = int(np.argmax(scores))
    coef = fit(slice(None), float(ALPACA_CS[best]))
    predicted = 1 / (1 + np.exp(-(coef[1] * difficulty + coef[2])))
    return {
        "length_controlled_winrate": float(100 * predicted.mean()),
        "lc_standard_error": float(100 * predicted.std(ddof=1) / math.sqrt(len(predicted)))
        if len(predicted) > 1
        else None,
        "lc_method": "alpaca-eval",
        "lc_solver": "exact optimum" if solver_tol is None else f"liblinear, tol {solver_tol:g}",
        "lc_weights": {
            "tanh_std_delta_len": float(coef[0]),
            "instruction_difficulty": float(coef[1]),
            "not_gamed_baseline": float(coef[2]),
        },
        "lc_c": float(ALPACA_CS[best]),
        "lc_regularized_to_gamed": gamed is not None,
    }
