"""Anytime-valid inference for sequential judging: a betting confidence sequence for a bounded mean.

A jury score lies in a known range [a, b] (the rubric's scale), so y = (x - a) / (b - a) lies in
[0, 1]. For each candidate mean m, two gamblers bet on the observations in the order they were
sampled (Waudby-Smith and Ramdas, "Estimating means of bounded random variables by betting",
JRSS-B 86(1), 2024, the hedged-capital confidence sequence of their section 4 with the aGRAPA bets
of their section 5):

    K+_t(m) = prod_{i<=t} (1 + l+_i(m) (y_i - m)),   K-_t(m) = prod_{i<=t} (1 - l-_i(m) (y_i - m)),
    K_t(m)  = (K+_t(m) + K-_t(m)) / 2,

with predictable bets from the estimates before observation i,

    mu_{i-1} = (1/2 + sum_{j<i} y_j) / i,   s2_{i-1} = (1/4 + sum_{j<i} (y_j - mu_j)^2) / i,
    g_i(m)   = (mu_{i-1} - m) / (s2_{i-1} + (mu_{i-1} - m)^2),
    l+_i(m)  = clip(g_i(m), 0, c/m),   l-_i(m) = clip(-g_i(m), 0, c/(1 - m)),   c = 1/2.

(their hedged capital takes max(K+, K-) / 2; the average of two test martingales is itself one,
and never below that maximum's half, so it rejects at least as soon). Under the true mean each
K is a nonnegative martingale starting at 1, so by Ville's inequality
P(some t has K_t(mu) >= 1/alpha) <= alpha: the set of m never rejected, {m : K_s(m) < 1/alpha for
every s <= t}, covers mu at every t at once, whatever stopping time ends the study. The bets grow
with (mu - m) / variance, so the interval narrows at the rate the observations' own variance
allows (an empirical-variance adaptive sequence), not at the range's worst case. The always-valid
p-value for m is min(1, 1 / max_t K_t(m)). The interval reported is the hull of the m never
rejected, on a grid of ``GRID`` cells, widened by one cell on each side.

Observations must be independent draws of the quantity whose mean is wanted. ``score --until``
samples whole clusters (by default a prompt with all its items) and the observation is the
cluster's mean, so the sequence covers the mean over the population of clusters (each prompt
counts once); ``--until-cluster item`` makes each subject its own cluster.

Runs judged before jurybench 0.x recorded a normal-mixture sequence (Robbins 1970; Howard et al.
2021) with the scale's half range as its standard deviation; their records stay readable and
``stats sequential`` reports them with that method (``LEGACY_METHOD``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    import numpy as np
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray

    from jurybench.rubric import AnyRubric

METHOD = "betting confidence sequence, hedged capital with aGRAPA bets (Waudby-Smith & Ramdas 2024)"
LEGACY_METHOD = "normal-mixture confidence sequence for a bounded mean (Robbins 1970; Howard et al. 2021)"
GRID = 1000  # cells of the [0, 1] grid the interval is read on
BET_CAP = 0.5  # c: no bet stakes more than half the capital's reach
_CHUNK = 256  # observations per block when the capital is carried through a long sequence

_NAME = r"\s*([\w-]+)\s*"
_NUMBER = r"\s*(-?[0-9]*\.?[0-9]+)\s*"
_RULES = {
    "ci_width": re.compile(rf"^\s*ci_width\({_NAME}\)\s*<{_NUMBER}$"),
    "excludes": re.compile(rf"^\s*excludes\({_NAME},{_NUMBER}\)\s*$"),
    "separated": re.compile(rf"^\s*separated\({_NAME}\)\s*$"),
    "gap_excludes": re.compile(rf"^\s*gap_excludes\({_NUMBER}\)\s*$"),
}
RULE_HELP = (
    "ci_width(CRITERION)<WIDTH, excludes(CRITERION,VALUE), separated(CRITERION) (every model apart "
    "from the next: a settled leaderboard) or gap_excludes(VALUE) (pairwise: the treatment gap "
    "G = sum of |category means| decided against VALUE), e.g. 'ci_width(coherence)<0.5' or "
    "'gap_excludes(0)'"
)
CLUSTER_HELP = "prompt (the default: a prompt with all its items), item (each subject alone) or meta.<field>"
_META = re.compile(r"^meta\.([A-Za-z0-9_]+)$")


@dataclass(frozen=True)
class StoppingRule:
    """When sequential judging stops:

    - ``ci_width(DIM)<W``: the confidence sequence for the jury's mean of DIM is narrower than W;
    - ``excludes(DIM,V)``: it excludes V (the sign, or the difference from V, is decided);
    - ``separated(DIM)``: a leaderboard is settled: the models, ranked by their jury mean of DIM,
      each differ from the next by a confidence sequence of the difference that excludes 0 (alpha
      split over every pair of models, so a ranking read off the data is covered);
    - ``gap_excludes(V)``: pairwise rubrics: the confidence sequence for the treatment gap
      G = sum over categories of |jury mean| (each category's at alpha split over the categories)
      excludes V (V = 0: a gap is shown).
    """

    text: str
    kind: str
    dimension: str  # "" for gap_excludes (every category)
    threshold: float | None  # None for separated
    alpha: float = 0.05


def is_rule(text: str) -> bool:
    """Whether ``text`` has the form of a stopping rule (its criterion is checked against the rubric later)."""
    return any(r.match(text or "") for r in _RULES.values())


def parse_rule(text: str, dimensions: list[str], alpha: float = 0.05) -> StoppingRule:
    """A stopping rule from its text, checked against the rubric's dimensions; one line on error."""
    kind, found = next(((k, m) for k, r in _RULES.items() if (m := r.match(text or ""))), ("", None))
    if found is None:
        raise JurybenchError(f"--until {text!r} is not a stopping rule.", hint=f"Use {RULE_HELP}.")
    groups = found.groups()
    dimension = "" if kind == "gap_excludes" else groups[0]
    value = {"ci_width": groups[-1], "excludes": groups[-1], "gap_excludes": groups[0]}.get(kind)
    if kind != "gap_excludes" and dimension not in dimensions:
        raise JurybenchError(
            f"--until: {dimension!r} is not a criterion of the rubric.", hint=f"Valid: {', '.join(dimensions)}."
        )
    if not 0 < alpha < 1:
        raise JurybenchError(f"--until-alpha must be between 0 and 1 (got {alpha}).")
    threshold = float(value) if value is not None else None
    if kind == "ci_width" and threshold is not None and threshold <= 0:
        raise JurybenchError("--until: a width must be above 0.")
    return StoppingRule(text.strip(), kind, dimension, threshold, alpha)


def fitted_rule(text: str, rubric: AnyRubric, alpha: float = 0.05) -> tuple[StoppingRule, float, float]:
    """A stopping rule checked against the rubric it stops (its dimension, a pairwise rubric for
    the treatment gap, items for a leaderboard, scores rather than labels), and the bounds of
    the scale its confidence sequence is on; one line on error. ``score --until`` and the
    service's job check both ask here."""
    rule = parse_rule(text, rubric.dimensions, alpha)
    if rule.kind == "gap_excludes" and not rubric.pairwise:
        raise JurybenchError(
            f"--until {rule.text}: the treatment gap is a pairwise rubric's figure, not a {rubric.kind} one's.",
            hint="Use ci_width, excludes or separated.",
        )
    if rule.kind == "separated" and rubric.subject_table != "items":
        raise JurybenchError(
            f"--until {rule.text}: a leaderboard ranks the items' models; a {rubric.kind} rubric judges pairs.",
            hint="Use ci_width, excludes or gap_excludes.",
        )
    bounds = rubric.scale_for(rule.dimension or rubric.dimensions[0])
    if bounds is None or not rubric.answers_in_json:
        raise JurybenchError(f"--until needs scores: a {rubric.kind} rubric's answers are labels.")
    return rule, float(bounds[0]), float(bounds[1])


def check_cluster(cluster: str) -> str:
    """``--until-cluster``'s value, checked: prompt, item or meta.<field>."""
    text = (cluster or "").strip()
    if text in ("prompt", "item") or _META.match(text):
        return text
    raise JurybenchError(f"--until-cluster {cluster!r} is not a cluster.", hint=f"Use {CLUSTER_HELP}.")


# -- the betting confidence sequence -------------------------------------------------------------


def _scaled(values: Sequence[float], low: float, high: float) -> NDArray[np.float64]:
    import numpy as np

    return np.clip((np.asarray(values, dtype=float) - low) / (high - low), 0.0, 1.0)


def _estimates(y: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(mu_{i-1}, s2_{i-1}) for each observation i: the regularised running mean and variance
    before it (predictable: they use only earlier observations)."""
    import numpy as np

    t = np.arange(1, len(y) + 1, dtype=float)
    mu = (0.5 + np.cumsum(y)) / (t + 1)
    s2 = (0.25 + np.cumsum((y - mu) ** 2)) / (t + 1)
    return np.concatenate([[0.5], mu[:-1]]), np.concatenate([[0.25], s2[:-1]])


def log_capital(values: Sequence[float], low: float, high: float, m: NDArray[np.float64]) -> NDArray[np.float64]:
    """log K_t(m) for every t (rows) and every scaled candidate mean in ``m`` (columns)."""
    import numpy as np

    y = _scaled(values, low, high)
    mu, s2 = _estimates(y)
    out = np.empty((len(y), len(m)))
    plus = np.zeros(len(m))
    minus = np.zeros(len(m))
    cap_plus = BET_CAP / np.maximum(m, 1e-12)
    cap_minus = BET_CAP / np.maximum(1 - m, 1e-12)
    for start in range(0, len(y), _CHUNK):
        stop = min(start + _CHUNK, len(y))
        gap = mu[start:stop, None] - m[None, :]
        g = gap / (s2[start:stop, None] + gap * gap)
        step = y[start:stop, None] - m[None, :]
        up = np.log1p(np.clip(g, 0, cap_plus) * step)
        down = np.log1p(-np.clip(-g, 0, cap_minus) * step)
        up_path = plus + np.cumsum(up, axis=0)
        down_path = minus + np.cumsum(down, axis=0)
        out[start:stop] = np.logaddexp(up_path, down_path) - math.log(2)
        plus, minus = up_path[-1], down_path[-1]
    return out


def _grid() -> NDArray[np.float64]:
    import numpy as np

    return (np.arange(GRID, dtype=float) + 0.5) / GRID


def intervals(
    values: Sequence[float], low: float, high: float, alpha: float, at: Sequence[int]
) -> list[tuple[float, float]]:
    """The confidence sequence's interval after each count of observations in ``at``: the hull of
    the grid's candidate means never rejected up to then, widened by a cell on each side (the
    running intersection: a candidate once rejected stays rejected)."""
    import numpy as np

    if not len(values):
        return [(low, high) for _ in at]
    grid = _grid()
    ever = np.maximum.accumulate(log_capital(values, low, high, grid), axis=0) >= math.log(1 / alpha)
    out = []
    for n in at:
        if n < 1:
            out.append((low, high))
            continue
        kept = np.flatnonzero(~ever[min(n, len(values)) - 1])
        if not len(kept):  # every candidate rejected (probability <= alpha): the running mean alone
            mean = float(np.mean(_scaled(values[:n], low, high)))
            lo_y = hi_y = mean
        else:
            lo_y = float(grid[kept[0] - 1]) if kept[0] > 0 else 0.0
            hi_y = float(grid[kept[-1] + 1]) if kept[-1] < GRID - 1 else 1.0
        out.append((low + (high - low) * lo_y, low + (high - low) * hi_y))
    return out


def max_log_capital(values: Sequence[float], low: float, high: float, value: float) -> float:
    """The largest log K_t(value) over the sequence: the evidence against a mean of ``value``."""
    import numpy as np

    if not len(values):
        return 0.0
    m = np.array([min(max((value - low) / (high - low), 0.0), 1.0)])
    return float(max(0.0, np.max(log_capital(values, low, high, m))))


def p_value(values: Sequence[float], low: float, high: float, value: float) -> float:
    """The always-valid p-value for a mean of ``value``: min(1, 1 / max_t K_t(value))."""
    return float(min(1.0, math.exp(-max_log_capital(values, low, high, value))))


def excludes(values: Sequence[float], low: float, high: float, alpha: float, value: float) -> bool:
    """Whether the sequence has excluded ``value`` (read at the value itself, not on the grid)."""
    return max_log_capital(values, low, high, value) >= math.log(1 / alpha)


def look(values: Sequence[float], low: float, high: float, alpha: float) -> dict[str, Any]:
    """The confidence sequence after ``values`` (in the order sampled): n, mean, interval, width."""
    n = len(values)
    mean = sum(values) / n if n else math.nan
    lo, hi = intervals(values, low, high, alpha, [n])[0]
    return {"n": n, "mean": mean, "ci_low": lo, "ci_high": hi, "width": hi - lo}


def paired(first: Sequence[float], second: Sequence[float]) -> list[float]:
    """The differences of two streams taken in step (the i-th of one less the i-th of the other):
    independent draws of a difference whose mean is the difference of the means. Where both
    streams come from the same clusters in the same order, each difference is within a cluster."""
    return [a - b for a, b in zip(first, second, strict=False)]


def look_groups(groups: dict[str, list[float]], low: float, high: float, alpha: float) -> dict[str, object]:
    """Each group's mean with its confidence sequence (alpha split over the groups), ranked by
    mean; each adjacent pair's difference with its sequence (alpha split over every pair of
    groups, so the ranking read off the data is covered); ``separated`` when every adjacent
    difference excludes 0."""
    names = list(groups)
    pairs_alpha = alpha / max(len(names) * (len(names) - 1) / 2, 1)
    share = alpha / max(len(names), 1)
    ranked = sorted(
        ((name, look(values, low, high, share)) for name, values in groups.items()),
        key=lambda item: (-item[1]["mean"] if item[1]["n"] else math.inf, item[0]),
    )
    span = high - low
    differences = []
    for (upper, _), (lower, _) in itertools.pairwise(ranked):
        d = paired(groups[upper], groups[lower])
        figure = (
            look(d, -span, span, pairs_alpha) if d else {"n": 0, "mean": math.nan, "ci_low": -span, "ci_high": span}
        )
        differences.append(
            {
                "upper": upper,
                "lower": lower,
                **figure,
                "apart": bool(d) and excludes(d, -span, span, pairs_alpha, 0.0),
            }
        )
    pooled = [v for values in groups.values() for v in values]
    return {
        **look(pooled, low, high, alpha),
        "total": sum(pooled),
        "separated": len(ranked) >= 2 and all(d["apart"] for d in differences),
        "groups": [{"group": name, **figure} for name, figure in ranked],
        "differences": differences,
    }


def look_gap(categories: dict[str, list[float]], low: float, high: float, alpha: float) -> dict[str, object]:
    """The treatment gap G = sum over categories of |mean| with a confidence sequence: each
    category's at ``alpha`` split over the categories, so all hold at once, and G's bounds are its
    least and greatest value over their box (a category whose interval holds 0 adds 0 at least)."""
    share = alpha / max(len(categories), 1)
    figures = {name: look(values, low, high, share) for name, values in categories.items()}
    for name, f in figures.items():  # 0 excluded: read at 0 itself, as excludes(...) is
        if f["n"] and f["ci_low"] <= 0 <= f["ci_high"] and excludes(categories[name], low, high, share, 0.0):
            f["ci_low"], f["ci_high"] = (1e-12, f["ci_high"]) if f["mean"] > 0 else (f["ci_low"], -1e-12)
    present = [f for f in figures.values() if f["n"]]
    n = min((f["n"] for f in figures.values()), default=0)
    gap = sum(abs(f["mean"]) for f in present)
    gap_low = sum(
        0.0 if f["ci_low"] <= 0 <= f["ci_high"] else min(abs(f["ci_low"]), abs(f["ci_high"])) for f in present
    )
    gap_high = sum(max(abs(f["ci_low"]), abs(f["ci_high"])) for f in present)
    if len(present) < len(figures):  # a category with no score yet: its mean may be anywhere
        gap_high += (len(figures) - len(present)) * max(abs(low), abs(high))
    return {
        "n": n,
        "gap": gap,
        "ci_low": gap_low,
        "ci_high": gap_high,
        "width": gap_high - gap_low,
        "categories": {
            name: {"n": f["n"], "mean": f["mean"] if f["n"] else None, "ci_low": f["ci_low"], "ci_high": f["ci_high"]}
            for name, f in figures.items()
        },
    }


def look_streams(rule: StoppingRule, streams: dict[str, list[float]], low: float, high: float) -> dict[str, object]:
    """The figure a rule looks at, from its observation streams (one per model for ``separated``,
    per category for ``gap_excludes``, one stream ``""`` otherwise), each in sampling order."""
    if rule.kind == "gap_excludes":
        return look_gap(streams, low, high, rule.alpha)
    if rule.kind == "separated":
        return look_groups(streams, low, high, rule.alpha)
    values = streams.get("", [])
    figure = {**look(values, low, high, rule.alpha), "total": sum(values)}
    if rule.kind == "excludes" and rule.threshold is not None and values:
        figure["excluded"] = excludes(values, low, high, rule.alpha, rule.threshold)
    return figure


def met(rule: StoppingRule, figure: dict[str, Any]) -> bool:
    """Whether a look meets the rule."""
    if figure["n"] == 0:
        return False
    if rule.kind == "ci_width":
        return bool(figure["width"] < rule.threshold)
    if rule.kind == "separated":
        return bool(figure["separated"])
    if "excluded" in figure:
        return bool(figure["excluded"])
    assert rule.threshold is not None
    return bool(figure["ci_low"] > rule.threshold or figure["ci_high"] < rule.threshold)


# -- clusters and the order observations arrive in -----------------------------------------------


def cluster_rank(seed: int, cluster: str) -> str:
    """A cluster's place in the seeded random order: a hash of the seed and its key, so the order
    is fixed before any score is seen and can be recomputed from the run's record."""
    import hashlib

    return hashlib.sha256(f"{seed}\x00{cluster}".encode()).hexdigest()


