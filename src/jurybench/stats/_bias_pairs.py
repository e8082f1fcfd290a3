"""``stats bias`` on pairwise runs (preferences A/B/tie, or a score per category of how much more
the first response has): what a juror's symmetrized verdict leans on.

For each rater and category, the outcome is the symmetrized score of a pair, epsilon = (score
with A shown first - score with B shown first) / 2, which leans toward A when positive; the
features are differences, A's minus B's (100 tokens more, one markdown header more, A of the
juror's family and B not, ...). Against human labels the outcome is the rater's epsilon minus
the humans' (their mean vote, A = +1, B = -1, tie = 0, or their mean score); without, the
rater's epsilon itself. An intercept is fitted (a lean toward whichever response the data
names A). Clustered by A's prompt, as pointwise.

Position is asked separately, per juror and for the jury, on pairs judged in both orders: the
mean of (score with A first + score with B first) / 2, how far the verdict leans toward the
response shown first whatever it is (an intercept-only fit, clustered the same way). No quality
can explain it, so it needs no human labels. All effects share one multiplicity correction.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from jurybench.errors import JurybenchError
from jurybench.stats._bias import (
    FEW_CLUSTERS,
    Effect,
    Subject,
    cluster_ols,
    clusters_departing,
    dominated,
    effect_of,
    fitted_as,
    independent_columns,
)
from jurybench.stats._held import Held, exact, held_labels, held_ols, truth_columns

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

PAIR_UNITS = {
    "tokens": "toward the response 100 tokens longer",
    "chars": "toward the response 1,000 characters longer",
    "headers": "toward the response with one markdown header more",
    "lists": "toward the response with one list item more",
    "bold": "toward the response with one bold span more",
    "code": "toward the response with one code block more",
    "self": "toward its own family's response against another's",
    "position": "toward the response shown first",
}
JURY_SELF = "toward a response of one of its jurors' families against another's"


def pair_unit(feature: str, binary: bool) -> str:
    if feature in PAIR_UNITS:
        return PAIR_UNITS[feature]
    if binary:
        what = feature[4:] if feature.startswith("sql:") else f"{feature} is true"
        return f"toward the response where {what} against one where not"
    return f"per unit more of {feature}"


def read_pairs(con: Connection, run_id: str) -> dict[str, tuple[str, str]]:
    return {
        str(p): (str(a), str(b))
        for p, a, b in con.execute(
            "SELECT pair_id, item_a, item_b FROM pairs "
            "WHERE pair_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)",
            [run_id],
        ).fetchall()
    }


def read_pair_scores(
    con: Connection, run_id: str
) -> tuple[dict[tuple[str, str], dict[str, float]], dict[tuple[str, str], dict[str, float]], dict[str, str]]:
    """(rater, category) -> pair -> epsilon, and -> pair -> the lean toward the first-shown
    response (pairs judged in both orders), for each juror and the jury; each juror's model."""
    epsilon: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    first: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    models = {}
    for juror, model, pair, category, eps, ab, ba in con.execute(
        "SELECT v.juror, ju.model, v.pair_id, v.category, v.juror_epsilon, v.juror_score_ab, v.juror_score_ba "
        "FROM juror_pairwise v JOIN jurors ju USING (juror_key) WHERE v.run_id = ?",
        [run_id],
    ).fetchall():
        models[str(juror)] = str(model)
        if eps is not None:
            epsilon[(str(juror), str(category))][str(pair)] = float(eps)
        if ab is not None and ba is not None:
            first[(str(juror), str(category))][str(pair)] = (float(ab) + float(ba)) / 2
    from jurybench.store import jury_calibration

    fitted = jury_calibration(con, run_id)  # a jury whose rule is a calibration: its own labels left out
    for pair, category, score in con.execute(
        "SELECT pair_id, category, jury_score FROM jury_pairwise WHERE run_id = ? AND jury_score IS NOT NULL "
        "AND NOT below_quorum",
        [run_id],
    ).fetchall():
        if fitted is None or not fitted.used(str(pair), str(category)):
            epsilon[("jury", str(category))][str(pair)] = float(score)
    orders: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for pair, category, order, score in con.execute(
        "SELECT pair_id, category, presented_order, jury_score FROM jury_pairwise_orders WHERE run_id = ? "
        "AND jury_score IS NOT NULL AND NOT below_quorum",
        [run_id],
    ).fetchall():
        orders[(str(pair), str(category))][str(order)] = float(score)
    for (pair, category), by in orders.items():
        if {"AB", "BA"} <= set(by) and (fitted is None or not fitted.used(pair, category)):
            first[("jury", category)][pair] = (by["AB"] + by["BA"]) / 2
    return dict(epsilon), dict(first), models


