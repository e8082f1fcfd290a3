"""Least-squares juror weights, validated honestly.

Per criterion: S(x) = sum_j w_j J_j(x) + sum_k v_k z_k(x) + b, fitted by least squares
against the mean human label on a seeded train split grouped by prompt (no prompt on
both sides), evaluated on the held-out test split, and by grouped k-fold cross-validation inside the training split
(which alone chooses the winning variant: the test split informs no choice).

Missing or invalid juror votes: a juror with no valid score for an item gets that
juror's mean score on the training split (so the fit neither drops the item nor sees
the test data); the number of imputed cells is reported and stored per scored item.

Variants: ``ols``, ``ridge`` (alpha chosen by inner CV), ``nnls`` (non-negative weights)
and ``cross`` (every juror's score on every criterion as features, ridge), then ``mean`` (the
plain mean of the criterion's jurors, rescaled: equal weights) and ``shrunk`` (the best of the
fitted variants shrunk toward those equal weights, the amount chosen by the same grouped
cross-validation): the plain mean is always a candidate, so calibration falls back to it when
fitting weights does not help. Both choices (the share, and the winner) take the simplest
candidate that a one-sided paired t-test over the folds does not find worse than the one with
the lowest CV RMSE (``no_worse``). Baselines on
the same split: each juror alone and the run's jury (its own aggregation rule), each
linearly rescaled on the training split. Juror weights are keyed by the juror's identity
(juror_key), never by its display name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from jurybench.calibration._data import Array, CalibrationData, Index
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from numpy.typing import NDArray

FITTED = ("ols", "ridge", "nnls", "cross")
METHODS = (*FITTED, "shrunk", "mean")  # the last two are built from the fitted ones and the plain mean
SHRINK_GRID = np.linspace(0.0, 1.0, 11)  # share of the equal-weight mean in the shrunk variant
# A more complex candidate replaces a simpler one only when a one-sided paired t-test over the
# cross-validation folds finds it better at this level (see ``no_worse``).
SELECT_ALPHA = 0.05


def regression_metrics(pred: Array, truth: Array) -> dict[str, float]:
    from scipy.stats import kendalltau, pearsonr, spearmanr

    err = pred - truth
    mse = float(np.mean(err**2))
    varied = _varies(pred) and _varies(truth)  # a constant rater (a real judge's one answer) has no correlation
    ss_tot = float(np.sum((truth - truth.mean()) ** 2))
    return {
        "n": float(len(truth)),
        "mae": float(np.mean(np.abs(err))),
        "mse": mse,
        "rmse": float(np.sqrt(mse)),
        "r2": 1 - float(np.sum(err**2)) / ss_tot if ss_tot > 0 else float("nan"),
        "pearson": float(pearsonr(pred, truth).statistic) if varied else float("nan"),
        "spearman": float(spearmanr(pred, truth).statistic) if varied else float("nan"),
        "kendall": float(kendalltau(pred, truth).statistic) if varied else float("nan"),
    }


def _estimator(method: str) -> Any:
    from sklearn.linear_model import LinearRegression, RidgeCV

    if method == "ols":
        return LinearRegression()
    if method == "nnls":
        return LinearRegression(positive=True)
    if method in ("ridge", "cross"):
        return RidgeCV(alphas=np.logspace(-3, 3, 13))
    raise JurybenchError(f"method {method!r} is not valid.", hint=f"Valid: auto, {', '.join(METHODS)}.")


def impute(scores: Array, means: Array) -> tuple[Array, Array]:
    """Fill missing juror scores with the given per-juror means; also return counts per row."""
    missing = np.isnan(scores)
    filled = np.where(missing, means[None, :], scores)
    return filled, missing.sum(axis=1)


@dataclass
class Design:
    """Feature matrix builder for one variant, remembering training means for imputation."""

    method: str
    names: list[str]

    def matrix(self, scores: Array, covariates: Array, means: Array) -> tuple[Array, Array]:
        filled, n_missing = impute(scores, means)
        return np.hstack([filled, covariates]) if covariates.size else filled, n_missing


def _split(groups: list[str], test_size: float, seed: int) -> tuple[NDArray[np.int_], NDArray[np.int_]]:
    from sklearn.model_selection import GroupShuffleSplit

    splitter = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=seed)
    train, test = next(splitter.split(np.zeros(len(groups)), groups=groups))
    return train, test


def _folds(groups: list[str], k: int, seed: int) -> list[tuple[NDArray[np.int_], NDArray[np.int_]]]:
    from sklearn.model_selection import GroupKFold

    n_groups = len(set(groups))
    if n_groups < k:
        raise JurybenchError(
            f"{k}-fold cross-validation needs at least {k} groups in the training split; there are {n_groups}.",
            hint=f"Pass --folds {max(2, n_groups)} (or fewer), or group by something finer with --group-by.",
        )
    try:
        splitter = GroupKFold(n_splits=k, shuffle=True, random_state=seed)
    except TypeError:  # scikit-learn < 1.6 has no shuffling GroupKFold
        splitter = GroupKFold(n_splits=k)
    return list(splitter.split(np.zeros(len(groups)), groups=groups))


def _column_means(x: Array) -> Array:
    """Each column's mean over its defined values; NaN (and no warning) for a column with none."""
    defined = ~np.isnan(x)
    counts = defined.sum(axis=0)
    sums = np.where(defined, x, 0.0).sum(axis=0)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _fit_predict(
    method: str, features: Array, target: Array, train: Index, test: Index
) -> tuple[Any, Array, Array, Array]:
    """Fit on train rows (imputing with train means) and predict test rows."""
    means = _column_means(features[train])
    # a juror with no valid score in the training rows (a real judge whose answers were all
    # invalid) is imputed with the mean of every score: a constant, so it takes no weight of its own
    overall = features[~np.isnan(features)]
    means = np.where(np.isnan(means), float(overall.mean()) if overall.size else 0.0, means)
    x_train, _ = impute(features[train], means)
    x_test, _ = impute(features[test], means)
    model = _estimator(method).fit(x_train, target[train])
    return model, model.predict(x_test), means, x_train


