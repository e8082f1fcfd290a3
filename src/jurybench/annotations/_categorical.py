"""Agreement for categorical labels: A/B/tie preferences and classification labels.

Humans: each unit's label is the plurality of its annotators' labels (``MAJORITY_RULE``, the one
rule of this report and of ``report preference``), ties being a label like any other. When labels
share the top count, a preference is a ``tie`` (the panel is split), and a classification takes
the first of the tied labels in the rubric's order. Human-human agreement is Fleiss' kappa (over
units every annotator labelled), Gwet's AC1 (every unit labelled twice or more) and Cohen's kappa
of each pair of annotators (on the units both labelled) with their mean, with percentile
bootstrap CIs over units. ``annotators`` keeps only the labels of the annotators named.

Jurors and the jury against the human plurality: accuracy over all classes (a tie verdict is
right where the humans tie), Cohen's kappa (bootstrap CI), Gwet's AC1, and per class precision,
recall and F1 (NaN where a class is never predicted, or never true), with their unweighted means
(macro precision, recall and F1 as scikit-learn averages them: over the classes predicted or
true, ``classes`` in the output, an undefined value counting as 0, as PandaLM's tables do).
Under ``--invalid wrong`` the rater's unusable answers are a class of their own, ``(no
verdict)``: predicted, never true, so its precision is 0 and it lowers the macro averages as
scikit-learn's default (labels: every class predicted or true) counts it; Gwet's AC1 then
counts q = the rubric's labels + 1 categories. ``vs_annotators``: the rater
against each annotator's own labels, and ``vote_agreement`` pooled over every (rater, annotator)
vote on a unit, with and without ties (MT-Bench's agreement: the chance that the rater and a
randomly drawn human vote agree); the humans' own ``vote_agreement`` pools every two different
annotators' votes on a unit.
A preference juror's verdict is the sign of its symmetrized score (ε > 0: A, < 0: B, 0: tie), the
jury's the sign of its score by the run's rule. A unit the rater answered but without a usable
verdict (invalid answers or refusals only) follows ``invalid``: ``drop`` leaves it out (and counts
it), ``tie`` counts it as a tie (PandaLM's rule; preference runs), ``wrong`` counts it as a
verdict of its own that is never right. A unit the rater never judged is always left out.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from jurybench.annotations._agreement import Estimate, bootstrap, cohen_kappa, fleiss_kappa, gwet_ac1
from jurybench.annotations._data import run_rubric
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray


MAJORITY_RULE = {
    True: "plurality of the annotators' labels; a shared top count is a tie",
    False: "plurality of the annotators' labels; a shared top count goes to the first tied label in the rubric's order",
}
INVALID_POLICIES = ("drop", "tie", "wrong")
NO_VERDICT = "(no verdict)"


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


def class_metrics(pred: list[str], gold: list[str], labels: tuple[str, ...]) -> dict[str, object]:
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

    present = [label for label in labels if np.any(p == label) or np.any(g == label)]

    def macro(name: str) -> float:
        # scikit-learn's macro average: over the classes that occur (predicted or true), an
        # undefined precision or recall (never predicted, never true) counting as 0
        found = [0.0 if np.isnan(per_class[label][name]) else per_class[label][name] for label in present]
        return float(np.mean(found)) if found else float("nan")

    return {
        "n": len(g),
        "accuracy": float(np.mean(p == g)) if len(g) else float("nan"),
        "per_class": per_class,
        "macro_precision": macro("precision"),
        "macro_recall": macro("recall"),
        "macro_f1": macro("f1"),
    }


def pairwise_cohen_kappas(matrix: NDArray[np.float64]) -> list[tuple[int, int, int, float]]:
    """Cohen's kappa of each pair of annotators (columns a < b) on the units both labelled:
    (a, b, units, kappa); NaN where they share fewer than two units or one label only."""
    out = []
    for a in range(matrix.shape[1]):
        for b in range(a + 1, matrix.shape[1]):
            both = ~np.isnan(matrix[:, a]) & ~np.isnan(matrix[:, b])
            kappa = cohen_kappa(matrix[both, a], matrix[both, b]) if both.sum() >= 2 else float("nan")
            out.append((a, b, int(both.sum()), kappa))
    return out


def pairwise_cohen_kappa(matrix: NDArray[np.float64]) -> float:
    """Mean Cohen's kappa over pairs of annotators (columns), each on the units both labelled."""
    values = [k for *_, k in pairwise_cohen_kappas(matrix) if not np.isnan(k)]
    return float(np.mean(values)) if values else float("nan")