def read_pair_humans(con: Connection, run_id: str) -> dict[str, Held]:
    """category -> the humans' mean per pair in the A frame (A = +1, B = -1, tie = 0; or a
    score), with the noise of each mean (stats/_held.py)."""
    vote = "coalesce(value, CASE label WHEN 'A' THEN 1 WHEN 'B' THEN -1 WHEN 'tie' THEN 0 END)"
    rows: dict[str, list[tuple[str, float, int, float | None]]] = defaultdict(list)
    for pair, category, mean, n, var in con.execute(
        f"""SELECT subject_id, criterion, avg({vote}), count({vote}), var_samp({vote}) FROM human_labels
           WHERE subject_kind = 'pair' AND subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)
           GROUP BY ALL HAVING count({vote}) > 0 ORDER BY ALL""",
        [run_id],
    ).fetchall():
        rows[str(category)].append((str(pair), float(mean), int(n), None if var is None else float(var)))
    return {category: held_labels(listed) for category, listed in rows.items()}


def jurors_mean(
    epsilon: Mapping[tuple[str, str], dict[str, float]], jurors: list[str], category: str
) -> dict[str, float]:
    """The jury row held against the humans: its jurors' mean symmetrized score per pair. A
    majority (or any rule that sharpens the jurors' verdicts) is a function of the votes that is
    steeper than any of them; fitted on the humans' mean it would show, as a lean, the rule's
    sharpening of whatever the humans' labels follow (a length the humans reward as much as the
    jurors), which is no lean of a rater."""
    votes: dict[str, list[float]] = defaultdict(list)
    for juror in jurors:
        for pair, value in epsilon.get((juror, category), {}).items():
            votes[pair].append(value)
    return {pair: float(np.mean(v)) for pair, v in votes.items()}


def _fit(
    rater: str,
    category: str,
    y: dict[str, float],
    x: dict[str, list[float]],
    names: list[str],
    units: list[str],
    cluster_of: Mapping[str, str],
    level: float,
    notes: list[str],
    humans: Held | None = None,
) -> list[Effect]:
    """One rater's effects on its symmetrized scores: with an intercept, and the humans' verdict
    held fixed when ``humans`` is given (stats/_held.py)."""
    pairs = sorted(
        p for p in y if p in x and not any(math.isnan(v) for v in x[p]) and (humans is None or p in humans)
    )  # id order: see fit_effects
    if not pairs:
        return []
    outcome = np.array([y[p] for p in pairs])
    design = np.array([x[p] for p in pairs], dtype=float).reshape(len(pairs), len(names))
    clusters = [cluster_of[p] for p in pairs]
    keep = [j for j in range(design.shape[1]) if np.ptp(design[:, j]) > 1e-12]
    dropped = [names[j] for j in range(design.shape[1]) if j not in keep]
    if dropped:
        notes.append(f"{', '.join(dropped)}: the same in both responses of every pair; left out")
    controls, noisy, noise, _ = (
        truth_columns(humans, pairs) if humans is not None else ([np.ones(len(pairs))], None, np.zeros(len(pairs)), [])
    )
    keep, tied = independent_columns(design, keep, base=controls)
    if tied:
        notes.append(f"{', '.join(names[j] for j in tied)}: a combination of the features named before it; left out")
    few = [names[j] for j in keep if clusters_departing(design[:, j], clusters) < FEW_CLUSTERS]
    if (heavy := dominated([names[j] for j in keep], design[:, keep])) is not None:
        notes.append(heavy)
    if few:
        notes.append(
            f"{', '.join(few)}: departs from its usual value in fewer than {FEW_CLUSTERS} clusters; a cluster-robust "
            "interval is then too narrow (MacKinnon and Webb 2017): read it with care"
        )
    if not keep:
        return []
    fit = held_ols(outcome, np.column_stack([*controls, design[:, keep]]), clusters, noisy, noise)
    if fit is None:
        notes.append(
            f"too few pairs or prompts to fit ({len(pairs)} pairs), or the humans' labels too noisy to hold fixed; "
            "left out"
        )
        return []
    first = len(controls)
    return [effect_of(fit, k, rater, category, names[j], units[j], level) for k, j in enumerate(keep, start=first)]


def _position(
    rater: str, category: str, lean: Mapping[str, float], cluster_of: Mapping[str, str], level: float
) -> Effect | None:

    pairs = sorted(p for p in lean if p in cluster_of)
    if len(pairs) < 2:
        return None
    fit = cluster_ols(
        np.array([lean[p] for p in pairs]), np.ones((len(pairs), 1)), [cluster_of[p] for p in pairs], absorbed=False
    )
    if fit is None:
        return None
    return effect_of(fit, 0, rater, category, "position", PAIR_UNITS["position"], level)


