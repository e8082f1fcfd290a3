"""ppi: what the humans would have said, from a few human labels and the jury on everything
(prediction-powered inference, PPI++): each criterion's bias-corrected mean with its interval,
beside the labels alone and the jury alone; or, with ``plan``, how many labels reach a width."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.params import Connection

if TYPE_CHECKING:
    from jurybench.rubric import AnyRubric

COLUMNS = [
    "criterion",
    "slice",
    "estimate",
    "ci_low",
    "ci_high",
    "lambda",
    "n_labelled",
    "n_subjects",
    "human_only",
    "human_low",
    "human_high",
    "jury_only",
    "jury_low",
    "jury_high",
    "predictor",
]
MIN_LABELS = 10  # below it a slice's interval is printed with a warning (make validity checks from here up)
MIN_CLUSTERS = (
    10  # the same for labelled clusters under --cluster (make validity: 92.8 % at 5 HANNA-like, 93-97 % from 10)
)
PLAN_COLUMNS = ["criterion", "slice", "width", "lambda", "labels_with_jury", "labels_without_jury", "n_labelled"]


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    columns = PLAN_COLUMNS if result.get("plan") else COLUMNS
    return list(columns), [[row.get(c) for c in columns] for row in result["rows"]]


@statistic("ppi", table=table)
def ppi(
    con: Connection,
    run: params.Run,
    *,
    criterion: Annotated[
        str | None, param("The criterion (or category); default every one.", http={"max_length": 128})
    ] = None,
    sample: Annotated[
        str | None,
        param("The label sample (annotations sample --name); default the run's newest.", http={"max_length": 256}),
    ] = None,
    by: Annotated[
        str | None,
        param(
            "Slices: model, language, dataset or meta.<field> (of the item, or of response A); intervals "
            "Bonferroni-corrected over the slices.",
            http={"max_length": 200},
        ),
    ] = None,
    alpha: Annotated[float, param("1 - the intervals' level.", number="alpha")] = 0.05,
    plan: Annotated[
        bool, param("Plan: how many labels reach --width with this jury, and without it.", flag=True)
    ] = False,
    width: Annotated[
        float | None,
        param("--plan: the interval width wanted (total, in the score's units).", number="amount", http={"gt": 0}),
    ] = None,
    cluster: Annotated[
        str | None,
        param(
            "prompt, model, language, dataset or meta.<field>: subjects of one cluster are not independent; "
            "intervals from the clusters' totals (default: the sample's own clusters, if it drew whole ones).",
            http={"max_length": 200},
        ),
    ] = None,
    compare: Annotated[
        str | None,
        param(
            "Two slices of --by, FIRST,SECOND: their corrected difference (FIRST - SECOND) with its interval "
            "(the slices' subjects are disjoint, so their estimates are independent).",
            http={"max_length": 300},
        ),
    ] = None,
    paired: Annotated[
        bool,
        param(
            "With --compare and --cluster: the difference within each cluster (a prompt answered by both), "
            "corrected over the clusters as units.",
            flag=True,
        ),
    ] = False,
) -> dict[str, object]:
    """Bias-corrected means of the humans' labels from a random sample of labelled subjects and
    the jury's (calibrated, when a calibration is applied) scores on every subject (PPI++)."""
    import numpy as np

    from jurybench.annotations import label_provenance, run_rubric
    from jurybench.errors import JurybenchError
    from jurybench.stats import _ppi

    if plan and width is None:
        raise JurybenchError("--plan needs --width (the interval width wanted).")
    pair = [part.strip() for part in compare.split(",")] if compare else []
    if compare is not None and (by is None or len(pair) != 2 or plan):
        raise JurybenchError("--compare FIRST,SECOND names two slices of --by (and goes without --plan).")
    if paired and not compare:
        raise JurybenchError("--paired goes with --compare FIRST,SECOND.")
    rubric = run_rubric(con, run)
    dims = rubric.dimensions if criterion is None else [criterion]
    if criterion is not None and criterion not in rubric.dimensions:
        raise JurybenchError(
            f"{criterion!r} is not a criterion of rubric '{rubric.name}'.",
            hint=f"Valid: {', '.join(rubric.dimensions)}.",
        )
    drawn, design, sample = _sample(con, run, sample)
    if cluster is None and design.startswith("cluster:"):
        cluster = design.split(":", 1)[1]
    if cluster is not None and design == "active":
        raise JurybenchError("--cluster goes with uniform and cluster samples, not active ones.")
    scores, source, set_aside = _jury_scores(con, rubric, run, drawn, dims)
    groups = _slices(con, rubric, cluster, [s for s, _, _ in scores]) if cluster else {}
    if paired and not cluster:
        raise JurybenchError("--paired needs the unit that pairs the slices.", hint="Pass --cluster prompt.")
    labels = _labels(con, rubric, drawn, dims)
    _refuse_used_labels(con, run, sample, drawn, dims)
    slices = _slices(con, rubric, by, [s for s, _, _ in scores]) if by else {}
    names = sorted(set(slices.values())) if by else [""]
    level = alpha / len(names)  # Bonferroni over the slices: every interval holds at once
    rows = []
    warnings: list[str] = [set_aside] if set_aside else []
    for dim in dims:
        missing = [s for s in drawn if (s, dim) not in labels]
        if missing:
            raise JurybenchError(
                f"{len(missing)} of the {len(drawn)} subjects drawn in sample {sample!r} have no human label of "
                f"{dim!r} (first: {missing[0]}).",
                hint="Label them (view --annotate serves the run's queue), or name a criterion with --criterion.",
            )
        for name in names:
            members = {s: v for s, d, v in scores if d == dim and (not by or slices.get(s) == name)}
            picked = [s for s in drawn if s in members]
            if len(picked) < 2 or len(members) < 3:
                raise JurybenchError(
                    f"slice {name!r} of {dim!r}: {len(picked)} labelled subject(s); PPI needs 2 and more."
                )
            y = np.array([labels[(s, dim)] for s in picked])
            f_lab = np.array([members[s] for s in picked])
            f_all = np.array(list(members.values()))
            labelled = set(picked)
            unlabelled = [s for s in members if s not in labelled]
            f_unl = np.array([members[s] for s in unlabelled])
            where = f"{dim!r}" + (f", slice {name!r}" if name else "")
            warnings += _few_labels(where, y, plan)
            scale = rubric.scale_for(dim)
            if plan:
                assert width is not None
                out = _ppi.labels_needed(width, y, f_lab, f_all, alpha=level)
                if out["label_everything"]:
                    warnings.append(
                        f"{where}: a width of {width:g} needs every one of its {len(f_all)} subjects labelled "
                        "(cheaper than any sample: then the humans' mean is known, with no interval)."
                    )
            elif design in ("active", "stratified"):  # unequal inclusion probabilities: weighted by 1 / pi
                chances = np.array([drawn[s] for s in picked])
                pseudo = _ppi.small_sample_c(design, votes=rubric.votes)
                out = _ppi.ppi_mean_weighted(y, f_lab, chances, f_all, alpha=level, scale=scale, pseudo=pseudo)
            else:
                clusters = ([groups[s] for s in picked], [groups[s] for s in unlabelled]) if cluster else None
                out = _uniform(y, f_lab, f_unl, level, clusters, scale, rubric.votes)
                warnings += _few_clusters(where, clusters[0]) if clusters is not None else []
            if not plan:
                warnings += _finish(out, y, scale, level, rubric.votes, where)
            rows.append(
                {"criterion": dim, "slice": name or None, "n_labelled": len(picked), **out, "predictor": source}
            )
        if pair and paired:
            cells = _Cells(scores, labels, drawn, slices, groups)
            rows.append(_paired_difference(cells, dim, pair, alpha, rubric.scale_for(dim)))
        elif pair:
            rows.append(_difference(rows, dim, pair, alpha))
    return {
        "rows": rows,
        "warnings": warnings,
        "sample": sample,
        "design": design,
        "predictor": source,
        "cluster": cluster,
        "alpha": alpha,
        "plan": plan,
        "labels": label_provenance(con, run),
        "method": "PPI++ (Angelopoulos, Duchi & Zrnic 2023): the labels' mean corrected by the jury on every "
        "subject, lambda tuned; inverse-probability weighted for active samples",
    }