def cluster_sql(spec: AnyRubric, cluster: str) -> str:
    """SELECT subject, cluster for every subject of the rubric's kind (a subject with no value
    for the cluster's field is a cluster of its own)."""
    cluster = check_cluster(cluster)
    meta = _META.match(cluster)
    if spec.subject_table == "pairs":
        key = "p.pair_id"
        expr = {
            "prompt": "a.prompt",
            "item": key,
        }.get(cluster) or f"json_extract_string(coalesce(p.metadata, a.metadata), '$.{meta.group(1) if meta else ''}')"
        return (
            f"SELECT {key} AS subject, coalesce(CAST({expr} AS VARCHAR), 'subject:' || {key}) AS cluster "
            "FROM pairs p JOIN items a ON a.item_id = p.item_a"
        )
    key = "item_id"
    expr = {"prompt": "prompt", "item": key}.get(cluster) or (
        f"json_extract_string(metadata, '$.{meta.group(1) if meta else ''}')"
    )
    return f"SELECT {key} AS subject, coalesce(CAST({expr} AS VARCHAR), 'subject:' || {key}) AS cluster FROM items"


def clusters_of(con: Connection, spec: AnyRubric, cluster: str, subjects: Sequence[str]) -> dict[str, str]:
    """Each of ``subjects``' cluster key."""
    import pyarrow as pa

    from jurybench.store import registered

    with registered(con, "_jb_until_subjects", pa.table({"id": pa.array(list(subjects), pa.string())})):
        rows = con.execute(
            f"SELECT c.subject, c.cluster FROM ({cluster_sql(spec, cluster)}) c "
            "JOIN _jb_until_subjects s ON s.id = c.subject"
        ).fetchall()
    return {str(s): str(c) for s, c in rows}


