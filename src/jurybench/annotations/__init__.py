"""Human annotations and agreement between jurors, the jury and humans.

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from jurybench.annotations._agreement import (
    Estimate,
    bootstrap,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    leave_one_annotator_out,
    mean_pairwise_spearman,
    quadratic_kappa,
    score_agreement,
)
from jurybench.annotations._answers import answer_breakdown
from jurybench.annotations._categorical import pairwise_cohen_kappa, plurality
from jurybench.annotations._data import PointwiseData, label_provenance, pointwise_data, run_rubric
from jurybench.annotations._preference import PreferenceReport, preference_accuracy
from jurybench.annotations._report import agreement_report, to_jsonable
from jurybench.annotations._sample import (
    active_probabilities,
    check_seed,
    draw_sample,
    newest_sample,
    proportional_draw,
    strata_of,
)
from jurybench.annotations._simulated import simulate_human_labels

__all__ = [
    "Estimate",
    "PointwiseData",
    "PreferenceReport",
    "active_probabilities",
    "agreement_report",
    "answer_breakdown",
    "bootstrap",
    "check_seed",
    "cohen_kappa",
    "draw_sample",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "label_provenance",
    "leave_one_annotator_out",
    "mean_pairwise_spearman",
    "newest_sample",
    "pairwise_cohen_kappa",
    "plurality",
    "pointwise_data",
    "preference_accuracy",
    "proportional_draw",
    "quadratic_kappa",
    "run_rubric",
    "score_agreement",
    "simulate_human_labels",
    "strata_of",
    "to_jsonable",
]
