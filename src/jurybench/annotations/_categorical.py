"""Agreement for categorical labels: A/B/tie preferences and classification labels.

Humans: each unit's label is the plurality of its annotators' labels, ties being a label like any
other. When labels share the top count, a preference is a ``tie`` (the panel is split), and a
classification takes the first of the tied labels in the rubric's order. Human-human agreement is
Fleiss' kappa (over units every annotator labelled) and the mean Cohen's kappa over pairs of
annotators (each pair on the units both labelled), with percentile bootstrap CIs over units.

Jurors and the jury against the human plurality: accuracy over all classes (a tie verdict is
right where the humans tie), Cohen's kappa (bootstrap CI), and per class precision, recall and F1
(NaN where a class is never predicted, or never true), with their unweighted mean (macro F1).
A preference juror's verdict is the sign of its symmetrized score (ε > 0: A, < 0: B, 0: tie), the
jury's the sign of its score by the run's rule; a pair without one is left out and counted.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from jurybench.annotations._agreement import Estimate, bootstrap, cohen_kappa, fleiss_kappa
from jurybench.annotations._data import run_rubric
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray


def plurality(labels: list[str], order: tuple[str, ...], *, preference: bool) -> str | None:
    """The most frequent label; on a shared top count, 'tie' for preferences, else the first of
    the tied labels in ``order``."""
    if not labels:
        return None
    counts = Counter(labels)
    top = max(counts.values())
    tied = [label for label in order if counts.get(label) == top]
    if len(tied) == 1:
        return tied[0]
    return "tie" if preference else tied[0]


def class_metrics(pred: list[str], gold: list[str], labels: tuple[str, ...]) -> dict[str, Any]:
    """Accuracy and per-class precision, recall and F1 of ``pred`` against ``gold``."""
    p, g = np.array(pred, dtype=object), np.array(gold, dtype=object)
    per_class = {}
    for label in labels:
        tp = int(np.sum((p == label) & (g == label)))
        predicted, true = int(np.sum(p == label)), int(np.sum(g == label))
        precision = tp / predicted if predicted else float("nan")
        recall = tp / true if true else float("nan")
        f1 = (
            2 * precision * recall / (precision + recall)
            if predicted and true and precision + recall > 0
            else (0.0 if predicted and true else float("nan"))
        )
        per_class[label] = {"precision": precision, "recall": recall, "f1": f1, "support": true}
    f1s = [c["f1"] for c in per_class.values() if not np.isnan(c["f1"])]
    return {
        "n": len(g),
        "accuracy": float(np.mean(p == g)) if len(g) else float("nan"),
        "per_class": per_class,
        "macro_f1": float(np.mean(f1s)) if f1s else float("nan"),
    }


def pairwise_cohen_kappa(matrix: NDArray[np.float64]) -> float:
    """Mean Cohen's kappa over pairs of annotators (columns), each on the units both labelled."""
    values = []
    for a in range(matrix.shape[1]):
        for b in range(a + 1, matrix.shape[1]):
            both = ~np.isnan(matrix[:, a]) & ~np.isnan(matrix[:, b])
            if both.sum() >= 2:
                kappa = cohen_kappa(matrix[both, a], matrix[both, b])
                if not np.isnan(kappa):
                    values.append(kappa)
    return float(np.mean(values)) if values else float("nan")


