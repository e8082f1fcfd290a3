"""A calibrated jury for A/B preferences: logistic regression on the jurors' symmetrized scores.

Features per pair: each juror's mean symmetrized score epsilon (over samples; +1 means
the juror prefers A in both orders, 0 an order-dependent or tied verdict), keyed by the
juror's identity. A juror with no valid epsilon for a pair gets 0 (no preference),
counted. Target: the human majority (pairs where humans tie are left out). Held-out
accuracy is compared with each juror alone and with the run's own jury (its rule, from
the jury_pairwise view); a verdict of 0 or none counts as wrong.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jurybench.annotations import run_rubric
from jurybench.calibration._data import group_of, item_attributes
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray


def _epsilons(con: Connection, run_id: str) -> tuple[list[str], list[str], list[str], NDArray[np.float64]]:
    """Pairs, juror labels, juror keys and the pairs x jurors matrix of symmetrized scores."""
    from jurybench.jury import jurors_of_run

    panel = jurors_of_run(con, run_id)
    rows = con.execute(
        "SELECT pair_id, juror_key, juror_epsilon FROM juror_pairwise WHERE run_id = ? AND category = 'preference'",
        [run_id],
    ).fetchall()
    pairs = sorted({r[0] for r in rows})
    p_index = {p: i for i, p in enumerate(pairs)}
    j_index = {seat.key: j for j, seat in enumerate(panel)}
    eps = np.full((len(pairs), len(panel)), np.nan)
    for pair, key, value in rows:
        if value is not None and key in j_index:
            eps[p_index[pair], j_index[key]] = value
    return pairs, [s.label for s in panel], [s.key for s in panel], eps


def _jury_verdicts(con: Connection, run_id: str) -> tuple[str, dict[str, float | None]]:
    """The run's jury score per pair by its own rule (NULL below quorum or on an abstained tie)."""
    from jurybench.jury import jury_rule

    rows = con.execute(
        "SELECT pair_id, jury_score FROM jury_pairwise WHERE run_id = ? AND category = 'preference'", [run_id]
    ).fetchall()
    return str(jury_rule(con, run_id)["aggregation"]), dict(rows)


def verdict_accuracy(scores: NDArray[np.float64], truth: NDArray[np.float64]) -> float:
    """Share of pairs where the sign of a score names the human-preferred response (truth 1 = A,
    0 = B); a score of 0 (tie) or NaN (no verdict) is wrong."""
    called = np.where(np.isnan(scores), 0.0, np.sign(scores))
    right = np.where(truth == 1, called > 0, called < 0)
    return float(np.mean(right))


def fit_preference(
    con: Connection, run_id: str, *, name: str | None, group_by: str, test_size: float, seed: int
) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupShuffleSplit

    rubric = run_rubric(con, run_id)
    pairs, jurors, keys, eps = _epsilons(con, run_id)
    labels = dict(
        con.execute(
            "SELECT subject_id, sign(avg(sign(value))) FROM human_labels WHERE criterion = 'preference' GROUP BY 1"
        ).fetchall()
    )
    keep = [i for i, p in enumerate(pairs) if labels.get(p) not in (None, 0)]
    if len(keep) < 10:
        raise JurybenchError(f"run '{run_id}': only {len(keep)} pairs with a human preference; at least 10 are needed.")
    pairs = [pairs[i] for i in keep]
    x_raw = eps[keep]
    y = np.array([1 if labels[p] > 0 else 0 for p in pairs])
    prompts = dict(con.execute("SELECT p.pair_id, p.item_a FROM pairs p").fetchall())
    attrs = item_attributes(con, [prompts[p] for p in pairs])
    groups = [group_of(attrs[prompts[p]], group_by, p) if group_by != "item" else p for p in pairs]
    train, test = next(GroupShuffleSplit(1, test_size=test_size, random_state=seed).split(x_raw, y, groups))
    n_missing = int(np.isnan(x_raw).sum())
    x = np.nan_to_num(x_raw, nan=0.0)
    model = LogisticRegression(C=1.0).fit(x[train], y[train])
    held = {"calibrated jury": float(np.mean(model.predict(x[test]) == y[test]))}
    for j, juror in enumerate(jurors):
        held[juror] = verdict_accuracy(x_raw[test, j], y[test])
    rule, jury = _jury_verdicts(con, run_id)
    jury_scores = np.array([np.nan if jury.get(pairs[i]) is None else jury[pairs[i]] for i in test], dtype=float)
    held[f"jury ({rule})"] = verdict_accuracy(jury_scores, y[test])
    digest = hashlib.sha256(json.dumps([pairs, np.round(x, 6).tolist(), y.tolist()]).encode()).hexdigest()
    return {
        "format": "jurybench.calibration/2",
        "kind": "preference",
        "name": name or f"{run_id}-{rubric.name}",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rubric": {"name": rubric.name, "hash": rubric.content_hash},
        "source_run": run_id,
        "juror_keys": keys,
        "juror_labels": jurors,
        "covariates": [],
        "split": {"seed": seed, "test_size": test_size, "group_by": group_by},
        "missing_rule": "a juror with no valid symmetrized score for a pair contributes 0 (no preference)",
        "training_data_hash": digest,
        "labels_used": {"subject_kind": "pair", "criteria": {"preference": list(pairs)}},
        "criteria": {
            "preference": {
                "method": "logistic",
                "feature_names": keys,
                "weights": {k: float(w) for k, w in zip(keys, model.coef_[0], strict=True)},
                "intercept": float(model.intercept_[0]),
                "report": {
                    "n_pairs": len(pairs),
                    "n_train": len(train),
                    "n_test": len(test),
                    "imputed": n_missing,
                    "held_out_accuracy": held,
                },
            }
        },
    }


def apply_preference(
    con: Connection, artifact: dict[str, Any], text: str, path: Path, run_id: str
) -> dict[str, object]:
    from jurybench.calibration._scores import write_calibrated_scores

    pairs, _, keys, eps = _epsilons(con, run_id)
    spec = artifact["criteria"]["preference"]
    columns = [eps[:, keys.index(k)] if k in keys else np.full(len(pairs), np.nan) for k in spec["feature_names"]]
    x = np.column_stack(columns)
    n_missing = np.isnan(x).sum(axis=1)
    z = np.nan_to_num(x, nan=0.0) @ np.array([spec["weights"][n] for n in spec["feature_names"]]) + spec["intercept"]
    prob = 1 / (1 + np.exp(-z))
    rows = [
        {
            "subject_id": p,
            "criterion": "preference",
            "score": 1.0 if q >= 0.5 else -1.0,
            "probability": float(q),
            "n_imputed": int(m),
        }
        for p, q, m in zip(pairs, prob, n_missing, strict=True)
    ]
    return write_calibrated_scores(con, artifact, text, path, run_id, rows)
