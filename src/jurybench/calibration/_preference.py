"""A calibrated jury for A/B preferences: logistic regression on the jurors' symmetrized scores.

Features per pair: each juror's mean symmetrized score epsilon (over samples; +1 means
the juror prefers A in both orders, 0 an order-dependent or tied verdict). A juror with
no valid epsilon for a pair gets 0 (no preference), counted. Target: the human majority
(pairs where humans tie are left out). Held-out accuracy is compared with each juror
alone (sign of epsilon; 0 counts as wrong) and the jurors' majority vote.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from jurybench.annotations._data import run_rubric
from jurybench.calibration._data import group_of, item_attributes
from jurybench.errors import JurybenchError


def _epsilons(con: Any, run_id: str) -> tuple[list[str], list[str], list[str], np.ndarray[Any, Any]]:
    rows = con.execute(
        """WITH run_pairs AS (
               SELECT DISTINCT j.rubric_hash, j.juror_key, j.pair_id
               FROM pairwise_judgments j JOIN run_calls rc USING (call_key) WHERE rc.run_id = ?)
           SELECT s.pair_id, ju.name, s.juror_key, avg(s.epsilon)
           FROM pairwise_symmetrized s JOIN run_pairs USING (rubric_hash, juror_key, pair_id)
           JOIN jurors ju USING (juror_key)
           WHERE s.category = 'preference' GROUP BY ALL""",
        [run_id],
    ).fetchall()
    pairs = sorted({r[0] for r in rows})
    jurors = sorted({(r[1], r[2]) for r in rows})
    p_index = {p: i for i, p in enumerate(pairs)}
    j_index = {k: j for j, (_, k) in enumerate(jurors)}
    eps = np.full((len(pairs), len(jurors)), np.nan)
    for pair, _, key, value in rows:
        if value is not None:
            eps[p_index[pair], j_index[key]] = value
    return pairs, [n for n, _ in jurors], [k for _, k in jurors], eps


def fit_preference(
    con: Any, run_id: str, *, name: str | None, group_by: str, test_size: float, seed: int
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
        held[juror] = float(np.mean(np.where(x[test, j] == 0, -1, (x[test, j] > 0).astype(int)) == y[test]))
    votes = np.sign(x[test]).sum(axis=1)
    held["majority vote"] = float(np.mean(np.where(votes == 0, -1, (votes > 0).astype(int)) == y[test]))
    digest = hashlib.sha256(json.dumps([pairs, np.round(x, 6).tolist(), y.tolist()]).encode()).hexdigest()
    return {
        "format": "jurybench.calibration/1",
        "kind": "preference",
        "name": name or f"{run_id}-{rubric.name}",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rubric": {"name": rubric.name, "hash": rubric.content_hash},
        "source_run": run_id,
        "juror_keys": keys,
        "covariates": [],
        "split": {"seed": seed, "test_size": test_size, "group_by": group_by},
        "missing_rule": "a juror with no valid symmetrized score for a pair contributes 0 (no preference)",
        "training_data_hash": digest,
        "criteria": {
            "preference": {
                "method": "logistic",
                "feature_names": jurors,
                "weights": {j: float(w) for j, w in zip(jurors, model.coef_[0], strict=True)},
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


def apply_preference(con: Any, artifact: dict[str, Any], text: str, path: Path, run_id: str) -> dict[str, Any]:
    from jurybench.calibration._api import write_calibrated_scores

    pairs, jurors, _, eps = _epsilons(con, run_id)
    spec = artifact["criteria"]["preference"]
    columns = [eps[:, jurors.index(n)] if n in jurors else np.full(len(pairs), np.nan) for n in spec["feature_names"]]
    x = np.column_stack(columns)
    n_missing = np.isnan(x).sum(axis=1)
    z = np.nan_to_num(x, nan=0.0) @ np.array([spec["weights"][n] for n in spec["feature_names"]]) + spec["intercept"]
    prob = 1 / (1 + np.exp(-z))
    rows = [{"subject_id": p, "criterion": "preference", "score": 1.0 if q >= 0.5 else -1.0, "probability": float(q),
             "n_imputed": int(m)} for p, q, m in zip(pairs, prob, n_missing, strict=True)]  # fmt: skip
    return write_calibrated_scores(con, artifact, text, path, run_id, rows)