def categorical_report(con: Connection, run_id: str, *, n_boot: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """One block (the rubric's one categorical dimension) for a preference or classification run."""
    from jurybench.jury import jurors_of_run, jury_rule

    rubric = run_rubric(con, run_id)
    if rubric.continuous_labels:  # labels on a scale: the pointwise report's business
        raise JurybenchError(
            f"run '{run_id}' used a {rubric.kind} rubric; categorical agreement is for preference "
            "and classification runs."
        )
    preference = rubric.pairwise  # A/B verdicts on pairs: a tied plurality is a tie
    dimension = rubric.dimensions[0]  # the one categorical dimension (preference, label)
    labels = tuple(rubric.human_choices(dimension))
    if preference and "tie" not in labels:  # the humans' plurality may tie even where jurors cannot
        labels = (*labels, "tie")
    kind = rubric.subject_kind
    humans: dict[str, dict[str, str]] = {}
    for subject, annotator, label in con.execute(
        """SELECT h.subject_id, h.annotator, h.label FROM human_labels h
           WHERE h.subject_kind = ? AND h.criterion = ? AND h.label IS NOT NULL
             AND h.subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)""",
        [kind, dimension, run_id],
    ).fetchall():
        humans.setdefault(str(subject), {})[str(annotator)] = str(label)
    if not humans:
        raise JurybenchError(
            f"run '{run_id}' has no human labels on its {kind}s.",
            hint=f"Import them with 'jurybench annotations import FILE --rubric {rubric.name}'.",
        )
    units = sorted(humans)
    annotators = sorted({a for v in humans.values() for a in v})
    code = {label: k for k, label in enumerate(labels)}
    matrix = np.full((len(units), len(annotators)), np.nan)
    for u, unit in enumerate(units):
        for a, annotator in enumerate(annotators):
            label = humans[unit].get(annotator)
            if label is not None and label in code:
                matrix[u, a] = code[label]
    gold = {unit: plurality(list(humans[unit].values()), labels, preference=preference) for unit in units}
    n = len(units)
    human = {
        "fleiss_kappa": bootstrap(lambda idx: fleiss_kappa(matrix[idx]), n, n_boot=n_boot, seed=seed),
        "pairwise_cohen_kappa": bootstrap(
            lambda idx: pairwise_cohen_kappa(matrix[idx]), n, n_boot=min(n_boot, 500), seed=seed
        ),
    }
    verdicts = _verdicts(con, run_id, preference, labels)
    panel = jurors_of_run(con, run_id)
    rows = []
    for seat in [*((s.key, s.label) for s in panel), ("__jury__", None)]:
        key, name = seat
        said = verdicts.get(key, {})
        scored = [u for u in units if said.get(u) is not None and gold[u] is not None]
        pred, truth = [str(said[u]) for u in scored], [str(gold[u]) for u in scored]
        metrics = class_metrics(pred, truth, labels)
        kappa = _kappa([code[x] for x in pred], [code[x] for x in truth], n_boot, seed)
        rule = jury_rule(con, run_id)
        rows.append(
            {
                "juror": name or f"jury ({rule['aggregation']})",
                **metrics,
                "cohen_kappa": kappa,
                "n_without_verdict": len(units) - len(scored),
            }
        )
    return [
        {
            "criterion": dimension,
            "kind": "categorical",
            "labels": list(labels),
            "n_units": n,
            "n_annotators": len(annotators),
            "humans": human,
            "majority_rule": (
                "plurality; a shared top count is a tie"
                if preference
                else "plurality; a shared top count goes to the first tied label in the rubric's order"
            ),
            "human_labels": dict(Counter(g for g in gold.values() if g is not None)),
            "jurors": rows[:-1],
            "jury": rows[-1],
        }
    ]


def _kappa(pred: list[int], truth: list[int], n_boot: int, seed: int) -> Estimate:
    """Cohen's kappa of the rater against the humans, with a percentile bootstrap CI over units."""
    if not pred:
        return Estimate(float("nan"), float("nan"), float("nan"))
    p, t = np.array(pred, dtype=float), np.array(truth, dtype=float)
    return bootstrap(lambda idx: cohen_kappa(p[idx], t[idx]), len(p), n_boot=n_boot, seed=seed)


def _verdicts(
    con: Connection, run_id: str, preference: bool, labels: tuple[str, ...]
) -> dict[str, dict[str, str | None]]:
    """Per juror key ('__jury__' for the jury) and unit: its label."""
    out: dict[str, dict[str, str | None]] = {}

    def sign(value: float | None) -> str | None:
        if value is None:
            return None
        return "A" if value > 0 else "B" if value < 0 else "tie"

    if preference:
        for key, pair, eps in con.execute(
            "SELECT juror_key, pair_id, juror_epsilon FROM juror_pairwise WHERE run_id = ? AND category = 'preference'",
            [run_id],
        ).fetchall():
            out.setdefault(key, {})[pair] = sign(eps)
        for pair, score in con.execute(
            "SELECT pair_id, jury_score FROM jury_pairwise WHERE run_id = ? AND category = 'preference'", [run_id]
        ).fetchall():
            out.setdefault("__jury__", {})[pair] = sign(score)
        return out
    # classification: each juror's most frequent valid label over its samples; the jury's plurality of its jurors
    rows = con.execute(
        """SELECT j.juror_key, j.item_id, j.label FROM pointwise_judgments j JOIN run_calls rc USING (call_key)
           WHERE rc.run_id = ? AND j.status = 'valid' AND j.label IS NOT NULL""",
        [run_id],
    ).fetchall()
    per: dict[str, dict[str, list[str]]] = {}
    for key, item, label in rows:
        per.setdefault(key, {}).setdefault(item, []).append(str(label))
    for key, items in per.items():
        out[key] = {item: plurality(found, labels, preference=False) for item, found in items.items()}
    jury: dict[str, list[str]] = {}
    for said in out.values():
        for item, label in said.items():
            if label is not None:
                jury.setdefault(item, []).append(label)
    out["__jury__"] = {item: plurality(found, labels, preference=False) for item, found in jury.items()}
    return out
