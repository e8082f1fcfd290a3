"""Cost-aware jury selection: which of a pilot run's jurors a study needs.

Every sub-jury of the pilot's jurors (every non-empty subset up to ``EXHAUSTIVE`` jurors; beyond
that the singletons and a greedy forward path: each step adds the juror that lowers the error
most) is scored three ways:

- **held-out error** against the target: the human labels (the mean label per subject and
  criterion) or, with none (``target="jury"``), the full jury's own score. Rows are subject x
  criterion (pointwise) or pair x category (pairwise and preference: the symmetrized score ε).
  A sub-jury predicts a row by ``method``: ``mean``, the mean of its jurors present, linearly
  rescaled on the training rows per criterion (calibration's ``mean`` variant), or
  ``calibrated``, least-squares weights and an intercept per criterion (calibration's ``ols``).
  The error is the RMSE on held-out rows of a grouped k-fold cross-validation (groups: the
  subjects' prompt, as ``calibrate`` groups them), the same folds for every sub-jury;
- **cost per subject**: what its jurors' stored calls on the pilot's subjects cost (all samples
  and orders), divided by the subjects; unknown if a juror's calls have no price;
- **latency per subject**: its slowest juror's mean latency per call (a jury's jurors answer
  concurrently).

The report gives the Pareto front (no other sub-jury is both cheaper and more accurate), the
full jury, and the chosen sub-jury. By default it is the cheapest sub-jury **shown
non-inferior** to the full jury: its held-out mean squared error exceeds the full jury's by
less than ``margin`` (squared-error units; default ``DEFAULT_MARGIN_SHARE`` of the full jury's),
by a one-sided test of the paired per-row squared errors (every row's out-of-fold prediction by
both juries; clustered by the fold groups, t with groups - 1 degrees of freedom). Two routes
may show a sub-jury, ``alpha`` split between them:

- the **price path** (alpha / 2, fixed-sequence testing): from the full jury, each step drops
  the dearest juror left (ties: the slower, then the later name), an order fixed by the prices
  alone before any error is seen; the steps are tested in turn and the path stops at the first
  not shown. Testing in an order fixed in advance and stopping at the first failure needs no
  division of its alpha;
- **Holm** over every candidate sub-jury (alpha / 2): finds a good cheap juror the price path
  cannot reach (one dearer than a bad one).

A juror with no valid score on any of the pilot's rows (every answer invalid or refused: a
real judge that never wrote the rubric's format) is in no candidate but the full jury: alone it
predicts nothing and beside others it only adds cost. The price path then goes from the full
jury to the jurors that answered, and on from there; the report names the juror.

So the chance that any sub-jury worse than the full one by the margin or more is shown, and
so the chance that the chosen one is, is at most ``alpha``. When none is shown, the full jury
is chosen and the rule says so. With ``max_error`` the cheapest whose error is at most that;
with ``budget`` (USD for ``subjects`` subjects) the most accurate that fits.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from jurybench.calibration._fit import _folds
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from duckdb import DuckDBPyConnection as Connection

    from jurybench.calibration._data import Index
    from jurybench.jury import RunJuror

EXHAUSTIVE = 10
# The default margin: a fifth of the full jury's held-out mean squared error (an RMSE about a
# tenth above the full jury's).
DEFAULT_MARGIN_SHARE = 0.2
SELECT_ALPHA = 0.05
METHODS = ("mean", "calibrated")
TARGETS = ("auto", "human", "jury")
Array = NDArray[np.float64]


@dataclass
class SubJury:
    """One candidate: its jurors (labels and keys), its error per fold and their mean, its cost
    and latency per subject (None: unknown), and how it compares."""

    jurors: tuple[str, ...]
    keys: tuple[str, ...]
    error: float
    error_folds: list[float]
    cost_per_subject: float | None
    latency_ms: float | None
    pareto: bool = False
    no_worse_than_full: bool = False  # shown non-inferior within the margin, on the price path
    path_step: int | None = None  # its step on the price path (0: the full jury), None off it
    shown_by: str | None = None  # which route showed it non-inferior: "price path" or "Holm"
    mse_minus_full: float = 0.0  # held-out mean squared error less the full jury's, on the same rows
    upper: float = 0.0  # its adjusted upper bound: shown non-inferior exactly when it is below the margin
    p_inferior: float = 1.0  # p-value of "worse by the margin or more"
    sq_errors: Array | None = field(default=None, repr=False)


@dataclass
class Selection:
    run: str
    kind: str
    target: str
    method: str
    n_subjects: int
    n_rows: int
    folds: int
    exhaustive: bool
    full: SubJury
    chosen: SubJury
    rule: str
    margin: float = 0.0
    alpha: float = SELECT_ALPHA
    candidates: list[SubJury] = field(default_factory=list)
    jurors: list[dict[str, Any]] = field(default_factory=list)
    without_valid_answers: list[str] = field(default_factory=list)  # in no sub-jury but the full one

    @property
    def pareto(self) -> list[SubJury]:
        return sorted((c for c in self.candidates if c.pareto), key=lambda c: (_cost(c), c.error))

    def saving(self) -> float | None:
        """The chosen sub-jury's cost per subject as a share of the full jury's (None: unknown)."""
        if self.chosen.cost_per_subject is None or not self.full.cost_per_subject:
            return None
        return self.chosen.cost_per_subject / self.full.cost_per_subject

    def as_dict(self) -> dict[str, object]:
        def plain(c: SubJury) -> dict[str, object]:
            return {k: v for k, v in asdict(c).items() if k != "sq_errors"}

        out = {k: v for k, v in asdict(self).items() if k not in ("candidates", "full", "chosen")}
        out["full"], out["chosen"] = plain(self.full), plain(self.chosen)
        out["pareto"] = [plain(c) for c in self.pareto]
        out["candidates"] = [plain(c) for c in self.candidates]
        out["cost_share_of_full"] = self.saving()
        return out


@dataclass
class PilotRows:
    kind: str
    rows: list[tuple[str, str]]  # (subject, dimension)
    groups: list[str]
    x: Array  # rows x jurors, NaN where a juror has no valid score
    y: Array
    dims: list[str]


def _cost(c: SubJury) -> float:
    return float("inf") if c.cost_per_subject is None else c.cost_per_subject


def _read(con: Connection, run: str, target: str, group_by: str) -> tuple[PilotRows, list[RunJuror], str]:
    """The run's rows with a target, each juror's value on them, and the groups of the folds."""
    from jurybench.annotations import run_rubric
    from jurybench.calibration._data import group_of, item_attributes
    from jurybench.jury import jurors_of_run

    rubric = run_rubric(con, run)
    if not rubric.answers_in_json:
        raise JurybenchError(
            f"run '{run}' used a {rubric.kind} rubric; jury selection needs scores.",
            hint="Use a pointwise, pairwise or preference run.",
        )
    panel = jurors_of_run(con, run)
    if len(panel) < 2:
        raise JurybenchError(
            f"run '{run}' has {len(panel)} juror: there is nothing to select.",
            hint="Run the pilot with every candidate juror.",
        )
    subject, dim = rubric.subject_column, rubric.dimension_column
    value = "juror_epsilon" if rubric.pairwise else "juror_score"
    juror_rows = con.execute(
        f"SELECT {subject}, {dim}, juror_key, {value} FROM {rubric.juror_view} WHERE run_id = ?", [run]
    ).fetchall()
    humans = con.execute(
        "SELECT subject_id, criterion, avg(value) FROM human_labels WHERE subject_kind = ? AND value IS NOT NULL "
        "AND subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?) GROUP BY ALL",
        [rubric.subject_kind, run],
    ).fetchall()
    if target == "auto":
        target = "human" if humans else "jury"
    if target == "human":
        if not humans:
            raise JurybenchError(
                f"run '{run}' has no human labels to select a jury against.",
                hint="Import them (jurybench annotations import), or pass --target jury.",
            )
        truth = {(s, d): float(v) for s, d, v in humans}
    else:
        truth = {
            (s, d): float(v)
            for s, d, v in con.execute(
                f"SELECT {subject}, {dim}, jury_score FROM {rubric.jury_view} WHERE run_id = ? AND jury_score IS NOT NULL",
                [run],
            ).fetchall()
        }
    index = {seat.key: j for j, seat in enumerate(panel)}
    rows = sorted(k for k in truth if k[1] in rubric.dimensions)
    where = {k: i for i, k in enumerate(rows)}
    x = np.full((len(rows), len(panel)), np.nan)
    for s, d, key, v in juror_rows:
        i = where.get((s, d))
        if i is not None and v is not None and key in index:
            x[i, index[key]] = v
    keep = ~np.all(np.isnan(x), axis=1)
    rows = [r for r, k in zip(rows, keep, strict=True) if k]
    x = x[keep]
    if len(rows) < 4:
        raise JurybenchError(
            f"run '{run}' has {len(rows)} judged rows with a {target} target; selection needs more.",
            hint="Judge more subjects (or label more of them) in the pilot.",
        )
    y = np.array([truth[r] for r in rows])
    subjects = sorted({s for s, _ in rows})
    if rubric.pairwise:  # a pair's group is its first item's
        firsts = dict(
            con.execute(
                "SELECT pair_id, item_a FROM pairs WHERE pair_id IN "
                "(SELECT subject_id FROM run_subjects WHERE run_id = ?)",
                [run],
            ).fetchall()
        )
        attrs = item_attributes(con, sorted(set(firsts.values())))
        group = {p: group_of(attrs.get(firsts[p], {"metadata": {}}), group_by, firsts[p]) for p in subjects}
    else:
        attrs = item_attributes(con, subjects)
        group = {s: group_of(attrs.get(s, {"metadata": {}}), group_by, s) for s in subjects}
    data = PilotRows(rubric.kind, rows, [group[s] for s, _ in rows], x, y, rubric.dimensions)
    return data, panel, target


def _prices(
    con: Connection, run: str, panel: list[RunJuror]
) -> tuple[dict[str, float | None], dict[str, float | None], dict[str, int], int]:
    """Per juror: cost per subject (None: a call without a price), mean latency per call, and
    samples; and the run's subject count. Calls are the run's jurors' on its subjects, whichever
    run made them (a cached call cost what it cost once)."""
    n_subjects = int(con.execute("SELECT count(*) FROM run_subjects WHERE run_id = ?", [run]).fetchall()[0][0])
    rows = con.execute(
        "SELECT c.juror_key, sum(c.cost_usd), count(*) FILTER (WHERE c.cost_usd IS NULL AND c.status <> 'error'), "
        "avg(c.latency_ms), count(DISTINCT c.sample_index) FROM calls c "
        "JOIN runs r ON r.run_id = ? AND c.rubric_hash = r.rubric_hash "
        "JOIN run_subjects s ON s.run_id = r.run_id AND s.subject_id = c.subject_id "
        "JOIN run_jurors rj ON rj.run_id = r.run_id AND rj.juror_key = c.juror_key GROUP BY c.juror_key",
        [run],
    ).fetchall()
    found = {key: (total, unpriced, latency, samples) for key, total, unpriced, latency, samples in rows}
    cost: dict[str, float | None] = {}
    latency: dict[str, float | None] = {}
    samples: dict[str, int] = {}
    for seat in panel:
        total, unpriced, mean_latency, n = found.get(seat.key, (None, 1, None, 1))
        # Rounded to 12 digits: a sum of many prices carries float noise ($0.0005000000000000003).
        cost[seat.key] = None if unpriced or total is None or not n_subjects else round(float(total) / n_subjects, 12)
        latency[seat.key] = None if mean_latency is None else float(mean_latency)
        samples[seat.key] = int(n or 1)
    return cost, latency, samples, n_subjects


def _predict(method: str, x: Array, y: Array, dims: NDArray[np.float64], train: Index, test: Index) -> Array:
    """The sub-jury's prediction of the test rows, fitted on the training rows per dimension."""
    out = np.full(len(test), np.nan)
    for d in np.unique(dims[test]):
        tr, te = train[dims[train] == d], test[dims[test] == d]
        where = np.flatnonzero(dims[test] == d)
        means = np.nanmean(x[tr], axis=0) if len(tr) else np.full(x.shape[1], np.nan)
        means = np.where(np.isnan(means), np.nanmean(y[tr]) if len(tr) else 0.0, means)
        if method == "mean":
            with np.errstate(all="ignore"):
                feature = np.nanmean(x, axis=1, keepdims=True)
            seen = feature[tr][~np.isnan(feature[tr])]
            # no juror of the sub-jury scored a training row (a juror with no valid answer): a
            # constant feature, so the prediction is the training mean, as for any constant
            fill = float(np.mean(seen)) if len(seen) else 0.0
            feature = np.where(np.isnan(feature), fill, feature)
        else:
            feature = np.where(np.isnan(x), means, x)
        if len(tr) < feature.shape[1] + 1 or np.ptp(feature[tr], axis=0).max(initial=0.0) == 0.0:
            out[where] = float(np.mean(y[tr])) if len(tr) else float(np.mean(y))
            continue
        design = np.hstack([feature[tr], np.ones((len(tr), 1))])
        coef, *_ = np.linalg.lstsq(design, y[tr], rcond=None)
        out[where] = np.hstack([feature[te], np.ones((len(te), 1))]) @ coef
    return out