def fit_criterion(
    data: CalibrationData,
    *,
    cross_features: Array | None,
    cross_names: list[str] | None,
    methods: list[str],
    test_size: float,
    folds: int,
    seed: int,
    n_boot: int,
) -> dict[str, Any]:
    """Fit and validate every variant and baseline for one criterion."""
    cov_names = list(data.covariates)
    cov = np.column_stack([data.covariates[c] for c in cov_names]) if cov_names else np.empty((len(data.items), 0))
    juror_features = np.hstack([data.scores, cov])
    names = [*data.juror_keys, *cov_names]
    train, test = _split(data.groups, test_size, seed)
    if len(train) < len(names) + 2 or len(test) < 3:
        raise JurybenchError(
            f"criterion '{data.criterion}': too few items ({len(data.items)}) to fit {len(names)} weights and test them."
        )
    y = data.target
    # Cross-validation (for choosing the variant) runs inside the training split only, so
    # the held-out test split plays no part in any choice.
    train_groups = [data.groups[i] for i in train]
    folds_idx = [(train[a], train[b]) for a, b in _folds(train_groups, folds, seed)]
    variants: dict[str, object] = {}
    fitted: dict[str, object] = {}
    for method in [m for m in methods if m in FITTED]:
        if method == "cross":
            if cross_features is None or cross_names is None:
                continue
            features, feature_names = np.hstack([cross_features, cov]), [*cross_names, *cov_names]
        else:
            features, feature_names = juror_features, names
        model, pred, means, x_train = _fit_predict(method, features, y, train, test)
        cv_rmse, fold_preds = [], []
        for f_train, f_test in folds_idx:
            _, f_pred, _, _ = _fit_predict(method, features, y, f_train, f_test)
            fold_preds.append(f_pred)
            cv_rmse.append(float(np.sqrt(np.mean((f_pred - y[f_test]) ** 2))))
        fitted[method] = (features, feature_names, pred, fold_preds, x_train)
        coefs = {n: float(w) for n, w in zip(feature_names, model.coef_, strict=True)}
        ci = _bootstrap_coefficients(
            method,
            x_train,
            y[train],
            [data.groups[i] for i in train],
            feature_names,
            n_boot,
            seed,
            float(getattr(model, "alpha_", 0.0)),
        )
        se = _ols_standard_errors(x_train, y[train], model, feature_names) if method == "ols" else {}
        variants[method] = {
            "weights": coefs,
            "intercept": float(model.intercept_),
            "alpha": float(getattr(model, "alpha_", 0.0)),
            "feature_names": feature_names,
            "train_means": {n: float(m) for n, m in zip(feature_names, means, strict=True)},
            "coefficient_ci": ci,
            "standard_errors": se,
            "test": regression_metrics(pred, y[test]),
            "cv_rmse_mean": float(np.mean(cv_rmse)),
            "cv_rmse_sd": float(np.std(cv_rmse, ddof=1)),
            "cv_rmse_folds": cv_rmse,
            "imputed_train": int(np.isnan(features[train]).sum()),
            "imputed_test": int(np.isnan(features[test]).sum()),
        }
    _toward_the_mean(
        data, variants, fitted, y, train, test, folds_idx, n_boot, seed, [m for m in ("mean", "shrunk") if m in methods]
    )
    baselines = _baselines(data, y, train, test, folds_idx)
    winner = choose(variants)
    inverting, negative = weight_warnings(cast("dict[str, Any]", variants[winner]), data, winner, len(train))
    warnings = [*inverting, *negative]
    if len(test) < MIN_TEST_ITEMS:
        warnings.append(
            f"{data.criterion}: {len(test)} held-out items, fewer than {MIN_TEST_ITEMS}: its test figures are rough "
            "(their own error is of the order of RMSE / sqrt(2 n)); label more, or give a larger --test-size."
        )
    return {
        "least_squares": least_squares_weights(juror_features, y, data.groups, names),
        "criterion": data.criterion,
        "n_items": len(data.items),
        "n_train": len(train),
        "n_test": len(test),
        "n_groups": len(set(data.groups)),
        # said as such: a juror with no valid score on the labelled items is imputed with a constant,
        # so any weight it gets means nothing
        "jurors_without_scores": [j for j, col in zip(data.jurors, data.scores.T, strict=True) if np.isnan(col).all()],
        "variants": variants,
        "baselines": baselines,
        "winner": winner,
        # Weights that invert the jury: `calibrate apply` refuses them unless asked
        # (--allow-negative-weights); a juror weighted below 0 is said whenever it is applied.
        "inverts_jury": inverting,
        "weight_warnings": [*inverting, *negative],
        "warnings": warnings,
        "note": (
            "Fitted weights did not beat the plain mean of the jurors in cross-validation: the calibration is "
            "that mean, rescaled to the human scale."
        )
        if winner == "mean"
        else None,
        "training_data_hash": data.digest(),
    }