def categorical_report(
    con: Connection,
    run_id: str,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    invalid: str = "drop",
    annotators: list[str] | None = None,
) -> list[dict[str, Any]]:
    """One block (the rubric's one categorical dimension) for a preference or classification run."""
    from jurybench.jury import jurors_of_run, jury_rule
    from jurybench.store import refuse_all_used, used_labels

    if invalid not in INVALID_POLICIES:
        raise JurybenchError(f"--invalid {invalid!r} is not a policy.", hint=f"Valid: {', '.join(INVALID_POLICIES)}.")

    rubric = run_rubric(con, run_id)
    if rubric.continuous_labels:  # labels on a scale: the pointwise report's business
        raise JurybenchError(
            f"run '{run_id}' used a {rubric.kind} rubric; categorical agreement is for preference "
            "and classification runs."
        )
    preference = rubric.pairwise  # A/B verdicts on pairs: a tied plurality is a tie
    if invalid == "tie" and not preference:
        raise JurybenchError(
            f"--invalid tie: run '{run_id}' classifies; a tie is a verdict on a pair.",
            hint="Use --invalid drop or --invalid wrong.",
        )
    dimension = rubric.dimensions[0]  # the one categorical dimension (preference, label)
    labels = tuple(rubric.human_choices(dimension))
    if preference and "tie" not in labels:  # the humans' plurality may tie even where jurors cannot
        labels = (*labels, "tie")
    kind = rubric.subject_kind
    uses = used_labels(con, run_id)  # labels that aligned the run's rubric: left out, and said
    left_out = 0
    humans: dict[str, dict[str, str]] = {}
    for subject, annotator, label in con.execute(
        """SELECT h.subject_id, h.annotator, h.label FROM human_labels h
           WHERE h.subject_kind = ? AND h.criterion = ? AND h.label IS NOT NULL
             AND h.subject_id IN (SELECT subject_id FROM run_subjects WHERE run_id = ?)""",
        [kind, dimension, run_id],
    ).fetchall():
        if uses.used(str(subject), dimension):
            left_out += 1
            continue
        if annotators is None or str(annotator) in annotators:
            humans.setdefault(str(subject), {})[str(annotator)] = str(label)
    if left_out and not humans:
        refuse_all_used(run_id, dimension, uses)
    if annotators is not None:
        found = {a for v in humans.values() for a in v}
        unknown = [a for a in annotators if a not in found]
        if unknown:
            known = con.execute(
                "SELECT DISTINCT annotator FROM human_labels WHERE criterion = ? AND subject_id IN "
                "(SELECT subject_id FROM run_subjects WHERE run_id = ?) ORDER BY 1 LIMIT 12",
                [dimension, run_id],
            ).fetchall()
            raise JurybenchError(
                f"--annotators: {unknown[0]!r} has no labels on run '{run_id}'.",
                hint=f"Annotators: {', '.join(str(r[0]) for r in known) or 'none'}.",
            )
    if not humans:
        raise JurybenchError(
            f"run '{run_id}' has no human labels on its {kind}s.",
            hint=f"Import them with 'jurybench annotations import FILE --rubric {rubric.name}'.",
        )
    units = sorted(humans)
    names = sorted({a for v in humans.values() for a in v})
    code = {label: k for k, label in enumerate((*labels, NO_VERDICT))}
    matrix = np.full((len(units), len(names)), np.nan)
    for u, unit in enumerate(units):
        for a, annotator in enumerate(names):
            label = humans[unit].get(annotator)
            if label is not None and label in code:
                matrix[u, a] = code[label]
    gold = {unit: plurality(list(humans[unit].values()), labels, preference=preference) for unit in units}
    n = len(units)
    human = {
        "fleiss_kappa": bootstrap(lambda idx: fleiss_kappa(matrix[idx]), n, n_boot=n_boot, seed=seed),
        "gwet_ac1": bootstrap(lambda idx: gwet_ac1(matrix[idx], len(labels)), n, n_boot=n_boot, seed=seed),
        "pairwise_cohen_kappa": bootstrap(
            lambda idx: pairwise_cohen_kappa(matrix[idx]), n, n_boot=min(n_boot, 500), seed=seed
        ),
        "pairs": [
            {"annotators": [names[a], names[b]], "n": both, "cohen_kappa": kappa}
            for a, b, both, kappa in pairwise_cohen_kappas(matrix)
        ],
        "vote_agreement": human_vote_agreement(humans, preference),
    }
    verdicts = _verdicts(con, run_id, preference, labels)
    panel = jurors_of_run(con, run_id)
    rule = jury_rule(con, run_id)
    rows = []
    for seat in [*((s.key, s.label) for s in panel), ("__jury__", None)]:
        key, name = seat
        said = verdicts.get(key, {})
        silent = not any(said.get(u) is not None for u in units if gold[u] is not None)  # before --invalid
        unusable = [u for u in units if u in said and said[u] is None and gold[u] is not None]
        if invalid != "drop":  # an answer without a usable verdict: a tie, or a verdict never right
            said = {**said, **dict.fromkeys(unusable, "tie" if invalid == "tie" else NO_VERDICT)}
        scored = [u for u in units if said.get(u) is not None and gold[u] is not None]
        pred, truth = [str(said[u]) for u in scored], [str(gold[u]) for u in scored]
        # under --invalid wrong an unusable answer is a class of its own (never true): it counts in
        # the macro averages and in AC1's number of categories, as scikit-learn counts a class
        # that is predicted and never true
        classes = (*labels, NO_VERDICT) if NO_VERDICT in pred else labels
        metrics = class_metrics(pred, truth, classes)
        kappa = _kappa([code[x] for x in pred], [code[x] for x in truth], n_boot, seed)
        both = np.array([[code[x] for x in pred], [code[x] for x in truth]], dtype=float).T
        rows.append(
            {
                "juror": name or f"jury ({rule['aggregation']})",
                **metrics,
                "cohen_kappa": kappa,
                "gwet_ac1": gwet_ac1(both, len(classes)) if len(pred) else float("nan"),
                "classes": [c for c in classes if c in pred or c in truth],
                "n_unusable": len(unusable),
                "n_without_verdict": len(units) - len(scored),
                **votes_against(said, humans, scored, preference),
                "no_valid_answers": silent,
            }
        )
    return [
        {
            "criterion": dimension,
            "kind": "categorical",
            "labels": list(labels),
            "n_units": n,
            "n_annotators": len(names),
            "annotators": names,
            "humans": human,
            "majority_rule": MAJORITY_RULE[preference],
            "invalid_policy": invalid,
            "human_labels": dict(Counter(g for g in gold.values() if g is not None)),
            "jurors": rows[:-1],
            "jury": rows[-1],
            **({"label_uses": uses.note(left_out)} if left_out else {}),
        }
    ]