def _few_labels(where: str, y: Any, plan: bool) -> list[str]:
    """A slice's warning when it has fewer than MIN_LABELS labels; a plan from labels that do not
    vary is refused (their spread, which it needs, is unknown)."""
    from jurybench.errors import JurybenchError

    if plan and min(y) == max(y):
        raise JurybenchError(
            f"--plan: the {len(y)} labels of {where} are all {y[0]:g}, so their spread, which the plan needs, "
            "cannot be estimated.",
            hint=f"Label more subjects drawn at random (at least {MIN_LABELS}) before planning.",
        )
    if len(y) < MIN_LABELS and not plan:
        return [
            f"{where}: {len(y)} labels, fewer than {MIN_LABELS}: an interval from so few labels is a rough "
            "approximation whose level is not assured (it may be too narrow); label more."
        ]
    return []


def _uniform(
    y: Any,
    f_lab: Any,
    f_unl: Any,
    level: float,
    clusters: tuple[list[Any], list[Any]] | None,
    scale: tuple[int, int] | None,
    votes: bool,
) -> dict[str, Any]:
    """A uniform (or whole-cluster) sample's figure: PPI++ with the small-sample pseudo-labels
    (heavier for votes), from the clusters' totals when ``clusters`` gives them."""
    import numpy as np

    from jurybench.stats import _ppi

    return _ppi.ppi_mean(
        y,
        f_lab,
        f_unl,
        alpha=level,
        clusters=(np.array(clusters[0]), np.array(clusters[1])) if clusters is not None else None,
        scale=scale,
        pseudo=_ppi.small_sample_c("uniform", votes=votes),
        cluster_pseudo=_ppi.small_sample_c("clusters", votes=votes),
    )