MIN_TEST_ITEMS = 20  # below it the held-out figures are printed with two decimals and a warning


def weight_warnings(
    variant: dict[str, Any], data: CalibrationData, name: str, n_train: int
) -> tuple[list[str], list[str]]:
    """What is wrong with the weights a calibration applies, in words: (inverting, negative).
    Inverting: weights on the jurors summing to 0 or less (the calibration inverts the jury: a
    higher jury score gives a lower calibrated one), which `calibrate apply` refuses unless asked.
    Negative: a juror weighted below 0 while the jury is not inverted (its higher scores lower the
    calibrated score; jurors that agree with each other share their weight so), said whenever the
    calibration is applied."""
    keys = set(data.juror_keys)
    labels = dict(zip(data.juror_keys, data.jurors, strict=True))
    on_jurors = {
        labels.get(k.partition(":")[2] if ":" in k else k, k): float(w)
        for k, w in variant["weights"].items()
        if k in keys or (k.partition(":")[0] == data.criterion and k.partition(":")[2] in keys)
    }
    inverting, negative = [], []
    total = sum(on_jurors.values())
    if on_jurors and total <= 0:
        inverting.append(
            f"{data.criterion}: the {name} calibration inverts the jury: its weights on the jurors sum to {total:+.3f} "
            f"(fitted on {n_train} items), so a higher jury score gives a lower calibrated score"
        )
    below = {j: w for j, w in on_jurors.items() if w < 0}
    if below and total > 0:
        listed = ", ".join(f"{j} {w:+.3f}" for j, w in sorted(below.items()))
        negative.append(
            f"{data.criterion}: the {name} calibration weights {listed} below 0 (fitted on {n_train} items): "
            "that juror's higher scores lower the calibrated score"
        )
    return inverting, negative