def pairwise_effects(
    con: Connection,
    run_id: str,
    *,
    wanted: list[str],
    named: bool,
    against: str,
    subjects: dict[str, Subject],
    base: Mapping[str, list[float]],
    names: list[str],
    binary: frozenset[str],
    family_of_item: Mapping[str, str | None],
    juror_family: Callable[[str], str | None],
    raters: str,
    alpha: float,
) -> tuple[list[Effect], dict[str, str], list[tuple[str, str, str]]]:
    """Every effect of a pairwise run, how each category was fitted, and notes (text, rater,
    category)."""
    pairs = {p: ab for p, ab in read_pairs(con, run_id).items() if ab[0] in subjects and ab[1] in subjects}
    if not pairs:
        raise JurybenchError(f"run '{run_id}' has no pairs whose two responses are stored and selected.")
    epsilon, first, models = read_pair_scores(con, run_id)
    humans = read_pair_humans(con, run_id) if against in ("humans", "auto") else {}
    cluster_of = {p: subjects[a].cluster for p, (a, _) in pairs.items()}
    jurors = sorted(models)
    order = [*jurors, "jury"] if raters == "all" else (["jury"] if raters == "jury" else jurors)
    categories = sorted({c for _, c in epsilon})
    fams = {j: juror_family(j) for j in jurors}
    effects: list[Effect] = []
    modes: dict[str, str] = {}
    notes: list[tuple[str, str, str]] = []
    level = 1 - alpha
    for category in categories:
        labelled = humans.get(category) or exact({})
        mode = modes[category] = fitted_as(against, labelled, run_id, category)
        for rater in order:
            given = epsilon.get((rater, category), {})
            own: set[str | None] = {fams[j] for j in jurors} - {None} if rater == "jury" else {fams.get(rater)} - {None}
            columns, units = list(names), [pair_unit(n, n in binary) for n in names]
            with_self = "self" in wanted and own and any(f in own for f in family_of_item.values())
            if with_self:
                columns.append("self")
                units.append(JURY_SELF if rater == "jury" else PAIR_UNITS["self"])
            rows = {}
            for p, (a, b) in pairs.items():
                diff = [u - v for u, v in zip(base[a], base[b], strict=True)]
                if with_self:
                    diff.append(float(family_of_item[a] in own) - float(family_of_item[b] in own))
                rows[p] = diff
            held = labelled if mode == "humans" else None
            y = jurors_mean(epsilon, jurors, category) if rater == "jury" and held is not None else given
            said: list[str] = []
            if columns:
                effects.extend(_fit(rater, category, y, rows, columns, units, cluster_of, level, said, held))
            if "position" in wanted:
                lean = _position(rater, category, first.get((rater, category), {}), cluster_of, level)
                if lean is not None:
                    effects.append(lean)
                elif named and rater != "jury":
                    said.append("position: fewer than two pairs judged in both orders; not asked")
            notes.extend((s, rater, category) for s in said)
    return effects, modes, notes


def pair_reading(e: Effect, against: str, correction: str) -> str:
    """One plain line: 'sim/b leans +0.20 [0.12, 0.28] toward the response 100 tokens longer'."""
    size = f"{e.estimate:+.2f} [{e.ci_low:.2f}, {e.ci_high:.2f}]"
    tail = f"({e.criterion}; {correction}-adjusted p {e.p_adjusted:.3g})"
    if e.feature == "position":
        return f"{e.rater} leans {size} {e.unit} {tail}: an order effect, whatever the responses"
    if against == "humans":
        return f"{e.rater} leans {size} {e.unit}, with the humans' verdict held fixed {tail}"
    return f"{e.rater} leans {size} {e.unit} {tail}; without human labels this may be quality rather than bias"


def pair_bias_effects(
    epsilon: Mapping[str, float],
    differences: Mapping[str, list[float]],
    names: list[str],
    clusters: Mapping[str, str],
    *,
    humans: Held | None,
    level: float = 0.95,
) -> list[Effect]:
    """The joint effects of feature differences (pair -> A's minus B's) on one rater's
    symmetrized scores (pair -> epsilon), fitted as ``stats bias`` fits a pairwise rater: with an
    intercept, holding ``humans`` fixed when given; cluster-robust, unadjusted."""
    notes: list[str] = []
    return _fit(
        "rater",
        "category",
        dict(epsilon),
        dict(differences),
        list(names),
        [""] * len(names),
        clusters,
        level,
        notes,
        humans,
    )