def _finish(
    out: dict[str, Any], y: Any, scale: tuple[int, int] | None, level: float, votes: bool, where: str
) -> list[str]:
    """A figure's last touches, in place, and its warnings: labels that all agree take the exact
    interval for equal bounded labels; votes (+1 A, -1 B, 0 tie) add A's win rate, (mean + 1) / 2."""
    import numpy as np

    from jurybench.stats import _ppi

    warnings = []
    if np.ptp(y) == 0 and scale is not None:
        exact = _ppi.all_alike(y, *scale, alpha=level)
        out |= {k: exact[k] for k in ("estimate", "ci_low", "ci_high", "se", "lambda")}
        out |= {"human_low": exact["ci_low"], "human_high": exact["ci_high"]}
        warnings.append(f"{where}: {exact['method_note']} (a plug-in interval would have width zero).")
    width, alone = out["ci_high"] - out["ci_low"], out.get("human_high", math.nan) - out.get("human_low", math.nan)
    if math.isfinite(alone) and alone > 0 and width / alone >= 0.98 and np.ptp(y) > 0:
        warnings.append(
            f"{where}: the jury narrows nothing here (its interval is {width / alone:.2f} of the labels alone's, "
            f"lambda {out['lambda']:.2f}): its scores follow the labels too loosely, or, under --cluster, its errors move "
            "with the clusters' own, to pay for what it adds at this number of labels (or clusters)."
        )
    if out.get("clipped_to_scale") and scale is not None:
        warnings.append(
            f"{where}: an interval reached past the scale's ends and is cut to {scale[0]:g}..{scale[1]:g} (the humans' "
            "mean lies within them); so wide an interval says the labels are too few to place it."
        )
    if votes:
        out |= {f"win_{k}": (out[v] + 1) / 2 for k, v in (("rate", "estimate"), ("low", "ci_low"), ("high", "ci_high"))}
    return warnings


def _few_clusters(where: str, labelled: Any) -> list[str]:
    """A clustered slice's warning when fewer than MIN_CLUSTERS clusters carry its labels (the
    fewest ``make validity`` checks the clustered interval at)."""
    count = len({str(c) for c in labelled})
    if count >= MIN_CLUSTERS:
        return []
    return [
        f"{where}: its labels come from {count} cluster(s), fewer than {MIN_CLUSTERS}: the interval's level is "
        "not assured with so few (clusters, not labels, are what count); label more clusters."
    ]


def _difference(rows: list[dict[str, object]], dim: str, pair: list[str], alpha: float) -> dict[str, object]:
    """FIRST - SECOND of two slices' corrected estimates (:func:`slice_difference`)."""
    from jurybench.errors import JurybenchError
    from jurybench.stats import _ppi

    found = {r["slice"]: r for r in rows if r["criterion"] == dim and r.get("slice") in pair}
    if len(found) != 2:
        raise JurybenchError(f"--compare: {', '.join(p for p in pair if p not in found)} is not a slice of --by.")
    return {
        "criterion": dim,
        "slice": f"{pair[0]} - {pair[1]}",
        **_ppi.slice_difference(found[pair[0]], found[pair[1]], alpha=alpha),
    }