LEAST_SQUARES_METHOD = (
    "least squares on every labelled row (missing scores imputed by their column's mean); 95 % intervals "
    "from the leave-one-group-out jackknife, t with groups - 1 degrees of freedom"
)


def least_squares_weights(features: Array, y: Array, groups: list[str], names: list[str]) -> dict[str, object]:
    """The weights to read and report: ordinary least squares of the target on the jurors and
    covariates over every labelled row, each with a 95 % interval from the jackknife that leaves
    out one group (prompt, country, ...) at a time, t with groups - 1 degrees of freedom.

    The predictive winner is chosen among variants by cross-validation and may be shrunk toward
    equal weights; its weights predict well, but intervals around them do not cover the weights
    of the model that generated the data (a shrunk weight is biased on purpose). These are the
    plain least-squares weights with intervals that do (checked in ``make validity``); rows of
    a group are not assumed independent."""
    from scipy.stats import t

    means = _column_means(features)
    x, _ = impute(features, np.where(np.isnan(means), 0.0, means))
    design = np.hstack([np.ones((len(y), 1)), x])
    labels = np.asarray(groups, dtype=str)
    unique = np.unique(labels)
    if len(unique) < design.shape[1] + 2:
        return {
            "method": LEAST_SQUARES_METHOD,
            "note": f"{len(unique)} groups are too few for {design.shape[1]} coefficients with intervals",
        }
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    leave_out = np.array([np.linalg.lstsq(design[labels != g], y[labels != g], rcond=None)[0] for g in unique])
    k = len(unique)
    se = np.sqrt((k - 1) / k * np.sum((leave_out - leave_out.mean(axis=0)) ** 2, axis=0))
    q = float(t.ppf(0.975, k - 1))
    entries = ["intercept", *names]
    return {
        "method": LEAST_SQUARES_METHOD,
        "n_rows": len(y),
        "n_groups": k,
        "weights": {n: float(c) for n, c in zip(entries[1:], coef[1:], strict=True)},
        "intercept": float(coef[0]),
        "standard_errors": {n: float(v) for n, v in zip(entries, se, strict=True)},
        "ci": {
            n: {"low": float(c - q * v), "high": float(c + q * v)} for n, c, v in zip(entries, coef, se, strict=True)
        },
    }


def no_worse(candidate: list[float], best: list[float], alpha: float = SELECT_ALPHA) -> bool:
    """Whether ``candidate`` counts as good as ``best`` on the same cross-validation folds: its
    mean excess RMSE over them is not significant by a one-sided paired t-test at ``alpha``
    (excess <= t_(1-alpha, k-1) standard errors of the paired differences). The folds differ in
    difficulty far more than two variants differ on any one fold, so it is the paired
    difference, not either variant's own spread, that measures the noise."""
    from scipy.stats import t

    diff = np.asarray(candidate, dtype=float) - np.asarray(best, dtype=float)
    if len(diff) < 2:
        return bool(diff.mean() <= 0.0)
    se = float(np.std(diff, ddof=1)) / np.sqrt(len(diff))
    return bool(diff.mean() <= float(t.ppf(1 - alpha, len(diff) - 1)) * se + 1e-12)


