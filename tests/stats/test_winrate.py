"""AlpacaEval's length-controlled win rate (issue 44, item 2): the solver against liblinear, the
cross-validated choice against scikit-learn's pieces, two cases worked by hand, and the
statistic end to end from released-shape annotations and a difficulty table."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from jurybench.stats._winrate import (
    ALPACA_CS,
    GamedRows,
    alpaca_folds,
    alpaca_length_controlled,
    l1_soft_logistic,
)
from tests.conftest import run_cli, write


def _data(seed: int, n: int = 120) -> tuple[np.ndarray, np.ndarray, np.ndarray, GamedRows]:
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 1, n)
    delta = rng.normal(0, 400, n)  # the reference's length minus the model's
    eta = 0.4 - 0.7 * difficulty - 0.9 * np.tanh(delta / delta.std(ddof=1))
    p = np.clip(1 / (1 + np.exp(-eta)) + rng.normal(0, 0.1, n), 0, 1)
    p[rng.random(n) < 0.05] = np.nan  # no usable answer
    gamed = GamedRows(rng.uniform(0, 1, 60), rng.normal(0, 1, 60), rng.normal(0, 1, 60))
    return p, delta, difficulty, gamed


def test_the_l1_solver_is_liblinears_optimum() -> None:
    from sklearn.linear_model import LogisticRegression

    p, delta, difficulty, _ = _data(1)
    keep = ~np.isnan(p)
    x = np.column_stack([np.tanh(delta[keep] / delta.std(ddof=1)), difficulty[keep], np.ones(int(keep.sum()))])
    w = np.where(np.arange(int(keep.sum())) % 3 == 0, 0.1, 1.0)
    for c in (0.05, 1.0, 100.0):
        ours = l1_soft_logistic(x, p[keep], w, c)
        doubled = np.vstack([x, x])
        labels = np.r_[np.ones(len(x)), np.zeros(len(x))]
        weights = np.r_[p[keep] * w, (1 - p[keep]) * w]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference = LogisticRegression(
                penalty="l1", solver="liblinear", C=c, fit_intercept=False, tol=1e-12, max_iter=100_000
            ).fit(doubled, labels, sample_weight=weights)
        assert ours == pytest.approx(reference.coef_[0], abs=1e-8)


def test_the_penalty_is_chosen_as_scikit_learns_group_k_fold_would() -> None:
    """The whole procedure again from scikit-learn's parts: GroupKFold over the doubled rows (each
    instruction one group), liblinear's fit per fold and penalty, the weighted soft log loss on
    the held-out fold, the best mean, and a refit on every row."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    p, delta, difficulty, gamed = _data(2)
    ours = alpaca_length_controlled(p, delta, difficulty, gamed)
    keep, kept = ~np.isnan(p), ~np.isnan(gamed.preference)
    std = np.tanh(delta / delta.std(ddof=1))
    x = np.vstack(
        [
            np.column_stack([np.tanh(gamed.std_delta_len[kept]), gamed.difficulty[kept], np.zeros(int(kept.sum()))]),
            np.column_stack([std[keep], difficulty[keep], np.ones(int(keep.sum()))]),
        ]
    )
    y = np.r_[gamed.preference[kept], p[keep]]
    w = np.r_[np.full(int(kept.sum()), 0.1), np.ones(int(keep.sum()))]
    n = len(y)
    doubled, labels, weights = np.vstack([x, x]), np.r_[np.ones(n), np.zeros(n)], np.r_[y * w, (1 - y) * w]
    groups = np.r_[np.arange(n), np.arange(n)]
    splits = list(GroupKFold(n_splits=5).split(doubled, labels, groups))

    def fit(rows: np.ndarray, c: float) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LogisticRegression(
                penalty="l1", solver="liblinear", C=c, fit_intercept=False, tol=1e-12, max_iter=100_000
            )
            return model.fit(doubled[rows], labels[rows], sample_weight=weights[rows]).coef_[0]  # type: ignore[no-any-return]

    means = []
    for c in ALPACA_CS:
        losses = []
        for train, test in splits:
            q = np.clip(1 / (1 + np.exp(-(doubled[test] @ fit(train, c)))), 1e-15, 1 - 1e-15)
            truth = y[groups[test]]
            losses.append(-np.mean(w[groups[test]] * (truth * np.log(q) + (1 - truth) * np.log(1 - q))))
        means.append(np.mean(losses))
    best = float(ALPACA_CS[int(np.argmin(means))])
    coef = fit(np.arange(2 * n), best)
    expected = 100 * np.mean(1 / (1 + np.exp(-(coef[1] * difficulty + coef[2]))))
    assert ours["lc_c"] == best
    assert ours["length_controlled_winrate"] == pytest.approx(expected, abs=1e-6)
    assert [alpaca_folds(n)[g] for g in groups[splits[0][1]]] == [0] * len(splits[0][1])


