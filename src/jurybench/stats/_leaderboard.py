"""Bradley–Terry ratings from battles, by maximum likelihood, with cluster-bootstrap intervals.

A battle is one judged comparison: the model shown first, the model shown second, and the
outcome (1: first won, 0: second won, 0.5: tie). Both presentation orders of a pair are two
battles, so a judge's order effect cancels out of the ratings. The model is
P(first beats second) = 1 / (1 + exp(-(b_first - b_second))). It is fitted by Newton's
method on the log-likelihood, with no penalty and no intercept, and b = 0 for the anchor
model. A tie counts as half a win and half a loss. Ratings are put on the Elo scale:
1000 + 400 * b / ln(10).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]
Ints = NDArray[np.int_]

ELO_SCALE = 400 / np.log(10)
ELO_BASE = 1000.0


class NotIdentifiable(ValueError):
    """The battles do not pin the ratings down (a model won or lost every battle, or the models
    fall into groups that never met)."""


def _connected(first: Ints, second: Ints, n: int) -> bool:
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(first.tolist(), second.tolist(), strict=True):
        parent[find(a)] = find(b)
    return len({find(i) for i in range(n)}) == 1


def bradley_terry(
    first: ArrayLike,
    second: ArrayLike,
    outcome: ArrayLike,
    n_models: int,
    *,
    anchor: int = 0,
    weights: ArrayLike | None = None,
    names: list[str] | None = None,
) -> Array:
    """Log-strengths b (b[anchor] = 0) maximising the Bradley–Terry likelihood of the battles."""
    first, second = np.asarray(first, dtype=int), np.asarray(second, dtype=int)
    y = np.asarray(outcome, dtype=float)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    if not _connected(first, second, n_models):
        raise NotIdentifiable("the models fall into groups that never met in a battle")
    for m in range(n_models):  # a model that won (or lost) everything has an infinite rating
        score = float((w * np.where(first == m, y, 0.0) + w * np.where(second == m, 1 - y, 0.0)).sum())
        played = float((w * ((first == m) | (second == m))).sum())
        if score in (0.0, played):
            raise NotIdentifiable(
                f"model {m} {'won' if score else 'lost'} every battle it was in: its rating is infinite"
            )
    beta, _ = _newton(first, second, y, w, n_models, anchor, None)
    return beta


def _newton(
    first: Ints, second: Ints, y: Array, w: Array, n_models: int, anchor: int, style: Array | None
) -> tuple[Array, Array]:
    """Maximum likelihood by Newton's method: model indicators (+1 first, -1 second, the anchor
    left out) and, with ``style``, its columns as covariates of the first-shown minus the second."""
    free = [m for m in range(n_models) if m != anchor]
    index = {m: k for k, m in enumerate(free)}
    x = np.zeros((len(y), len(free)))
    for row, (a, b) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        if a in index:
            x[row, index[a]] += 1.0
        if b in index:
            x[row, index[b]] -= 1.0
    k = 0 if style is None else np.asarray(style).shape[1]
    if k:
        x = np.hstack([x, np.asarray(style, dtype=float)])
    beta = np.zeros(x.shape[1])
    for _ in range(200):
        p = 1 / (1 + np.exp(-(x @ beta)))
        gradient = x.T @ (w * (y - p))
        hessian = (x * (w * p * (1 - p))[:, None]).T @ x
        try:
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            raise NotIdentifiable("a group of models won or lost every battle against the others") from None
        beta = beta + step
        if np.max(np.abs(beta)) > 40:
            raise NotIdentifiable("a model won (or lost) every battle it was in: its rating is infinite")
        if np.max(np.abs(step)) < 1e-12:
            break
    else:
        raise NotIdentifiable("the fit did not converge")
    out = np.zeros(n_models)
    out[free] = beta[: len(free)]
    return out, beta[len(free) :]


def bradley_terry_styled(
    first: ArrayLike,
    second: ArrayLike,
    outcome: ArrayLike,
    style: ArrayLike,
    n_models: int,
    *,
    anchor: int = 0,
    weights: ArrayLike | None = None,
) -> tuple[Array, Array]:
    """Bradley–Terry with style covariates (Chatbot Arena's style control): P(first wins) =
    1 / (1 + exp(-(b_first - b_second + gamma . z))), where z holds, per battle, the style of the
    first-shown response minus the second's (e.g. normalised length differences). Returns the
    style-adjusted log-strengths b (b[anchor] = 0) and the coefficients gamma."""
    first, second = np.asarray(first, dtype=int), np.asarray(second, dtype=int)
    y = np.asarray(outcome, dtype=float)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    if not _connected(first, second, n_models):
        raise NotIdentifiable("the models fall into groups that never met in a battle")
    return _newton(first, second, y, w, n_models, anchor, np.asarray(style, dtype=float).reshape(len(y), -1))


class PairCounts:
    """The battles as the Bradley–Terry likelihood sees them: per unordered pair of models (i < j)
    the battles N_ij and i's wins W_ij (ties half), summed with the battles' weights. Per cluster
    the same sums are kept as sparse rows, so a bootstrap round (clusters drawn with
    replacement) is one sparse product, not a rebuilt design over every battle."""

    def __init__(
        self,
        first: ArrayLike,
        second: ArrayLike,
        outcome: ArrayLike,
        weights: ArrayLike,
        clusters: ArrayLike,
        n_models: int,
    ) -> None:
        from scipy import sparse

        first, second = np.asarray(first, dtype=int), np.asarray(second, dtype=int)
        y, w = np.asarray(outcome, dtype=float), np.asarray(weights, dtype=float)
        low, high = np.minimum(first, second), np.maximum(first, second)
        codes, pair = np.unique(low * n_models + high, return_inverse=True)
        self.i, self.j = codes // n_models, codes % n_models
        self.n_models = n_models
        wins_low = np.where(first == low, y, 1 - y)
        keys, cluster = np.unique(np.asarray(clusters), return_inverse=True)
        self.n_clusters = len(keys)
        shape = (len(keys), len(codes))
        self.by_cluster_n = sparse.csr_matrix((w, (cluster, pair)), shape=shape)
        self.by_cluster_w = sparse.csr_matrix((w * wins_low, (cluster, pair)), shape=shape)
        self.n = np.asarray(self.by_cluster_n.sum(axis=0)).ravel()
        self.w = np.asarray(self.by_cluster_w.sum(axis=0)).ravel()

    def drawn(self, counts: Array) -> tuple[Array, Array]:
        """N and W for a bootstrap round in which cluster c was drawn counts[c] times."""
        return self.by_cluster_n.T @ counts, self.by_cluster_w.T @ counts


def fit_counts(counts: PairCounts, n: ArrayLike, w: ArrayLike, anchor: int, start: ArrayLike | None = None) -> Array:
    """Log-strengths b (b[anchor] = 0) maximising sum W_ij log s(b_i - b_j) + (N_ij - W_ij) log
    s(b_j - b_i), by Newton's method from ``start`` (a bootstrap round starts from the estimate
    of all the data: a few steps). NotIdentifiable where the likelihood has no finite maximum."""
    n, w = np.asarray(n, dtype=float), np.asarray(w, dtype=float)
    m = counts.n_models
    played = np.bincount(counts.i, n, m) + np.bincount(counts.j, n, m)
    won = np.bincount(counts.i, w, m) + np.bincount(counts.j, n - w, m)
    for model in range(m):
        if played[model] <= 0:
            raise NotIdentifiable(f"model {model} has no battle")
        if won[model] <= 0 or won[model] >= played[model]:
            raise NotIdentifiable(
                f"model {model} {'won' if won[model] > 0 else 'lost'} every battle it was in: its rating is infinite"
            )
    met = n > 0
    if not _connected(counts.i[met], counts.j[met], m):
        raise NotIdentifiable("the models fall into groups that never met in a battle")
    free = np.array([k for k in range(m) if k != anchor])
    b = np.zeros(m) if start is None else np.array(start, dtype=float)
    for _ in range(200):
        p = 1 / (1 + np.exp(-(b[counts.i] - b[counts.j])))
        g = w - n * p  # d loglik / d (b_i - b_j)
        gradient = np.bincount(counts.i, g, m) - np.bincount(counts.j, g, m)
        h = n * p * (1 - p)
        hessian = np.zeros((m, m))
        np.add.at(hessian, (counts.i, counts.j), -h)
        np.add.at(hessian, (counts.j, counts.i), -h)
        hessian[np.arange(m), np.arange(m)] = np.bincount(counts.i, h, m) + np.bincount(counts.j, h, m)
        try:
            step = np.linalg.solve(hessian[np.ix_(free, free)], gradient[free])
        except np.linalg.LinAlgError:
            raise NotIdentifiable("a group of models won or lost every battle against the others") from None
        b[free] += step
        if np.max(np.abs(b)) > 40:
            raise NotIdentifiable("a model won (or lost) every battle it was in: its rating is infinite")
        if np.max(np.abs(step)) < 1e-10:
            return b
    raise NotIdentifiable("the fit did not converge")


def elo(beta: Array) -> Array:
    return np.asarray(ELO_BASE + ELO_SCALE * np.asarray(beta))


def win_rate(beta: Array, baseline: int) -> Array:
    """Each model's predicted probability of beating the baseline model."""
    return np.asarray(1 / (1 + np.exp(-(beta - beta[baseline]))))


