"""What a judge's scores lean on that they must not: response length, formatting, the responding
model's family, the language, or any item field a user names.

For each rater (each juror, and the jury) and criterion of a pointwise run, one least-squares
regression of the rater's score on the features, fitted jointly (each effect holds the others
fixed):

- **against the humans** (``against="humans"``): the outcome is the rater's error, score minus
  the human mean on the item, over the items with labels, with an intercept (leniency). A
  longer answer that people also score higher is then no bias: only what the rater adds beyond
  the humans counts. (Not the human mean as a covariate too: it carries the annotators' noise,
  and a feature that predicts quality would then take up what the noisy mean misses; in a
  simulation where the truth rises with length, that reported a length bias in most runs.) A
  rater that uses the scale differently (compresses it) errs with an item's quality, so a
  feature tied to quality shows in its error: the docs say how to read it.
- **within prompts** (``against="prompts"``): without labels, the outcome and the features are
  centred within each prompt (prompt fixed effects), so an effect compares responses to the
  same prompt and prompt difficulty cannot confound it. Without labels, an effect found this
  way may be quality rather than bias; the reading says so.

Intervals and p-values are cluster-robust (CR1: the sandwich with ``G/(G-1) * (N-1)/(N-K)``,
``K`` the fitted coefficients, prompt fixed effects absorbed and not counted, as they are
nested in the clusters) with Student's t on ``G - 1`` degrees of freedom, clustered by prompt.
The adjusted p-values control the family of every rater x criterion x feature tested (Holm's
step-down for the family-wise error, or Benjamini-Hochberg for the false discovery rate).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from jurybench.errors import JurybenchError
from jurybench.stats._held import Fit, Held, exact, held_labels, held_ols, truth_columns

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray

    Array = NDArray[np.float64]

TOKEN = re.compile(r"\w+|[^\w\s]")
HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\S", re.MULTILINE)
BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
FENCE = re.compile(r"^\s*```", re.MULTILINE)


def tokens(text: str) -> int:
    """Words and punctuation marks: a tokenizer-free count that tracks a model's tokens closely
    enough for an effect per 100 of them (no model's tokenizer is assumed)."""
    return len(TOKEN.findall(text))


@dataclass(frozen=True)
class TextFeature:
    """A feature read from the response's text: its name, how it is counted, and its unit."""

    name: str
    unit: str  # how an effect of one unit reads: 'per 100 tokens'
    count: Callable[[str], float]
    description: str


TEXT_FEATURES = {
    f.name: f
    for f in (
        TextFeature("tokens", "per 100 tokens", lambda t: tokens(t) / 100, "length in words and punctuation marks"),
        TextFeature("chars", "per 1,000 characters", lambda t: len(t) / 1000, "length in characters"),
        TextFeature("headers", "per markdown header", lambda t: len(HEADER.findall(t)), "markdown header lines"),
        TextFeature("lists", "per list item", lambda t: len(LIST_ITEM.findall(t)), "markdown list items"),
        TextFeature("bold", "per bold span", lambda t: len(BOLD.findall(t)), "**bold** or __bold__ spans"),
        TextFeature("code", "per code block", lambda t: len(FENCE.findall(t)) // 2, "fenced code blocks"),
    )
}
OWN = "on responses from its own family"
DEFAULT_FEATURES = ("tokens", "headers", "lists", "bold", "code", "self", "language")

# The family of a model, by the start of its name (after any provider prefix such as 'openai/'):
# the defaults for self-preference; a user's --family entries come first.
DEFAULT_FAMILIES = {
    "gpt": "openai",
    "chatgpt": "openai",
    "o1": "openai",
    "o3": "openai",
    "o4": "openai",
    "text-davinci": "openai",
    "claude": "anthropic",
    "gemini": "google",
    "gemma": "google",
    "palm": "google",
    "llama": "meta",
    "meta-llama": "meta",
    "mistral": "mistral",
    "mixtral": "mistral",
    "ministral": "mistral",
    "codestral": "mistral",
    "qwen": "alibaba",
    "deepseek": "deepseek",
    "phi": "microsoft",
    "command": "cohere",
    "grok": "xai",
    "smollm": "huggingface",
}


def family_of(model: str | None, families: Mapping[str, str]) -> str | None:
    """The family a model belongs to: a user's entry naming it (whole, or the start of its name,
    with or without its provider prefix), else the defaults by the start of its name."""
    if not model:
        return None
    name = model.strip().lower()
    bare = name.rsplit("/", 1)[-1]
    for table in (families, DEFAULT_FAMILIES):
        ordered = sorted(table.items(), key=lambda kv: -len(kv[0]))  # the longest prefix wins
        for key, fam in ordered:
            k = key.strip().lower()
            if name == k or bare == k:
                return fam
        for key, fam in ordered:
            k = key.strip().lower()
            if name.startswith(k) or bare.startswith(k):
                return fam
    return None


def parse_families(entries: list[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``NAME=FAMILY`` entries (a juror's or a model's name, or the start of one)."""
    if entries is None:
        return {}
    if isinstance(entries, Mapping):
        return {str(k): str(v) for k, v in entries.items()}
    out = {}
    for entry in entries:
        name, eq, fam = entry.partition("=")
        if not eq or not name.strip() or not fam.strip():
            raise JurybenchError(
                f"--family {entry!r}: expected NAME=FAMILY.", hint="e.g. --family sim/b=acme --family acme-7b=acme"
            )
        out[name.strip()] = fam.strip()
    return out


@dataclass
class Effect:
    """One feature's effect on one rater's score for one criterion."""

    rater: str
    criterion: str
    feature: str
    unit: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p: float
    df: int
    n: int
    n_clusters: int
    p_adjusted: float = math.nan
    significant: bool = False

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def cluster_ols(y: Array, x: Array, clusters: list[str], *, absorbed: bool) -> Fit | None:
    """Least squares of ``y`` on ``x`` (columns as given: add an intercept column yourself) with
    CR1 cluster-robust standard errors: (X'X)^-1 (sum_g X_g'u_g u_g'X_g) (X'X)^-1 times
    G/(G-1) * (N-1)/(N-K). ``absorbed``: ``y`` and ``x`` were centred within clusters (fixed
    effects nested in the clusters, which K does not count). None when it cannot be fitted (fewer
    than two clusters, no more rows than coefficients, or collinear columns)."""
    n, k = x.shape
    groups: dict[str, list[int]] = defaultdict(list)
    for row, g in enumerate(clusters):
        groups[g].append(row)
    g_count = len(groups)
    if g_count < 2 or n <= k:
        return None
    xtx = x.T @ x
    if np.linalg.matrix_rank(xtx) < k:
        return None
    bread = np.linalg.inv(xtx)
    beta = bread @ (x.T @ y)
    resid = y - x @ beta
    meat = np.zeros((k, k))
    for rows in groups.values():
        s = x[rows].T @ resid[rows]
        meat += np.outer(s, s)
    factor = g_count / (g_count - 1) * (n - 1) / (n - k)
    cov = factor * bread @ meat @ bread
    del absorbed  # the correction is the same: absorbed effects are not counted in K
    return Fit(beta, np.sqrt(np.clip(np.diag(cov), 0, None)), g_count - 1, n, g_count)


@dataclass
class Subject:
    """An item as the features see it."""

    item_id: str
    cluster: str
    text: str
    model: str | None
    language: str | None
    extra: dict[str, float] = field(default_factory=dict)  # meta.<field> and sql: features


def _jsonish_number(value: object, feature: str, item: str) -> float:
    """A feature's value on an item: a number, true/false as 1/0, missing (NaN) for none; an
    infinite one (a sum past a float's range, a huge whole number) is refused, as no finite effect
    per unit of it can be estimated."""
    from jurybench.errors import brief
    from jurybench.store import as_float

    if value is None:
        return math.nan
    if isinstance(value, bool):
        return float(value)
    text = value if isinstance(value, int | float) else str(value).strip().lower()
    if text in ("true", "false"):
        return 1.0 if text == "true" else 0.0
    try:
        number = as_float(text)
    except (TypeError, ValueError):
        raise JurybenchError(
            f"--feature {feature}: item {item!r} has {brief(value)}, not a number.",
            hint="A feature must be numeric or true/false; for a category use --feature sql:(<expr> = 'value').",
        ) from None
    if math.isinf(number):
        raise JurybenchError(
            f"--feature {feature}: item {item!r} has {brief(value)}, which is infinite as a number.",
            hint="Scale the feature down (e.g. divide it, or take its log) so that it is finite on every item.",
        )
    return number


RUN_ITEMS = "SELECT subject_id FROM run_subjects WHERE run_id = $run"
PAIR_ITEMS = (
    "SELECT item_a FROM pairs WHERE pair_id IN (SELECT subject_id FROM run_subjects WHERE run_id = $run) UNION "
    "SELECT item_b FROM pairs WHERE pair_id IN (SELECT subject_id FROM run_subjects WHERE run_id = $run)"
)


def read_subjects(
    con: Connection, run_id: str, *, where: str | None, cluster: str, extras: list[str], pairs: bool = False
) -> dict[str, Subject]:
    """The run's items with what the features read: text, responding model, language, the
    cluster (a SQL expression over the item's columns; default its prompt) and each ``meta.`` /
    ``sql:`` feature."""
    from jurybench.store import execute_user_sql, expression

    cluster_sql = expression(cluster, option="--cluster")
    where_sql = expression(where, option="--where") if where else "TRUE"
    extra_sql = []
    for name in extras:
        if name.startswith("meta."):
            key = name[5:]
            if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", key):
                raise JurybenchError(f"--feature {name!r}: a metadata field is letters, digits, '_', '.' or '-'.")
            extra_sql.append(f"json_extract_string(metadata, '$.\"{key}\"')")
        else:
            extra_sql.append(f"CAST(({expression(name[4:], option='--feature')}) AS VARCHAR)")
    columns = "".join(f", {e}" for e in extra_sql)
    sql = (
        f"SELECT item_id, CAST(({cluster_sql}) AS VARCHAR), response, model, language{columns} FROM items "
        f"WHERE item_id IN ({PAIR_ITEMS if pairs else RUN_ITEMS}) AND ({where_sql})"
    )
    hint = "--feature sql:, --where and --cluster take SQL over the items' columns (docs/schema.md)."
    rows = execute_user_sql(con, sql, {"run": run_id}, what="reading the run's items", hint=hint).fetchall()
    out = {}
    for item_id, grp, text, model, language, *values in rows:
        subject = Subject(str(item_id), str(grp if grp is not None else item_id), text or "", model, language)
        for name, value in zip(extras, values, strict=True):
            subject.extra[name] = _jsonish_number(value, name, str(item_id))
        out[subject.item_id] = subject
    return out


def read_scores(con: Connection, run_id: str) -> tuple[dict[tuple[str, str], dict[str, float]], dict[str, str]]:
    """(rater, criterion) -> item -> score: each juror's (mean of its valid samples) and the jury's
    (by the run's rule, subjects below quorum left out); and each juror's model."""
    scores: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    models = {}
    for juror, model, item, criterion, score in con.execute(
        "SELECT v.juror, ju.model, v.item_id, v.criterion, v.juror_score FROM juror_pointwise v "
        "JOIN jurors ju USING (juror_key) WHERE v.run_id = ? AND v.juror_score IS NOT NULL",
        [run_id],
    ).fetchall():
        scores[(str(juror), str(criterion))][str(item)] = float(score)
        models[str(juror)] = str(model)
    from jurybench.store import jury_calibration

    fitted = jury_calibration(con, run_id)  # a jury whose rule is a calibration: its own labels left out
    for item, criterion, score in con.execute(
        "SELECT item_id, criterion, jury_score FROM jury_pointwise WHERE run_id = ? AND jury_score IS NOT NULL "
        "AND NOT below_quorum",
        [run_id],
    ).fetchall():
        if fitted is None or not fitted.used(str(item), str(criterion)):
            scores[("jury", str(criterion))][str(item)] = float(score)
    return dict(scores), models


def read_humans(con: Connection, run_id: str) -> dict[str, Held]:
    """criterion -> the humans' mean label of each item, with the noise of each mean (its
    labels' variance over their number: stats/_held.py)."""
    rows: dict[str, list[tuple[str, float, int, float | None]]] = defaultdict(list)
    for item, criterion, mean, n, var in con.execute(
        "SELECT subject_id, criterion, avg(value), count(value), var_samp(value) FROM human_labels "
        "WHERE subject_kind = 'item' AND value IS NOT NULL "
        "AND subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?) GROUP BY ALL ORDER BY ALL",
        [run_id],
    ).fetchall():
        rows[str(criterion)].append((str(item), float(mean), int(n), None if var is None else float(var)))
    return {criterion: held_labels(listed) for criterion, listed in rows.items()}


@dataclass
class Design:
    """The features' columns for one rater: names, units and a row per item."""

    names: list[str]
    units: list[str]
    rows: dict[str, list[float]]


def base_values(subjects: Mapping[str, Subject], features: list[str], languages: list[str]) -> dict[str, list[float]]:
    """Each item's values of the features every rater shares (all but ``self``), read once: text
    counts, one column per language but the reference, the user's ``meta.`` / ``sql:`` values."""
    rows = {}
    for item, s in subjects.items():
        values: list[float] = []
        for f in features:
            if f == "language":
                values.extend(1.0 if s.language == lang else 0.0 for lang in languages[1:])
            elif f in TEXT_FEATURES:
                values.append(float(TEXT_FEATURES[f].count(s.text)))
            elif f != "self":
                values.append(s.extra[f])
        rows[item] = values
    return rows


def user_unit(feature: str, binary: bool) -> str:
    """How an effect of a user's feature reads: per unit, or, for a yes/no one, where it holds."""
    if not binary:
        return f"per unit of {feature}"
    return f"where {feature[4:]}" if feature.startswith("sql:") else f"where {feature} is true"


def design(
    base: Mapping[str, list[float]],
    features: list[str],
    *,
    rater_family: Callable[[str], float] | None,
    languages: list[str],
    own_unit: str = "",
    binary: frozenset[str] = frozenset(),
) -> Design:
    """One rater's design: the shared columns (:func:`base_values`) and, when the rater has a
    family, ``self`` last (the responding model of the rater's family; for the jury, of the
    family of one of its jurors)."""
    names: list[str] = []
    units: list[str] = []
    for f in features:
        if f == "language":
            names += [f"language={lang}" for lang in languages[1:]]
            units += [f"on {lang} responses than on {languages[0]} ones" for lang in languages[1:]]
        elif f != "self":
            names.append(f)
            units.append(TEXT_FEATURES[f].unit if f in TEXT_FEATURES else user_unit(f, f in binary))
    if rater_family is None:
        return Design(names, units, dict(base))
    own_unit = own_unit or OWN
    return Design(
        [*names, "self"],
        [*units, own_unit],
        {item: [*values, rater_family(item)] for item, values in base.items()},
    )


def centred_within(values: Array, clusters: list[str]) -> Array:
    """Each column minus its cluster's mean (prompt fixed effects, absorbed)."""
    out = values.copy()
    index: dict[str, list[int]] = defaultdict(list)
    for row, g in enumerate(clusters):
        index[g].append(row)
    for rows in index.values():
        out[rows] -= values[rows].mean(axis=0)
    return out


FEW_CLUSTERS = 10


def clusters_departing(column: Array, clusters: list[str]) -> int:
    """How many clusters hold a row whose value is not the column's most common one."""
    values, counts = np.unique(np.round(column, 12), return_counts=True)
    usual = values[int(np.argmax(counts))]
    return len({g for g, v in zip(clusters, np.round(column, 12), strict=True) if v != usual})


DOMINATED = 0.25  # one subject's share of a feature's spread above which an effect rests on few


def dominated(names: list[str], x: Array) -> str | None:
    """A note naming the features one subject dominates: its squared deviation from the
    feature's mean is over a quarter of the feature's whole (a response of 112 list items among
    ones of two or three). An effect per unit then rests on a handful of subjects, and its
    cluster-robust interval is not to be trusted (MacKinnon and Webb 2017 on few clusters
    carrying the variation; the same holds for few subjects)."""
    shares = []
    for name, column in zip(names, x.T, strict=True):
        deviation = (column - column.mean()) ** 2
        total = float(deviation.sum())
        if total > 0 and float(deviation.max()) / total > DOMINATED:
            shares.append(f"{name} (one subject holds {float(deviation.max()) / total:.0%} of its spread)")
    if not shares:
        return None
    return (
        f"{', '.join(shares)}: a few subjects carry the feature, so its effect rests on them and its interval is "
        "not to be trusted: read it with care, or leave those subjects out (--where)"
    )


def independent_columns(x: Array, columns: list[int], *, base: list[Array]) -> tuple[list[int], list[int]]:
    """The columns, in order, that are not a linear combination of those kept before them (and
    of the ``base`` columns: the intercept, the human mean); and those that are."""
    kept: list[int] = []
    tied: list[int] = []
    basis = list(base)
    for j in columns:
        trial = np.column_stack([*basis, x[:, j]])
        scale = np.linalg.norm(trial, axis=0)
        if np.linalg.matrix_rank(trial / np.where(scale > 0, scale, 1), tol=1e-9) == trial.shape[1]:
            kept.append(j)
            basis.append(x[:, j])
        else:
            tied.append(j)
    return kept, tied


def fit_effects(
    rater: str,
    criterion: str,
    scores: Mapping[str, float],
    humans: Held | None,
    d: Design,
    subjects: Mapping[str, Subject],
    level: float,
) -> tuple[list[Effect], list[str]]:
    """The features' joint effects on one rater's score, holding the humans' verdict fixed when
    ``humans`` is given (stats/_held.py: the rater's score on the features and on the humans'
    mean, corrected for the annotators' noise), else within prompts; with notes on features left
    out."""

    # in id order: the sums (and so the last digits) do not depend on the order rows were stored in
    items = sorted(i for i in scores if i in d.rows and (humans is None or i in humans))
    items = [i for i in items if not any(math.isnan(v) for v in d.rows[i])]
    notes: list[str] = []
    if not items:
        return [], notes
    y = np.array([scores[i] for i in items])
    x = np.array([d.rows[i] for i in items], dtype=float).reshape(len(items), len(d.names))
    clusters = [subjects[i].cluster for i in items]
    if humans is None:
        y, x = centred_within(y[:, None], clusters)[:, 0], centred_within(x, clusters)
    keep = [j for j in range(x.shape[1]) if np.ptp(x[:, j]) > 1e-12]
    dropped = [d.names[j] for j in range(x.shape[1]) if j not in keep]
    if dropped:
        where = "within prompts" if humans is None else "over the labelled items"
        notes.append(f"{', '.join(dropped)}: constant {where}; left out")
    controls, noisy, noise = (truth_columns(humans, items)[:3]) if humans is not None else ([], None, None)
    keep, tied = independent_columns(x, keep, base=controls)
    if tied:
        notes.append(
            f"{', '.join(d.names[j] for j in tied)}: a combination of the features named before it on these items "
            "(their effects cannot be told apart); left out"
        )
    x = x[:, keep]
    names, units = [d.names[j] for j in keep], [d.units[j] for j in keep]
    few = [n for n, column in zip(names, x.T, strict=True) if clusters_departing(column, clusters) < FEW_CLUSTERS]
    if (heavy := dominated(names, x)) is not None:
        notes.append(heavy)
    if few:
        notes.append(
            f"{', '.join(few)}: departs from its usual value in fewer than {FEW_CLUSTERS} clusters; a cluster-robust "
            "interval is then too narrow (MacKinnon and Webb 2017): read it with care"
        )
    if controls:  # the rater's leniency, and the humans' verdict it is held at
        x = np.column_stack([*controls, x])
    if not names:
        fit = None
    elif humans is None:
        fit = cluster_ols(y, x, clusters, absorbed=True)
    else:
        assert noise is not None
        fit = held_ols(y, x, clusters, noisy, noise)
    if fit is None:
        if names:
            notes.append(
                f"too few items or prompts to fit ({len(items)} items), or the humans' labels too noisy to hold fixed; left out"
            )
        return [], notes
    offset = len(controls)
    return [
        effect_of(fit, j + offset, rater, criterion, name, unit, level)
        for j, (name, unit) in enumerate(zip(names, units, strict=True))
    ], notes


def effect_of(fit: Fit, column: int, rater: str, criterion: str, feature: str, unit: str, level: float) -> Effect:
    """One coefficient of a fit as an effect: its interval at ``level`` and two-sided p-value,
    from Student's t on the fit's degrees of freedom (clusters - 1)."""
    from scipy import stats as st

    b, se = float(fit.beta[column]), float(fit.se[column])
    t = b / se if se > 0 else (math.inf if b else 0.0)
    p = float(2 * st.t.sf(abs(t), fit.df)) if math.isfinite(t) else 0.0
    half = float(st.t.ppf(0.5 + level / 2, fit.df)) * se
    return Effect(rater, criterion, feature, unit, b, se, b - half, b + half, p, fit.df, fit.n, fit.n_clusters)


def fitted_as(against: str, labelled: Held, run_id: str, dimension: str) -> str:
    """How a criterion (or category) is fitted: against the humans (``--against humans``, or
    ``auto`` with ten labelled subjects) or without them; one line when humans are asked for and
    there are none."""
    if against == "humans" and not labelled:
        raise JurybenchError(
            f"--against humans: run '{run_id}' has no human labels on {dimension!r}.",
            hint="Import them (jurybench annotations import), or use --against prompts.",
        )
    return "humans" if against == "humans" or (against == "auto" and len(labelled) >= 10) else "prompts"


def bias_effects(
    scores: Mapping[str, float],
    features: Mapping[str, list[float]],
    names: list[str],
    clusters: Mapping[str, str],
    *,
    humans: Held | Mapping[str, float] | None,
    level: float = 0.95,
) -> list[Effect]:
    """The joint effects of the named features on one rater's scores (subject -> score), fitted
    as ``stats bias`` fits each rater: holding ``humans`` fixed (a :class:`Held`, or subject ->
    their mean taken as exact), or within clusters when ``humans`` is None; cluster-robust,
    unadjusted."""
    subjects = {i: Subject(i, clusters[i], "", None, None) for i in features}
    design_ = Design(list(names), [""] * len(names), dict(features))
    held = humans if isinstance(humans, Held) or humans is None else exact(humans)
    return fit_effects("rater", "criterion", scores, held, design_, subjects, level)[0]


def reading(e: Effect, against: str, correction: str) -> str:
    """One plain line: 'sim/b scores 0.31 [0.22, 0.40] higher per 100 tokens, with the humans' verdict held fixed'."""
    direction = "higher" if e.estimate >= 0 else "lower"
    low, high = (e.ci_low, e.ci_high) if e.estimate >= 0 else (-e.ci_high, -e.ci_low)
    size = f"{abs(e.estimate):.2f} [{low:.2f}, {high:.2f}]"
    tail = f"({e.criterion}; {correction}-adjusted p {e.p_adjusted:.3g})"
    if against == "humans":
        return f"{e.rater} scores {size} {direction} {e.unit}, with the humans' verdict held fixed {tail}"
    return (
        f"{e.rater} scores {size} {direction} {e.unit}, against other responses to the same prompt {tail}; "
        "without human labels this may be quality rather than bias"
    )


def _whom(who: Mapping[str, set[str]], raters: list[str], criteria: list[str]) -> str:
    """' (sim/b, jury; every criterion)': whom a note is about."""
    named = [r for r in raters if r in who["raters"]]
    crit = [c for c in criteria if c in who["criteria"]]
    by = "every rater" if len(named) == len(raters) else ", ".join(named)
    on = "every criterion" if len(crit) == len(criteria) else ", ".join(crit)
    return f" ({by}; {on})"


def item_families(subjects: Mapping[str, Subject], families: Mapping[str, str]) -> dict[str, str | None]:
    return {i: family_of(s.model, families) for i, s in subjects.items()}