class _Cells:
    """Scores and labels by cluster and slice, for a paired difference."""

    def __init__(
        self,
        scores: list[tuple[str, str, float]],
        labels: dict[tuple[str, str], float],
        drawn: dict[str, float],
        slices: dict[str, str],
        groups: dict[str, str],
    ) -> None:
        self.scores, self.labels, self.drawn, self.slices, self.groups = scores, labels, drawn, slices, groups

    def means(self, dim: str, pair: list[str], labelled: bool) -> dict[str, float]:
        """Each cluster's mean of the first slice less the second's (jury, or the labels)."""
        cells: dict[tuple[str, str], list[float]] = {}
        for s, d, v in self.scores:
            if d != dim or self.slices.get(s) not in pair:
                continue
            if labelled:
                if s not in self.drawn or (s, dim) not in self.labels:
                    continue
                v = self.labels[(s, dim)]
            cells.setdefault((self.groups[s], self.slices[s]), []).append(v)
        out = {}
        for c in {c for c, _ in cells}:
            first, second = cells.get((c, pair[0])), cells.get((c, pair[1]))
            if first and second:
                out[c] = sum(first) / len(first) - sum(second) / len(second)
        return out


def _paired_difference(
    cells: _Cells, dim: str, pair: list[str], alpha: float, scale: tuple[int, int] | None
) -> dict[str, object]:
    """FIRST - SECOND within each cluster answered by both, corrected over the clusters as the
    units (PPI++ on the clusters' differences: the labelled ones and all)."""
    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats import _ppi

    jury = cells.means(dim, pair, labelled=False)
    humans = cells.means(dim, pair, labelled=True)
    both = sorted(c for c in humans if c in jury)
    if len(both) < 2:
        raise JurybenchError(
            f"--paired: {len(both)} labelled cluster(s) have both {pair[0]} and {pair[1]}; PPI needs 2."
        )
    out = _ppi.ppi_mean(
        np.array([humans[c] for c in both]),
        np.array([jury[c] for c in both]),
        np.array([v for c, v in jury.items() if c not in humans]),  # the clusters not labelled
        alpha=alpha,
        scale=(scale[0] - scale[1], scale[1] - scale[0]) if scale else None,
    )
    return {"criterion": dim, "slice": f"{pair[0]} - {pair[1]} (paired)", **out}


def _sample(con: Connection, run: str, name: str | None) -> tuple[dict[str, float], str, str]:
    """The sample's drawn subjects with their inclusion probabilities, its design and name."""
    from jurybench.errors import JurybenchError

    if name is None:
        from jurybench.annotations import newest_sample

        name = newest_sample(con, run)
        if name is None:
            raise JurybenchError(
                f"run '{run}' has no label sample: stats ppi needs labels on subjects drawn at random, with their "
                "chance of being drawn recorded.",
                hint=f"Draw them with 'jurybench annotations sample --run {run} --n N', then label those.",
            )
    rows = con.execute(
        "SELECT subject_id, probability, design FROM label_samples WHERE sample = ? AND run_id = ? ORDER BY 1",
        [name, run],
    ).fetchall()
    if not rows:
        raise JurybenchError(
            f"no label sample {name!r} of run '{run}'.", hint="See: SELECT DISTINCT sample FROM label_samples."
        )
    return {str(s): float(p) for s, p, _ in rows}, str(rows[0][2]), name