def leaderboard(
    first: ArrayLike,
    second: ArrayLike,
    outcome: ArrayLike,
    clusters: ArrayLike,
    names: list[str],
    *,
    anchor: int = 0,
    baseline: int = 0,
    n_boot: int = 1000,
    seed: int = 0,
    style: ArrayLike | None = None,
    style_names: list[str] | None = None,
) -> dict[str, object]:
    """Ratings, win rates against the baseline and ranks, with percentile intervals from a
    bootstrap that resamples clusters (prompts) with all their battles, not single battles."""
    first, second = np.asarray(first, dtype=int), np.asarray(second, dtype=int)
    y, clusters = np.asarray(outcome, dtype=float), np.asarray(clusters)
    n = len(names)
    weights = np.ones(len(y))
    counts = PairCounts(first, second, y, weights, clusters, n)
    if not _connected(first, second, n):
        raise NotIdentifiable("the models fall into groups that never met in a battle")
    beta = fit_counts(counts, counts.n, counts.w, anchor)
    ratings, rates = elo(beta), win_rate(beta, baseline)
    order = np.argsort(-beta, kind="stable")
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(1, n + 1)
    z = None if style is None else np.asarray(style, dtype=float).reshape(len(y), -1)
    styled = None if z is None else bradley_terry_styled(first, second, y, z, n, anchor=anchor)
    keys, cluster_of = np.unique(clusters, return_inverse=True)
    groups = None if z is None else {k: np.flatnonzero(cluster_of == k) for k in range(len(keys))}
    rng = np.random.default_rng(seed)
    boot_r, boot_w, boot_rank, failed = [], [], [], 0
    boot_s: list[Array] = []
    for _ in range(n_boot):
        chosen = rng.integers(0, len(keys), len(keys))
        try:
            # the same draw of clusters as a resampling of battles would make, in the counts form
            b = fit_counts(
                counts, *counts.drawn(np.bincount(chosen, minlength=len(keys)).astype(float)), anchor, start=beta
            )
            if z is not None:
                assert groups is not None
                rows = np.concatenate([groups[k] for k in chosen])
                bs, gs = bradley_terry_styled(first[rows], second[rows], y[rows], z[rows], n, anchor=anchor)
                boot_s.append(np.concatenate([elo(bs), gs]))
        except NotIdentifiable:
            failed += 1
            continue
        boot_r.append(elo(b))
        boot_w.append(win_rate(b, baseline))
        r = np.empty(n, dtype=int)
        r[np.argsort(-b, kind="stable")] = np.arange(1, n + 1)
        boot_rank.append(r)

    def interval(samples: list[Array] | list[Ints], m: int, whole: bool = False) -> tuple[float | None, float | None]:
        if not samples:
            return None, None
        values = np.array([s[m] for s in samples])
        if whole:  # ranks: observed values, not interpolations between them
            return float(np.percentile(values, 2.5, method="nearest")), float(
                np.percentile(values, 97.5, method="nearest")
            )
        return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))

    models = []
    for m in order.tolist():
        played = (first == m) | (second == m)
        won = ((first == m) & (y == 1)) | ((second == m) & (y == 0))
        lost = ((first == m) & (y == 0)) | ((second == m) & (y == 1))
        r_low, r_high = interval(boot_r, m)
        w_low, w_high = interval(boot_w, m)
        k_low, k_high = interval(boot_rank, m, whole=True)
        models.append(
            {
                "model": names[m],
                "rating": float(ratings[m]),
                "ci_low": r_low,
                "ci_high": r_high,
                "win_rate_vs_baseline": float(rates[m]),
                "win_rate_low": w_low,
                "win_rate_high": w_high,
                "rank": int(rank[m]),
                "rank_low": None if k_low is None else int(k_low),
                "rank_high": None if k_high is None else int(k_high),
                "battles": int(played.sum()),
                "wins": int(won.sum()),
                "losses": int(lost.sum()),
                "ties": int((played & (y == 0.5)).sum()),
                # the probability of winning summed over battles (= wins + ties / 2 for discrete outcomes)
                "expected_wins": float(np.where(first == m, y, 0.0).sum() + np.where(second == m, 1 - y, 0.0).sum()),
            }
        )
    out: dict[str, object] = {
        "anchor": names[anchor],
        "baseline": names[baseline],
        "n_battles": len(y),
        "n_clusters": len(keys),
        "n_boot": n_boot,
        "failed_replicates": failed,
        "models": models,
    }
    if styled is not None:
        b_styled, gamma = styled
        r_styled = elo(b_styled)
        # the win rate against the baseline that the style-adjusted fit predicts at equal style
        rates_styled = win_rate(b_styled, baseline)
        boot_sw = [win_rate((np.asarray(sample[:n]) - ELO_BASE) / ELO_SCALE, baseline) for sample in boot_s]
        for row in models:
            m = names.index(row["model"])
            low, high = interval(boot_s, m)
            w_low, w_high = interval(boot_sw, m)
            row.update(
                rating_styled=float(r_styled[m]),
                styled_low=low,
                styled_high=high,
                win_rate_styled=float(rates_styled[m]),
                win_rate_styled_low=w_low,
                win_rate_styled_high=w_high,
            )
        labels = style_names or [f"style{k}" for k in range(len(gamma))]
        out["style_coefficients"] = {
            label: {"coefficient": float(g), **dict(zip(("ci_low", "ci_high"), interval(boot_s, n + k), strict=True))}
            for k, (label, g) in enumerate(zip(labels, gamma, strict=True))
        }
    return out