def choose(variants: dict[str, Any]) -> str:
    """The winning variant: the simplest that is ``no_worse`` than the variant with the lowest CV
    RMSE, in the order mean, shrunk, then the fitted variants by CV RMSE. A more complex variant
    wins only when the folds say, significantly, that it predicts better."""
    best = min(variants, key=lambda m: variants[m]["cv_rmse_mean"])
    order: list[str] = [m for m in ("mean", "shrunk") if m in variants]
    order += sorted((m for m in variants if m not in order), key=lambda m: variants[m]["cv_rmse_mean"])
    return next(m for m in order if no_worse(variants[m]["cv_rmse_folds"], variants[best]["cv_rmse_folds"]))


def _mean_fit(scores: Array, y: Array, train: Index, test: Index) -> tuple[float, float, float, Array]:
    """The plain mean of the jurors present (as the run's mean rule takes it), rescaled on
    ``train``: slope, intercept, the fill for an item no juror scored (the training mean of the
    mean), and its predictions for ``test``; the 'jury (mean)' baseline exactly."""
    with np.errstate(all="ignore"):
        avg = np.nanmean(scores, axis=1)
    keep = ~np.isnan(avg[train])
    slope, intercept = np.polyfit(avg[train][keep], y[train][keep], 1)
    fill = float(np.nanmean(avg[train]))
    filled = np.where(np.isnan(avg), fill, avg)
    return float(slope), float(intercept), fill, np.asarray(intercept + slope * filled[test], dtype=float)