def _jury_scores(
    con: Connection, rubric: AnyRubric, run: str, drawn: dict[str, float], dims: list[str]
) -> tuple[list[tuple[str, str, float]], str, str | None]:
    """(subject, dimension, score) for every judged subject, the predictor's name, and why a
    calibrated one was set aside. The predictor is the calibration applied to the run last when
    there is one, else the jury's score by its rule; but PPI's correction holds only for a
    predictor that does not depend on the labelled sample, so a calibration fitted on any of the
    sample's labels (or one whose file does not say which it was fitted on) is set aside for the
    jury's score, and a jury whose rule is such a calibration for the mean of its jurors."""
    from jurybench.store import applied_calibration, jury_calibration

    def overlap(fitted: Any) -> int:
        return sum(1 for subject in drawn for dim in dims if fitted.used(subject, dim))

    key = rubric.subject_column
    notes = []
    applied = applied_calibration(con, run) if rubric.subject_table == "items" else None
    if applied is not None:
        clash = overlap(applied)
        if not clash:
            calibrated = con.execute(
                "SELECT item_id, criterion, score FROM calibrated_items WHERE run_id = ? AND calibration_id = ? "
                "AND score IS NOT NULL ORDER BY 1, 2",
                [run, applied.calibration_id],
            ).fetchall()
            return [(str(s), str(d), float(v)) for s, d, v in calibrated], f"calibrated jury ({applied.name})", None
        notes.append(applied.why(clash, "of the sample's labels"))
    column, source = "jury_score", "jury"
    rule = jury_calibration(con, run)
    if rule is not None and (clash := overlap(rule)):
        notes.append(rule.why(clash, "of the sample's labels") + ", and the jury's rule is that calibration")
        column, source = "jury_mean", "jury (mean of its jurors, uncalibrated)"
    rows = con.execute(
        f"SELECT {key}, {rubric.dimension_column}, {column} FROM {rubric.jury_view} "
        f"WHERE run_id = ? AND {column} IS NOT NULL ORDER BY 1, 2",  # a defined order: sums in it
        [run],
    ).fetchall()
    note = None
    if notes:
        note = (
            f"predictor: {source}, not the calibrated jury: {'; '.join(notes)}. PPI's correction assumes a "
            "predictor that does not depend on the labelled sample; refit the calibration on other labels to use it."
        )
    return [(str(s), str(d), float(v)) for s, d, v in rows], source, note


def _check_scale(rubric: AnyRubric, dim: str, labels: dict[tuple[str, str], tuple[float, float]]) -> None:
    """Refuse labels of ``dim`` outside the run's scale: labels recorded with another rubric that
    names a criterion the same (a 1..10 rubric's beside a 1..5 run) must not be averaged in."""
    from jurybench.errors import JurybenchError

    scale = rubric.scale_for(dim)
    if scale is None:
        return
    outside = sorted(
        (s, v) for (s, d), extremes in labels.items() if d == dim for v in extremes if not scale[0] <= v <= scale[1]
    )
    if outside:
        raise JurybenchError(
            f"{len(outside)} human label(s) of {dim!r} lie outside the run's scale {scale[0]}..{scale[1]} (first: "
            f"subject {outside[0][0]}, a label of {outside[0][1]:g}): labels recorded on another rubric's scale.",
            hint="Keep one scale per criterion name: delete those labels, or import them under another criterion name.",
        )


def _refuse_used_labels(con: Connection, run: str, sample: str, drawn: dict[str, float], dims: list[str]) -> None:
    """A sample whose labels aligned the run's rubric (jurybench align) would measure the aligned
    juror on the labels that made it: refused, in one line."""
    from jurybench.errors import JurybenchError
    from jurybench.store import used_labels

    uses = used_labels(con, run)
    clash = sorted({s for s in drawn for d in dims if uses.used(s, d)})
    if clash:
        raise JurybenchError(
            f"{len(clash)} of the {len(drawn)} subjects of sample {sample!r} (first: {clash[0]}) have labels that "
            f"aligned the rubric run '{run}' was judged with (alignment {', '.join(uses.alignments)}); an estimate "
            "on them would count them twice.",
            hint="Draw a new sample (jurybench annotations sample) of subjects the alignment did not use, and label it.",
        )


def _labels(
    con: Connection, rubric: AnyRubric, drawn: dict[str, float], dims: list[str]
) -> dict[tuple[str, str], float]:
    """The humans' mean label of each drawn subject and dimension (every label of ``dims`` on
    the run's scale)."""
    import pyarrow as pa

    from jurybench.store import registered

    with registered(con, "_jb_ppi_drawn", pa.table({"id": pa.array(list(drawn), pa.string())})):
        rows = con.execute(
            "SELECT subject_id, criterion, avg(value), min(value), max(value) FROM human_labels WHERE subject_kind = ? "
            "AND value IS NOT NULL AND subject_id IN (SELECT id FROM _jb_ppi_drawn) GROUP BY 1, 2 ORDER BY 1, 2",
            [rubric.subject_kind],
        ).fetchall()
    for dim in dims:
        _check_scale(rubric, dim, {(str(s), str(c)): (lo, hi) for s, c, _, lo, hi in rows})
    return {(str(s), str(c)): float(v) for s, c, v, _, _ in rows}


def _slices(con: Connection, rubric: AnyRubric, by: str, subjects: list[str]) -> dict[str, str]:
    from jurybench.annotations import strata_of

    return strata_of(con, rubric, sorted(set(subjects)), by)