def streams_of(rows: Sequence[tuple[str, str, float]], rule: StoppingRule, seed: int) -> dict[str, list[float]]:
    """Observation streams from (cluster, stream name, score) rows: each cluster's mean per stream,
    clusters in their seeded order. Streams are the models (``separated``), the categories
    (``gap_excludes``) or one stream ``""``."""
    from collections import defaultdict

    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for cluster, stream, score in rows:
        cell = sums[(stream, cluster)]
        cell[0] += float(score)
        cell[1] += 1
    order = sorted({cluster for cluster, _, _ in rows}, key=lambda c: cluster_rank(seed, c))
    names = sorted({stream for _, stream, _ in rows})
    return {name: [sums[(name, c)][0] / sums[(name, c)][1] for c in order if (name, c) in sums] for name in names}


def look_run(
    con: Connection, spec: AnyRubric, rule: StoppingRule, run: str, low: float, high: float, cluster: str, seed: int
) -> dict[str, object]:
    """The figure the rule looks at, from the run's jury scores so far: cluster means in the
    seeded order of the clusters."""
    rows = run_rows(con, spec, rule, run, cluster)
    streams = streams_of(rows, rule, seed)
    if rule.kind == "gap_excludes":
        streams = {dim: streams.get(dim, []) for dim in spec.dimensions}
    return look_streams(rule, streams, low, high)