def _toward_the_mean(
    data: CalibrationData,
    variants: dict[str, Any],
    fitted: dict[str, Any],
    y: Array,
    train: Index,
    test: Index,
    folds_idx: list[tuple[Index, Index]],
    n_boot: int,
    seed: int,
    wanted: list[str],
) -> None:
    """Add ``mean`` (the plain mean of the jurors present, rescaled) and ``shrunk``: the fitted
    variant with the lowest CV RMSE blended with it, (1 - lam) base + lam mean, lam chosen on the
    same folds (ties go to the larger lam). Both keep the mean as a ``mean_part`` so that applying
    them averages the jurors present, as the baseline does; ``weights`` are the effective
    weights when every juror answered."""
    if not wanted:
        return
    if not fitted and "shrunk" in wanted:
        raise JurybenchError("method 'shrunk' needs a fitted method to shrink (ols, ridge, nnls or cross).")
    if fitted:  # the fitted variant with the lowest CV RMSE is what the mean is blended with
        base = min(fitted, key=lambda m: variants[m]["cv_rmse_mean"])
        _features, names, base_pred, base_folds, x_train = fitted[base]
        spec = variants[base]
    else:  # the mean alone (share 1): a zero base on the criterion's juror columns
        base, names = "mean", list(data.juror_keys)
        means = _column_means(data.scores[train])
        base_pred, base_folds = np.zeros(len(test)), [np.zeros(len(b)) for _, b in folds_idx]
        x_train = impute(data.scores[train], means)[0]
        spec = {
            "weights": dict.fromkeys(names, 0.0),
            "intercept": 0.0,
            "alpha": 0.0,
            "train_means": {k: float(v) for k, v in zip(names, means, strict=True)},
            "imputed_train": int(np.isnan(data.scores[train]).sum()),
            "imputed_test": int(np.isnan(data.scores[test]).sum()),
        }
    keys = set(data.juror_keys)
    cols = [
        i
        for i, n in enumerate(names)
        if n in keys or (n.partition(":")[0] == data.criterion and n.partition(":")[2] in keys)
    ]
    slope, intercept, fill, mean_pred = _mean_fit(data.scores, y, train, test)
    mean_folds = [_mean_fit(data.scores, y, a, b)[3] for a, b in folds_idx]

    def cv(lam: float) -> list[float]:
        return [
            float(np.sqrt(np.mean(((1 - lam) * p + lam * q - y[b]) ** 2)))
            for p, q, (_, b) in zip(base_folds, mean_folds, folds_idx, strict=True)
        ]

    # The largest share of the mean that is no worse (on paired folds) than the best share.
    folds_at = {float(lam): cv(lam) for lam in SHRINK_GRID}
    scores = {lam: float(np.mean(v)) for lam, v in folds_at.items()}
    best = min(scores, key=lambda k: scores[k])
    lam = max(k for k in scores if no_worse(folds_at[k], folds_at[best]))
    base_w = np.array([spec["weights"][n] for n in names])
    equal = np.zeros(len(names))
    equal[cols] = slope / len(cols)
    params = {"base": base, "alpha": spec["alpha"], "cols": cols}
    for name, share in (("mean", 1.0), ("shrunk", lam)):
        if name not in wanted:
            continue
        folds = cv(share)
        variants[name] = {
            "weights": {n: float(w) for n, w in zip(names, (1 - share) * base_w + share * equal, strict=True)},
            "intercept": float((1 - share) * spec["intercept"] + share * intercept),
            "alpha": 0.0,
            "feature_names": names,
            "train_means": spec["train_means"],
            "mean_part": {"of": [names[i] for i in cols], "slope": share * slope, "fill": fill},
            "coefficient_ci": _bootstrap_coefficients(
                "shrunk",
                x_train,
                y[train],
                [data.groups[i] for i in train],
                names,
                n_boot,
                seed,
                params={**params, "share": share},
            ),
            "standard_errors": {},
            "test": regression_metrics((1 - share) * base_pred + share * mean_pred, y[test]),
            "cv_rmse_mean": float(np.mean(folds)),
            "cv_rmse_sd": float(np.std(folds, ddof=1)),
            "cv_rmse_folds": folds,
            "imputed_train": spec["imputed_train"],
            "imputed_test": spec["imputed_test"],
            **(
                {
                    "shrinkage": {
                        "toward": "the plain mean of the jurors (equal weights)",
                        "base": base,
                        "share": share,
                        "cv_rmse_by_share": scores,
                    }
                }
                if name == "shrunk"
                else {}
            ),
        }


def _varies(values: Array) -> bool:
    """More than one value, beyond rounding (a mean of equal scores can differ in its last bit)."""
    finite = np.asarray(values, dtype=float)
    finite = finite[~np.isnan(finite)]
    return len(finite) > 1 and float(np.ptp(finite)) > 1e-9 * (1 + float(np.max(np.abs(finite))))


def _rescaled(x: Array, y: Array, train: Index, test: Index) -> Array:
    """A juror's scores mapped onto the target by least squares on the training rows; a juror that
    gave one score throughout predicts the training mean (its slope is not identified)."""
    keep = ~np.isnan(x[train])
    if _varies(x[train][keep]):
        slope, intercept = np.polyfit(x[train][keep], y[train][keep], 1)
    else:
        slope, intercept = 0.0, float(np.mean(y[train][keep])) if keep.any() else float(np.mean(y[train]))
    filled = np.where(np.isnan(x), float(x[train][keep].mean()) if keep.any() else 0.0, x)
    return np.asarray(intercept + slope * filled[test], dtype=float)


def _baselines(
    data: CalibrationData, y: Array, train: Index, test: Index, folds_idx: list[tuple[Index, Index]]
) -> dict[str, Any]:
    candidates: dict[str, Array] = {name: data.scores[:, j] for j, name in enumerate(data.jurors)}
    if data.jury is not None:
        candidates[f"jury ({data.rule})"] = data.jury
    out = {}
    for name, x in candidates.items():
        pred = _rescaled(x, y, train, test)
        cv = [float(np.sqrt(np.mean((_rescaled(x, y, a, b) - y[b]) ** 2))) for a, b in folds_idx]
        out[name] = {"test": regression_metrics(pred, y[test]), "cv_rmse_mean": float(np.mean(cv))}
    return out