def test_hand_worked_limits() -> None:
    """(1) No length differences and one difficulty for every instruction: only the level is
    fitted, so the win rate at equal length is the mean preference (the lightest penalty wins the
    cross-validation; its shrinkage is below 1e-3 pp here): p = 0.9, 0.8, 0.7, 0.6 five times ->
    75. (2) A model that wins exactly when it is longer, the lengths mirrored: the level is 0 by
    symmetry, so the win rate at equal length is 50 whatever the slope."""
    p = np.tile([0.9, 0.8, 0.7, 0.6], 5)
    same = alpaca_length_controlled(p, np.zeros(20), np.full(20, 1.5))
    assert same["length_controlled_winrate"] == pytest.approx(75.0, abs=1e-3)
    assert same["lc_weights"]["tanh_std_delta_len"] == 0.0
    delta = np.tile([-300.0, 300.0, -100.0, 100.0], 5)  # negative: the model is the longer
    wins = (delta < 0).astype(float)
    pure = alpaca_length_controlled(wins, delta, np.full(20, 0.5))
    assert pure["length_controlled_winrate"] == pytest.approx(50.0, abs=1e-6)
    assert pure["lc_weights"]["tanh_std_delta_len"] < 0  # longer than the reference: more wins


def test_stats_winrate_length_controlled_alpaca_eval_end_to_end(tmp_path: Path) -> None:
    """Released-shape annotations for one model (its records in AlpacaEval's instruction order),
    a difficulty table keyed by that order and gamed rows: the CLI's figure is the function's on
    the same numbers, where the reference's length minus the model's is the length feature, an
    instruction without a usable preference still counts in the mean over instructions, and the
    GLM of length alone stays available as 'glm'."""
    rng = np.random.default_rng(5)
    n = 40
    records, p, delta = [], [], []
    for k in range(n):
        ref, out = "r" * int(rng.integers(20, 200)), "m" * int(rng.integers(20, 200))
        preference = None if k == 7 else float(np.clip(1.5 + 0.3 * rng.normal() + (len(out) - len(ref)) / 400, 1, 2))
        records.append(
            {
                "instruction": f"Task {k}.",
                "output_1": ref,
                "generator_1": "ref",
                "output_2": out,
                "generator_2": "m",
                "annotator": "j",
                "preference": preference,
            }
        )
        p.append(np.nan if preference is None else preference - 1)
        delta.append(len(ref) - len(out))
    difficulty = rng.normal(0, 1, n)
    lines = ["index,instruction_difficulty,preference,std_delta_len,not_gamed_baseline"]
    lines += [f"{k},{difficulty[k]},,0,True" for k in range(n)]  # the table's own rows: not gamed
    gamed_p, gamed_len = rng.uniform(0, 1, n), rng.normal(0, 1, n)
    lines += [f"{k},{difficulty[k]},{gamed_p[k]},{gamed_len[k]},False" for k in range(n)]
    table = write(tmp_path / "df_gamed.csv", "\n".join(lines) + "\n")
    db = str(tmp_path / "lc.duckdb")
    done = run_cli(
        "judgments", "import", str(write(tmp_path / "a.json", json.dumps(records))), "--run", "lc", "--db", db
    )
    assert done.exit_code == 0, done.stderr
    out = run_cli(
        "stats",
        "winrate",
        "--run",
        "lc",
        "--reference",
        "ref",
        "--length-controlled",
        "alpaca-eval",
        "--difficulty",
        str(table),
        "--format",
        "json",
        "--db",
        db,
    )
    assert out.exit_code == 0, out.stderr
    result = json.loads(out.stdout)["result"]
    (model,) = result["boards"]["jury"]["models"]
    expected = alpaca_length_controlled(
        np.array(p), np.array(delta, dtype=float), difficulty, GamedRows(gamed_p, gamed_len, difficulty)
    )
    assert model["length_controlled_winrate"] == pytest.approx(expected["length_controlled_winrate"], abs=1e-9)
    assert result["regularized_to_gamed"] is True and model["n_total"] == n - 1
    assert model["lc_solver"] == "exact optimum" and model["lc_standard_error"] > 0
    as_published = run_cli(
        "stats",
        "winrate",
        "--run",
        "lc",
        "--reference",
        "ref",
        "--length-controlled",
        "alpaca-eval",
        "--difficulty",
        str(table),
        "--solver-tol",
        "1e-4",
        "--format",
        "json",
        "--db",
        db,
    )
    assert as_published.exit_code == 0, as_published.stderr
    (published,) = json.loads(as_published.stdout)["result"]["boards"]["jury"]["models"]
    expected = alpaca_length_controlled(
        np.array(p),
        np.array(delta, dtype=float),
        difficulty,
        GamedRows(gamed_p, gamed_len, difficulty),
        solver_tol=1e-4,
    )
    assert published["length_controlled_winrate"] == pytest.approx(expected["length_controlled_winrate"], abs=1e-9)
    assert published["lc_solver"] == "liblinear, tol 0.0001"
    stray = run_cli("stats", "winrate", "--run", "lc", "--reference", "ref", "--solver-tol", "1e-4", "--db", db)
    assert stray.exit_code == 2 and "--solver-tol is for --length-controlled alpaca-eval" in stray.stderr
    glm = run_cli("stats", "winrate", "--run", "lc", "--reference", "ref", "--length-controlled", "glm", "--db", db)
    assert glm.exit_code == 0 and "lc_win_rate" in glm.stdout
    missing = run_cli(
        "stats", "winrate", "--run", "lc", "--reference", "ref", "--length-controlled", "alpaca-eval", "--db", db
    )
    assert missing.exit_code == 2 and "needs --difficulty FILE" in missing.stderr