def run_rows(
    con: Connection, spec: AnyRubric, rule: StoppingRule, run: str, cluster: str
) -> list[tuple[str, str, float]]:
    """(cluster, stream, jury score) for each of the run's scored subjects the rule reads."""
    key = spec.subject_column
    base = f"SELECT j.{key} AS subject, j.{spec.dimension_column} AS dim, j.jury_score FROM {spec.jury_view} j"
    if rule.kind == "gap_excludes":
        sql = f"SELECT c.cluster, s.dim, s.jury_score FROM ({base} WHERE j.run_id = ? AND j.jury_score IS NOT NULL) s"
        args: list[object] = [run]
    elif rule.kind == "separated":
        sql = (
            "SELECT c.cluster, coalesce(i.model, '(no model)'), s.jury_score FROM "
            f"({base} WHERE j.run_id = ? AND j.{spec.dimension_column} = ? AND j.jury_score IS NOT NULL) s "
            "JOIN items i ON i.item_id = s.subject"
        )
        args = [run, rule.dimension]
    else:
        sql = (
            f"SELECT c.cluster, '', s.jury_score FROM ({base} WHERE j.run_id = ? "
            f"AND j.{spec.dimension_column} = ? AND j.jury_score IS NOT NULL) s"
        )
        args = [run, rule.dimension]
    sql += f" JOIN ({cluster_sql(spec, cluster)}) c ON c.subject = s.subject ORDER BY ALL"  # sums in a defined order
    return [(str(c), str(d), float(v)) for c, d, v in con.execute(sql, args).fetchall()]