def _closed_form(
    method: str,
    x: Array,
    y: Array,
    alpha: float,
    *,
    cols: list[int] | None = None,
    params: dict[str, Any] | None = None,
) -> Array:
    """Weights then intercept, as the sklearn estimators fit them (centred, intercept unpenalised).
    ``mean``: slope / k on the k columns ``cols`` (the rescaled plain mean); ``shrunk``: the blend
    of ``params['base']`` and the mean by ``params['share']``."""
    if method == "shrunk" and params is not None:
        base = _closed_form(params["base"], x, y, params["alpha"])
        mean = _closed_form("mean", x, y, 0.0, cols=params["cols"])
        return np.asarray((1 - params["share"]) * base + params["share"] * mean, dtype=float)
    x_mean, y_mean = x.mean(axis=0), y.mean()
    xc, yc = x - x_mean, y - y_mean
    if method == "mean":
        chosen = cols if cols is not None else list(range(x.shape[1]))
        avg = xc[:, chosen].mean(axis=1)
        slope = float(avg @ yc / (avg @ avg)) if float(avg @ avg) > 0 else 0.0
        w = np.zeros(x.shape[1])
        w[chosen] = slope / len(chosen)
        return np.append(w, y_mean - x_mean @ w)
    if method == "nnls":
        from scipy.optimize import nnls

        w = nnls(xc, yc)[0]
    elif method in ("ridge", "cross"):
        w = np.linalg.solve(xc.T @ xc + alpha * np.eye(x.shape[1]), xc.T @ yc)
    else:
        w = np.linalg.lstsq(xc, yc, rcond=None)[0]
    return np.append(w, y_mean - x_mean @ w)


def _bootstrap_coefficients(
    method: str,
    x: Array,
    y: Array,
    groups: list[str],
    names: list[str],
    n_boot: int,
    seed: int,
    alpha: float = 0.0,
    params: dict[str, object] | None = None,
) -> dict[str, dict[str, float]]:
    """Percentile 95% CIs of the weights, resampling training prompts (groups) with replacement.

    Ridge variants keep the penalty chosen on the full training split.
    """
    if n_boot <= 0:
        return {}
    rng = np.random.default_rng(seed)
    unique = sorted(set(groups))
    position = {g: k for k, g in enumerate(unique)}
    code = np.array([position[g] for g in groups])
    by_group = np.argsort(code, kind="stable")  # each group's rows together, in their order
    sizes = np.bincount(code, minlength=len(unique))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    draws = []
    for _ in range(n_boot):
        chosen = rng.choice(len(unique), size=len(unique), replace=True)  # the same draws as over names
        lengths = sizes[chosen]
        # the chosen groups' rows one after another: each row's offset within its group, plus its start
        within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        rows = by_group[np.repeat(starts[chosen], lengths) + within]
        draws.append(_closed_form(method, x[rows], y[rows], alpha, params=params))
    arr = np.array(draws)
    low, high = np.percentile(arr, [2.5, 97.5], axis=0)
    return {
        n: {"low": float(lo), "high": float(hi)} for n, lo, hi in zip([*names, "intercept"], low, high, strict=True)
    }


def _ols_standard_errors(x: Array, y: Array, model: Any, names: list[str]) -> dict[str, float]:
    """Classical OLS standard errors: sigma^2 (X'X)^-1 with an intercept column."""
    design = np.hstack([np.ones((len(x), 1)), x])
    resid = y - model.predict(x)
    dof = len(y) - design.shape[1]
    sigma2 = float(resid @ resid) / dof
    cov = sigma2 * np.linalg.pinv(design.T @ design)
    se = np.sqrt(np.diag(cov))
    return {"intercept": float(se[0]), **{n: float(s) for n, s in zip(names, se[1:], strict=True)}}
