"""Agreement reports over the store: humans among themselves, jurors and the jury against humans."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from jurybench.annotations._agreement import (
    bootstrap,
    fleiss_kappa,
    krippendorff_alpha,
    leave_one_annotator_out,
    mean_pairwise_quadratic_kappa,
    mean_pairwise_spearman,
    pearson,
    score_agreement,
)
from jurybench.annotations._data import PointwiseData, pointwise_data

if TYPE_CHECKING:
    from collections.abc import Callable

    from duckdb import DuckDBPyConnection as Connection


Index = NDArray[np.int_]  # rows drawn by a bootstrap round


MIN_SHARED = 10  # items labelled by two or more annotators the annotators' agreement needs


def _mean_defined(values: list[float]) -> float:
    """The mean of the values that are defined; NaN (and no warning) when none is."""
    defined = [v for v in values if not np.isnan(v)]
    return float(np.mean(defined)) if defined else float("nan")


def criterion_agreement(data: PointwiseData, *, n_boot: int = 1000, seed: int = 0) -> dict[str, object]:
    """Human reliability, the human ceiling, and each juror and the jury against the human mean."""
    human, target = data.human, data.human_mean
    n = len(data.items)
    shared = int(np.sum(np.sum(~np.isnan(human), axis=1) >= 2)) if human.size else 0
    warnings = []
    if len(data.annotators) > 1 and shared < MIN_SHARED:
        # One item labelled twice gave alpha 0.000 [-0.667, 0.000], kappa -1 and NaN rows.
        warnings.append(
            f"{data.criterion}: {shared} item(s) labelled by two or more annotators, fewer than {MIN_SHARED}: the "
            "annotators' agreement and the human ceiling are not estimated from so few (label more items twice)."
        )
    humans: dict[str, object] | None = {
        "alpha_interval": bootstrap(
            lambda idx: krippendorff_alpha(human[idx], "interval"), n, n_boot=n_boot, seed=seed
        ),
        "alpha_ordinal": bootstrap(lambda idx: krippendorff_alpha(human[idx], "ordinal"), n, n_boot=n_boot, seed=seed),
        "fleiss_kappa": bootstrap(lambda idx: fleiss_kappa(human[idx]), n, n_boot=n_boot, seed=seed),
        "mean_pairwise_spearman": bootstrap(
            lambda idx: mean_pairwise_spearman(human[idx]), n, n_boot=min(n_boot, 200), seed=seed
        ),
        "mean_pairwise_quadratic_kappa": bootstrap(
            lambda idx: mean_pairwise_quadratic_kappa(human[idx]), n, n_boot=min(n_boot, 200), seed=seed
        ),
    }
    # one annotator has no 'rest' to be held against: no ceiling, said as 'needs two annotators'
    ceiling = leave_one_annotator_out(human) if not warnings and len(data.annotators) > 1 else []
    ceiling_mean = {k: _mean_defined([c[k] for c in ceiling]) for k in ceiling[0]} if ceiling else {}
    if warnings:
        humans = None
    jury = data.jury  # the run's jury rule, NaN below quorum

    def pearson_of(scores: NDArray[np.float64]) -> Callable[[Index], float]:
        return lambda idx: pearson(scores[idx], target[idx])

    def jury_gain_over(scores: NDArray[np.float64]) -> Callable[[Index], float]:
        return lambda idx: pearson(jury[idx], target[idx]) - pearson(scores[idx], target[idx])

    rows: list[dict[str, Any]] = []
    for j, name in enumerate(data.jurors):
        scores = data.juror_scores[:, j]
        metrics: dict[str, object] = dict(score_agreement(scores, target))
        # The same seed gives every juror the same resamples, so the differences are paired.
        metrics["pearson_ci"] = bootstrap(pearson_of(scores), n, n_boot=n_boot, seed=seed)
        metrics["jury_minus_juror_pearson"] = bootstrap(jury_gain_over(scores), n, n_boot=n_boot, seed=seed)
        metrics["n_missing"] = float(np.isnan(scores).sum())
        # a juror with no valid score on any labelled item: every figure is undefined, said as such
        rows.append({"juror": name, **metrics, "no_valid_answers": bool(np.isnan(scores).all())})
    jury_metrics: dict[str, object] = dict(score_agreement(jury, target))
    jury_metrics["pearson_ci"] = bootstrap(pearson_of(jury), n, n_boot=n_boot, seed=seed)
    ranked = [r for r in rows if not np.isnan(float(r["pearson"]))]
    best = max(ranked, key=lambda r: float(r["pearson"])) if ranked else None
    return {
        "criterion": data.criterion,
        "n_items": n,
        "n_annotators": len(data.annotators),
        "humans": humans,
        "n_shared": shared,
        "human_ceiling": {"per_annotator": dict(zip(data.annotators, ceiling, strict=False)), "mean": ceiling_mean},
        "jurors": rows,
        "jury": {"juror": f"jury ({data.rule['aggregation']})", **jury_metrics},
        "jury_rule": data.jury_summary(),
        "best_juror": best["juror"] if best else None,
        "jury_beats_best_juror": (bool(best["jury_minus_juror_pearson"].low > 0) if best is not None else False),
        "warnings": warnings,
    }


def agreement_report(
    con: Connection,
    run_id: str,
    *,
    criteria: list[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    invalid: str = "drop",
    annotators: list[str] | None = None,
) -> list[dict[str, Any]]:
    """One agreement block per criterion of a pointwise run; for a preference or classification
    run, the categorical block (annotations/_categorical.py), with ``invalid`` the policy for a
    juror's unusable answers. ``annotators``: only these annotators' labels."""
    from jurybench.annotations._categorical import categorical_report
    from jurybench.annotations._data import label_provenance, run_rubric
    from jurybench.errors import JurybenchError

    blocks: list[dict[str, Any]]
    if run_rubric(con, run_id).categorical:
        blocks = categorical_report(con, run_id, n_boot=n_boot, seed=seed, invalid=invalid, annotators=annotators)
    else:
        if invalid != "drop":
            raise JurybenchError(
                f"--invalid {invalid}: run '{run_id}' is pointwise; a juror's unusable scores are left out "
                "(the policy is for preference and classification runs).",
                hint="Leave out --invalid.",
            )
        blocks = []
        for d in pointwise_data(con, run_id, criteria, annotators=annotators):
            block = criterion_agreement(d, n_boot=n_boot, seed=seed)
            if d.left_out:
                block["label_uses"] = d.left_out
            blocks.append(block)
    for block in blocks:  # how many of the labels were made blind to the jury
        criterion = block.get("criterion")
        block["label_provenance"] = label_provenance(con, run_id, None if criterion is None else str(criterion))
    return blocks


def to_jsonable(value: object) -> object:
    from jurybench.annotations._agreement import Estimate

    if isinstance(value, Estimate):
        return value.as_dict()
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, float) and np.isnan(value):
        return None
    return value