# -- the legacy normal-mixture sequence (runs recorded before the betting sequence) ---------------


def legacy_rho(planned: int, sigma: float, alpha: float) -> float:
    """The mixture's rho a legacy run used: tightest near half the planned subjects."""
    v = sigma * sigma * max(1.0, planned / 2)
    return v / max(1.0, 2 * math.log(1 / alpha) + math.log(1 + 2 * math.log(1 / alpha)))


def legacy_radius(n: int, sigma: float, alpha: float, rho: float) -> float:
    """Half the width of the normal-mixture sequence after n scores (infinite before the first)."""
    if n < 1:
        return math.inf
    v = n * sigma * sigma + rho
    return math.sqrt(v * math.log(v / (rho * alpha * alpha))) / n


def legacy_look(values: Sequence[float], low: float, high: float, alpha: float, rho: float) -> dict[str, Any]:
    """A look of the normal-mixture sequence a legacy record names (sigma = half the range)."""
    n = len(values)
    mean = sum(values) / n if n else math.nan
    r = legacy_radius(n, (high - low) / 2, alpha, rho)
    lo, hi = (max(low, mean - r), min(high, mean + r)) if n else (low, high)
    return {"n": n, "mean": mean, "ci_low": lo, "ci_high": hi, "width": hi - lo}