def _alpaca_eval_procedure(x: np.ndarray, y: np.ndarray, w: np.ndarray, tol: float = 1e-4) -> np.ndarray:
    """AlpacaEval's fit_LogisticRegressionCV (metrics/glm_winrate.py, at commit cd543a1) as it
    runs: the rows doubled (label 1 weighted p, label 0 weighted 1 - p, one group per row),
    scikit-learn's LogisticRegressionCV with GroupKFold(5), liblinear at its default tolerance,
    random_state 123 and the continuous log loss as the scorer through metadata routing."""
    import sklearn
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GroupKFold

    def logloss_continuous(y_true, y_pred, true_prob, true_sample_weight=None):  # type: ignore[no-untyped-def]
        truth = np.where(y_true == 1, true_prob, 1 - true_prob)
        q = np.clip(y_pred, 1e-15, 1 - 1e-15)
        losses = truth * np.log(q) + (1 - truth) * np.log(1 - q)
        return -np.mean(losses * true_sample_weight)

    n = len(y)
    true_prob = np.r_[y, 1 - y]
    true_weight = np.r_[w, w]
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scorer = make_scorer(
            logloss_continuous, response_method="predict_proba", greater_is_better=False
        ).set_score_request(true_sample_weight=True, true_prob=True)
        model = LogisticRegressionCV(
            cv=GroupKFold(n_splits=5),
            scoring=scorer,
            random_state=123,
            solver="liblinear",
            fit_intercept=False,
            tol=tol,
            penalty="l1",
        )
        model.set_fit_request(sample_weight=True)
        model.fit(
            np.vstack([x, x]),
            np.r_[np.ones(n), np.zeros(n)],
            sample_weight=true_prob * true_weight,
            groups=np.r_[np.arange(n), np.arange(n)],
            true_sample_weight=true_weight,
            true_prob=true_prob,
        )
    return model.coef_[0], float(model.C_[0])  # type: ignore[return-value]


@pytest.mark.parametrize("seed", [3, 4])
def test_at_alpaca_evals_tolerance_the_figure_is_the_one_alpaca_eval_publishes(seed: int) -> None:
    """Issue 58, item 2: with --solver-tol 1e-4 the figure is AlpacaEval's own procedure's (its
    LogisticRegressionCV run on the same rows), which stops short of the optimum; without it,
    the exact optimum. lc_standard_error is AlpacaEval's: 100 sem of the predicted preferences."""
    p, delta, difficulty, gamed = _data(seed, n=200)
    keep, kept = ~np.isnan(p), ~np.isnan(gamed.preference)
    std = np.tanh(delta / delta.std(ddof=1))
    x = np.vstack(
        [
            np.column_stack([np.tanh(gamed.std_delta_len[kept]), gamed.difficulty[kept], np.zeros(int(kept.sum()))]),
            np.column_stack([std[keep], difficulty[keep], np.ones(int(keep.sum()))]),
        ]
    )
    y = np.r_[gamed.preference[kept], p[keep]]
    w = np.r_[np.full(int(kept.sum()), 0.1), np.ones(int(keep.sum()))]
    coef, c = _alpaca_eval_procedure(x, y, w)
    predicted = 1 / (1 + np.exp(-(coef[1] * difficulty + coef[2])))
    published = alpaca_length_controlled(p, delta, difficulty, gamed, solver_tol=1e-4)
    assert published["lc_c"] == c and published["lc_solver"] == "liblinear, tol 0.0001"
    assert published["length_controlled_winrate"] == pytest.approx(100 * predicted.mean(), abs=1e-9)
    assert published["lc_standard_error"] == pytest.approx(100 * predicted.std(ddof=1) / np.sqrt(200), abs=1e-9)
    exact = alpaca_length_controlled(p, delta, difficulty, gamed)
    assert exact["lc_solver"] == "exact optimum"
    tight, _ = _alpaca_eval_procedure(x, y, w, tol=1e-12)
    if exact["lc_c"] == c:
        at_optimum = 100 * np.mean(1 / (1 + np.exp(-(tight[1] * difficulty + tight[2]))))
        assert exact["length_controlled_winrate"] == pytest.approx(at_optimum, abs=1e-6)