def _share(agree: int, total: int) -> float:
    return agree / total if total else float("nan")


def votes_against(
    said: dict[str, str | None], humans: dict[str, dict[str, str]], units: list[str], preference: bool
) -> dict[str, object]:
    """The rater's verdicts against every annotator's own label on the units it answered: per
    annotator, and pooled over all votes (MT-Bench's agreement), with ties and, for preferences,
    without any vote where either side is a tie."""
    per: dict[str, list[int]] = {}
    pooled = [0, 0, 0, 0]  # agree, votes, agree without ties, votes without ties
    for unit in units:
        verdict = said.get(unit)
        for annotator, label in humans.get(unit, {}).items():
            agree = int(verdict == label)
            clean = not (preference and "tie" in (verdict, label))
            counts = per.setdefault(annotator, [0, 0, 0, 0])
            for tally in (counts, pooled):
                tally[0] += agree
                tally[1] += 1
                tally[2] += agree if clean else 0
                tally[3] += int(clean)
    out: dict[str, object] = {
        "vote_agreement": _share(pooled[0], pooled[1]),
        "n_votes": pooled[1],
        "vs_annotators": {
            a: {"n": c[1], "agreement": _share(c[0], c[1])}
            | ({"agreement_without_ties": _share(c[2], c[3])} if preference else {})
            for a, c in sorted(per.items())
        },
    }
    if preference:
        out["vote_agreement_without_ties"] = _share(pooled[2], pooled[3])
        out["n_votes_without_ties"] = pooled[3]
    return out


def human_vote_agreement(humans: dict[str, dict[str, str]], preference: bool) -> dict[str, float | int]:
    """Every two different annotators' labels on a unit, pooled: the share that agree (with ties,
    and for preferences without any pair where one is a tie)."""
    agree = total = agree_clean = total_clean = 0
    for labels in humans.values():
        given = sorted(labels.items())
        for i in range(len(given)):
            for j in range(i + 1, len(given)):
                a, b = given[i][1], given[j][1]
                clean = not (preference and "tie" in (a, b))
                agree += a == b
                total += 1
                agree_clean += (a == b) and clean
                total_clean += clean
    out: dict[str, float | int] = {"agreement": _share(agree, total), "n": total}
    if preference:
        out |= {"agreement_without_ties": _share(agree_clean, total_clean), "n_without_ties": total_clean}
    return out


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
    # classification: each juror's most frequent valid label over its samples (None: it answered,
    # but no answer was usable); the jury's plurality of its jurors
    rows = con.execute(
        """SELECT j.juror_key, j.item_id, CASE WHEN j.status = 'valid' THEN j.label END
           FROM pointwise_judgments j JOIN run_calls rc USING (call_key) WHERE rc.run_id = ?""",
        [run_id],
    ).fetchall()
    per: dict[str, dict[str, list[str]]] = {}
    for key, item, label in rows:
        found = per.setdefault(key, {}).setdefault(item, [])
        if label is not None:
            found.append(str(label))
    for key, items in per.items():
        out[key] = {item: plurality(found, labels, preference=False) for item, found in items.items()}
    jury: dict[str, list[str]] = {}
    for said in out.values():
        for item, label in said.items():
            jury.setdefault(item, [])
            if label is not None:
                jury[item].append(label)
    out["__jury__"] = {item: plurality(found, labels, preference=False) for item, found in jury.items()}
    return out