def legacy_p(looks: list[tuple[float, int]], value: float, low: float, high: float, rho: float) -> float:
    """The normal-mixture always-valid p-value after looks (running total, n)."""
    sigma = (high - low) / 2
    best = 0.0
    for total, n in looks:
        if n:
            s, v = total - n * value, n * sigma * sigma
            best = max(best, 0.5 * math.log(rho / (v + rho)) + s * s / (2 * (v + rho)))
    return float(min(1.0, math.exp(-best)))


# -- the record of a sequential run (runs.stopping) ------------------------------------------------

# What must match for an interrupted run's looks to be taken up again: the same design.
DESIGN = ("rule", "alpha", "batch_items", "seed", "cluster", "subjects_available", "scale", "method")


def stored_record(con: Connection, run: str) -> dict[str, Any] | None:
    """The stopping record of ``run`` (``runs.stopping``): the rule, its design, every look and
    why judging stopped (``stopped`` None while a run judges); None for a run judged whole."""
    import json

    row = con.execute("SELECT stopping FROM runs WHERE run_id = ?", [run]).fetchone()
    if not row or not row[0]:
        return None
    try:
        record = json.loads(row[0])
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def prior_looks(con: Connection, run: str, record: dict[str, object]) -> list[dict[str, object]]:
    """The looks an earlier invocation of ``run`` recorded, when it used the same design and did
    not finish (a finished one's looks are taken again: its record is replaced)."""
    earlier = stored_record(con, run)
    if earlier is None or earlier.get("stopped") is not None:
        return []
    if any(earlier.get(name) != record[name] for name in DESIGN):
        return []
    looks = earlier.get("looks")
    return [dict(look) for look in looks] if isinstance(looks, list) else []


def save_record(con: Connection, run: str, record: Mapping[str, object], *, count_subjects: bool = False) -> None:
    """Write ``run``'s stopping record; ``count_subjects`` at the end, when the run's subjects are
    those judged in every batch (each batch's engine run counted its own)."""
    import json

    if count_subjects:
        con.execute(
            "UPDATE runs SET stopping = ?, n_subjects = (SELECT count(*) FROM run_subjects WHERE run_id = ?) "
            "WHERE run_id = ?",
            [json.dumps(record), run, run],
        )
    else:
        con.execute("UPDATE runs SET stopping = ? WHERE run_id = ?", [json.dumps(record), run])