def held_out_errors(
    data: PilotRows, columns: list[int], method: str, folds: list[tuple[Index, Index]]
) -> tuple[list[float], Array]:
    """The sub-jury's RMSE on each fold's held-out rows, and every row's squared error from its
    out-of-fold prediction."""
    import warnings

    dims = np.array([d for _, d in data.rows])
    x = data.x[:, columns]
    squared = np.full(len(data.y), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a juror with no score in a fold: its mean is imputed
        for a, b in folds:
            squared[b] = (_predict(method, x, data.y, dims, a, b) - data.y[b]) ** 2
    return [float(np.sqrt(np.mean(squared[b]))) for _, b in folds], squared


def non_inferiority(
    candidate: Array, full: Array, groups: Sequence[str], margin: float, alpha: float = SELECT_ALPHA
) -> tuple[float, float, float]:
    """(MSE difference, its one-sided upper bound, p-value) for H0: MSE_candidate - MSE_full >=
    margin, from the paired per-row squared errors: their mean difference, its standard error
    from the groups' totals (rows of a group are not independent), and a t reference with
    groups - 1 degrees of freedom. A difference of mean squared errors is the same against noisy
    human labels as against the truth they measure (independent label noise adds the same
    variance to both), so the margin means the same thing either way."""
    diff, se, df = paired_difference(candidate, full, groups)
    return diff, upper_bound(diff, se, df, alpha), p_inferior(diff, se, df, margin)


def p_inferior(diff: float, se: float, df: int, margin: float) -> float:
    """The one-sided p-value of H0: difference >= margin (t with ``df``; 0 or 1 when se is 0)."""
    from scipy.stats import t

    if se == 0.0:
        return 0.0 if diff < margin else 1.0
    return float(t.cdf((diff - margin) / se, df))


def paired_difference(candidate: Array, full: Array, groups: Sequence[str]) -> tuple[float, float, int]:
    """(mean difference of the paired squared errors, its standard error from the groups'
    totals, the degrees of freedom: groups - 1)."""
    _, member = np.unique(np.asarray(groups, dtype=str), return_inverse=True)
    k = int(member.max()) + 1
    d = np.asarray(candidate, dtype=float) - np.asarray(full, dtype=float)
    diff = float(np.mean(d))
    totals = np.bincount(member, weights=d - diff, minlength=k)
    se = float(np.sqrt(k / max(k - 1, 1) * np.sum(totals**2))) / len(d)
    return diff, se, max(k - 1, 1)


def upper_bound(diff: float, se: float, df: int, level: float) -> float:
    """The one-sided (1 - level) upper bound of the difference: below the margin exactly when
    the test at that level shows non-inferiority (p <= level)."""
    from scipy.stats import t

    return diff if se == 0.0 else diff + float(t.ppf(1 - level, df)) * se


def mark_non_inferior(others: list[SubJury], full: SubJury, groups: Sequence[str], margin: float, alpha: float) -> None:
    """Test every candidate against the full jury and mark the ones shown non-inferior.

    Each candidate's printed bound is its *adjusted* upper bound, the one its mark is decided by:
    shown exactly when the bound is at most the margin. Each route's bound is the largest of the
    one-sided bounds it had to pass to reach the candidate, each at the level it was tested at:

    - the price path (fixed sequence, alpha / 2 for every step): the largest bound at alpha / 2
      of the steps up to this one (the path stops at the first step above the margin);
    - Holm at alpha / 2 over the m candidates, by increasing p-value: the i-th (from 0) tested at
      (alpha / 2) / (m - i); its adjusted bound is the largest of the bounds up to it (Holm stops
      at the first above the margin).

    The candidate's bound is the smaller of the two routes' (either route may show it)."""
    assert full.sq_errors is not None
    half = alpha / 2  # two routes, alpha split between them: either may show a sub-jury
    stats = {}
    for c in others:  # each candidate's paired difference, once; its bound is set below
        assert c.sq_errors is not None
        diff, se, df = stats[id(c)] = paired_difference(c.sq_errors, full.sq_errors, groups)
        c.mse_minus_full, c.p_inferior = diff, p_inferior(diff, se, df, margin)
        c.no_worse_than_full, c.shown_by = False, None

    def bound(c: SubJury, level: float) -> float:
        return upper_bound(*stats[id(c)], level)

    on_path: dict[int, float] = {}
    reached = -np.inf
    for c in sorted((c for c in others if c.path_step is not None), key=lambda c: c.path_step or 0):
        reached = max(reached, bound(c, half))
        on_path[id(c)] = reached
    by_holm: dict[int, float] = {}
    reached = -np.inf
    for rank, c in enumerate(sorted(others, key=lambda c: c.p_inferior)):
        reached = max(reached, bound(c, half / (len(others) - rank)))
        by_holm[id(c)] = reached
    for c in others:
        path_bound, holm_bound = on_path.get(id(c), np.inf), by_holm[id(c)]
        c.upper = float(min(path_bound, holm_bound))
        if c.upper <= margin:
            c.no_worse_than_full = True
            c.shown_by = "price path" if path_bound <= margin else "Holm"


def pareto_front(candidates: list[SubJury]) -> None:
    """Mark the candidates no other beats on both cost and error (an unknown cost counts as the
    highest)."""
    for c in candidates:
        c.pareto = not any(
            (_cost(o) <= _cost(c) and o.error <= c.error) and (_cost(o) < _cost(c) or o.error < c.error)
            for o in candidates
        )


def choose_sub_jury(
    candidates: list[SubJury],
    full: SubJury,
    *,
    max_error: float | None,
    budget: float | None,
    subjects: int,
    groups: Sequence[str] = (),
    margin: float | None = None,
    alpha: float = SELECT_ALPHA,
) -> tuple[SubJury, str, float]:
    """The chosen sub-jury, the rule that chose it and the margin used (see the module's text)."""
    assert full.sq_errors is not None
    margin = DEFAULT_MARGIN_SHARE * float(np.mean(full.sq_errors)) if margin is None else margin
    others = [c for c in candidates if c is not full]
    mark_non_inferior(others, full, groups, margin, alpha)
    path = [c for c in others if c.path_step is not None]
    shown_on_path = sum(c.shown_by == "price path" for c in path)
    full.no_worse_than_full, full.p_inferior = True, 0.0
    by_cost = sorted(candidates, key=lambda c: (_cost(c), c.error, len(c.jurors)))
    if max_error is not None:
        fit = [c for c in by_cost if c.error <= max_error]
        if not fit:
            best = min(candidates, key=lambda c: c.error)
            raise JurybenchError(
                f"no sub-jury has a held-out error of at most {max_error:g}; the lowest is "
                f"{best.error:.4g} ({', '.join(best.jurors)}).",
                hint="Raise --max-error.",
            )
        return fit[0], f"the cheapest with held-out error <= {max_error:g}", margin
    if budget is not None:
        fit = [
            c
            for c in candidates
            if c.cost_per_subject is not None and c.cost_per_subject * subjects <= budget * (1 + 1e-9)
        ]
        if not fit:
            cheapest = by_cost[0]
            need = "unknown" if cheapest.cost_per_subject is None else f"${cheapest.cost_per_subject * subjects:.4g}"
            raise JurybenchError(
                f"no sub-jury fits ${budget:g} for {subjects} subjects; the cheapest needs {need}.",
                hint="Raise --budget, or lower --subjects.",
            )
        best = min(fit, key=lambda c: (c.error, _cost(c), len(c.jurors)))
        return best, f"the most accurate costing at most ${budget:g} for {subjects} subjects", margin
    chosen = next(c for c in by_cost if c.no_worse_than_full)
    if chosen is full:
        return (
            full,
            f"no sub-jury is shown within {margin:.4g} of the full jury's mean squared error (one-sided, "
            f"{alpha:.0%} split between the price path and Holm over {len(others)} sub-juries): the full jury",
            margin,
        )
    return (
        chosen,
        f"the cheapest shown non-inferior: held-out mean squared error within {margin:.4g} of the full jury's "
        f"(paired per-row errors, one-sided; shown by {chosen.shown_by}: {alpha:.0%} split between the price "
        f"path, {shown_on_path} of {len(path)} steps shown, and Holm over {len(others)} sub-juries)",
        margin,
    )


def _subsets(n: int, score: Callable[[tuple[int, ...]], float]) -> tuple[list[tuple[int, ...]], bool]:
    """Every non-empty subset (n <= EXHAUSTIVE), else the singletons, the full jury and a greedy
    forward path by ``score`` (the error of a subset)."""
    if n <= EXHAUSTIVE:
        return [c for k in range(1, n + 1) for c in itertools.combinations(range(n), k)], True
    chosen: list[int] = []
    path: list[tuple[int, ...]] = [(j,) for j in range(n)]
    while len(chosen) < n:
        best = min((j for j in range(n) if j not in chosen), key=lambda j: score(tuple(sorted([*chosen, j]))))
        chosen.append(best)
        path.append(tuple(sorted(chosen)))
    return list(dict.fromkeys(path)), False


def select_jury(
    con: Connection,
    run: str,
    *,
    target: str = "auto",
    method: str = "mean",
    max_error: float | None = None,
    budget: float | None = None,
    subjects: int | None = None,
    folds: int = 5,
    seed: int = 0,
    group_by: str = "prompt",
    margin: float | None = None,
    alpha: float = SELECT_ALPHA,
) -> Selection:
    """Score every sub-jury of a pilot run's jurors and choose one (see the module's text)."""
    if target not in TARGETS:
        raise JurybenchError(f"--target {target!r} is not valid.", hint=f"Valid: {', '.join(TARGETS)}.")
    if method not in METHODS:
        raise JurybenchError(f"--method {method!r} is not valid.", hint=f"Valid: {', '.join(METHODS)}.")
    if max_error is not None and budget is not None:
        raise JurybenchError("give --max-error or --budget, not both.")
    if folds < 2:
        raise JurybenchError("--folds must be at least 2.")
    for name, value in (("--max-error", max_error), ("--budget", budget)):
        if value is not None and (not np.isfinite(value) or value < 0):
            raise JurybenchError(f"{name} must be a finite number >= 0 (got {value}).")
    if subjects is not None and subjects < 1:
        raise JurybenchError("--subjects must be at least 1.")
    if margin is not None and (not np.isfinite(margin) or margin < 0):
        raise JurybenchError(f"--margin must be a finite number >= 0 (got {margin}).")
    if not 0 < alpha < 1:
        raise JurybenchError(f"--alpha must be between 0 and 1 (got {alpha}).")
    data, panel, target = _read(con, run, target, group_by)
    cost, latency, samples, n_subjects = _prices(con, run, panel)
    labels = [(j.label, j.key) for j in panel]
    candidates, exhaustive = score_candidates(data, labels, cost, latency, method=method, folds=folds, seed=seed)
    full = next(c for c in candidates if len(c.jurors) == len(panel))
    pareto_front(candidates)
    chosen, rule, used = choose_sub_jury(
        candidates,
        full,
        max_error=max_error,
        budget=budget,
        subjects=subjects or n_subjects,
        groups=data.groups,
        margin=margin,
        alpha=alpha,
    )
    jurors = _juror_rows(con, panel, cost, latency, samples)
    answering = set(answering_columns(data))
    return Selection(
        run,
        data.kind,
        target,
        method,
        n_subjects,
        len(data.rows),
        folds,
        exhaustive,
        full,
        chosen,
        rule,
        used,
        alpha,
        candidates,
        jurors,
        [label for j, (label, _) in enumerate(labels) if j not in answering],
    )


def score_candidates(
    data: PilotRows,
    jurors: list[tuple[str, str]],
    cost: dict[str, float | None],
    latency: dict[str, float | None],
    *,
    method: str,
    folds: int,
    seed: int,
) -> tuple[list[SubJury], bool]:
    """Every candidate sub-jury of ``jurors`` (label, key) with its held-out errors (the same
    grouped folds for all), cost and latency per subject; whether every subset was scored."""
    fold_index = _folds(data.groups, folds, seed)
    memo: dict[tuple[int, ...], tuple[list[float], Array]] = {}

    def errors(columns: tuple[int, ...]) -> tuple[list[float], Array]:
        if columns not in memo:
            memo[columns] = held_out_errors(data, list(columns), method, fold_index)
        return memo[columns]

    # A juror with no valid score on any row (every answer invalid or refused) is in no sub-jury:
    # alone it would predict nothing, beside others it adds cost and no information.
    eligible = answering_columns(data)
    if not eligible:
        raise JurybenchError(
            "no juror of the pilot has a valid score on a row with a target: there is nothing to select."
        )

    def of(subset: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(eligible[i] for i in subset)

    found, exhaustive = _subsets(len(eligible), lambda c: float(np.mean(errors(of(c))[0])))
    subsets = [of(c) for c in found]
    full_columns = tuple(range(len(jurors)))
    if full_columns not in subsets:
        subsets.append(full_columns)
    path = [of(c) for c in price_path([jurors[j] for j in eligible], cost, latency)]
    if path[0] != full_columns:  # the full jury first, then the jurors that answered
        path.insert(0, full_columns)
    subsets += [columns for columns in path if columns not in subsets]
    candidates = []
    for columns in subsets:
        keys = tuple(jurors[j][1] for j in columns)
        prices = [cost[k] for k in keys]
        waits = [latency[k] for k in keys]
        folds_err, squared = errors(columns)
        candidates.append(
            SubJury(
                tuple(jurors[j][0] for j in columns),
                keys,
                float(np.mean(folds_err)),
                folds_err,
                None if any(p is None for p in prices) else round(float(sum(p for p in prices if p is not None)), 12),
                None if any(w is None for w in waits) else float(max(w for w in waits if w is not None)),
                sq_errors=squared,
                path_step=path.index(columns) if columns in path else None,
            )
        )
    return candidates, exhaustive


def answering_columns(data: PilotRows) -> list[int]:
    """The columns (jurors) of the pilot with a valid score on at least one row."""
    return [j for j in range(data.x.shape[1]) if not np.isnan(data.x[:, j]).all()]


def price_path(
    jurors: list[tuple[str, str]], cost: dict[str, float | None], latency: dict[str, float | None]
) -> list[tuple[int, ...]]:
    """The full jury, then each step dropping the dearest juror left (an unknown price counts as
    the highest; ties: the slower, then the later name) down to one juror: an order fixed by
    prices and latencies alone, before any error is seen."""

    def dearness(j: int) -> tuple[float, float, str]:
        key = jurors[j][1]
        price, wait = cost.get(key), latency.get(key)
        return (np.inf if price is None else price, -1.0 if wait is None else wait, jurors[j][0])

    current = list(range(len(jurors)))
    path = [tuple(current)]
    while len(current) > 1:
        current.remove(max(current, key=dearness))
        path.append(tuple(current))
    return path


def _juror_rows(
    con: Connection,
    panel: list[RunJuror],
    cost: dict[str, float | None],
    latency: dict[str, float | None],
    samples: dict[str, int],
) -> list[dict[str, object]]:
    params = dict(
        con.execute(
            "SELECT juror_key, params FROM jurors WHERE juror_key IN (SELECT juror_key FROM run_jurors)"
        ).fetchall()
    )
    return [
        {
            "label": s.label,
            "key": s.key,
            "name": s.name,
            "model": s.model,
            "weight": s.weight,
            "params": json.loads(params.get(s.key) or "{}"),
            "samples": samples[s.key],
            "cost_per_subject": cost[s.key],
            "latency_ms": latency[s.key],
        }
        for s in panel
    ]


def write_jury_file(selection: Selection, path: Path) -> Path:
    """Write the chosen sub-jury as a jury file (:func:`jury_file_text`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(jury_file_text(selection), encoding="utf-8")
    return path


def jury_file_text(selection: Selection) -> str:
    """The chosen sub-jury as a jury file ('score --jury FILE'), its rule the plain mean."""
    import yaml

    chosen = set(selection.chosen.keys)
    jurors = []
    for row in selection.jurors:
        if row["key"] not in chosen:
            continue
        entry: dict[str, object] = {"model": row["model"], **row["params"]}
        if row["name"] and row["name"] != row["model"]:
            entry["name"] = row["name"]
        if row["samples"] > 1:
            entry["samples"] = row["samples"]
        jurors.append(entry)
    cost = selection.chosen.cost_per_subject
    header = (
        f"# Chosen by 'jurybench jury select' from run {selection.run} ({selection.rule}).\n"
        f"# Held-out RMSE {selection.chosen.error:.4g} vs {selection.full.error:.4g} for the full jury "
        f"({selection.target} target, {selection.method}); cost per subject "
        f"{'unknown' if cost is None else f'${cost:.6g}'}.\n"
    )
    if selection.method == "calibrated":
        header += "# Its weights are fitted by 'jurybench calibrate' on a run scored with this jury.\n"
    body = {"name": f"{selection.run}-selected", "aggregation": "mean", "jurors": jurors}
    return header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
