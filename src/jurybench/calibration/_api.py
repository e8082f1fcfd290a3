"""Fit calibrations from a run, save them as files, apply them to other runs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jurybench.annotations import run_rubric
from jurybench.calibration._data import CalibrationData, calibration_data, covariate_columns, item_attributes
from jurybench.calibration._fit import METHODS, fit_criterion, impute
from jurybench.calibration._scores import register_artifact, write_calibrated_scores
from jurybench.config import project_root
from jurybench.errors import JurybenchError
from jurybench.jury import Jury

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection
    from numpy.typing import NDArray

    from jurybench.rubric import AnyRubric

# /2: weights keyed by juror_key (identity), with labels for display.
FORMAT = "jurybench.calibration/2"
MISSING_RULE = (
    "a juror with no valid score for a subject is given that juror's mean score on the training split; "
    "imputed cells are counted in the report and in calibrated_scores.n_imputed"
)


def _jurors_of(con: Connection, keys: list[str], labels: list[str]) -> list[dict[str, object]]:
    rows = {r[0]: r for r in con.execute("SELECT juror_key, name, model, params FROM jurors").fetchall()}
    return [
        {"key": k, "label": label, "name": rows[k][1], "model": rows[k][2], "params": json.loads(rows[k][3])}
        for k, label in zip(keys, labels, strict=True)
    ]


def fit_calibration(
    con: Connection,
    run_id: str,
    *,
    name: str | None = None,
    criteria: list[str] | None = None,
    covariates: list[str] | None = None,
    methods: list[str] | None = None,
    group_by: str = "prompt",
    test_size: float = 0.2,
    folds: int = 10,
    seed: int = 0,
    n_boot: int = 200,
    out_dir: Path | None = None,
) -> tuple[dict[str, Any], Path]:
    """Fit per-criterion juror weights on a pointwise run with human labels; write the artifact."""
    rubric = run_rubric(con, run_id)
    if rubric.votes:
        return fit_preference_calibration(
            con, run_id, name=name, group_by=group_by, test_size=test_size, seed=seed, out_dir=out_dir
        )
    methods = methods or list(METHODS)
    for m in methods:
        if m not in METHODS:
            raise JurybenchError(f"method {m!r} is not valid.", hint=f"Valid: {', '.join(METHODS)}.")
    if not 0 < test_size < 1:
        raise JurybenchError(f"--test-size {test_size} must lie strictly between 0 and 1.")
    covariates = covariates or []
    blocks, levels = calibration_data(con, run_id, criteria=criteria, group_by=group_by, covariates=covariates)
    # The cross-criterion variant uses every juror's score on every criterion of the same items.
    all_blocks, _ = (
        calibration_data(con, run_id, criteria=None, group_by=group_by, covariates=[])
        if "cross" in methods
        else ([], {})
    )
    results = {}
    for block in blocks:
        cross, cross_names = None, None
        if all_blocks:
            cross_cols, cross_names = [], []
            for other in all_blocks:
                index = {item: i for i, item in enumerate(other.items)}
                rows = [index.get(item) for item in block.items]
                for j, key in enumerate(other.juror_keys):
                    cross_cols.append(np.array([other.scores[r, j] if r is not None else np.nan for r in rows]))
                    cross_names.append(f"{other.criterion}:{key}")
            cross = np.column_stack(cross_cols)
        results[block.criterion] = fit_criterion(
            block,
            cross_features=cross,
            cross_names=cross_names,
            methods=methods,
            test_size=test_size,
            folds=folds,
            seed=seed,
            n_boot=n_boot,
        )
    juror_keys = blocks[0].juror_keys
    from jurybench.annotations import label_provenance
    from jurybench.store import used_labels

    uses = used_labels(con, run_id)  # labels that aligned the run's rubric: left out, and said
    for criterion, result in results.items():  # how many of the labels were made blind to the jury
        result["label_provenance"] = label_provenance(con, run_id, criterion)
    artifact = {
        "format": FORMAT,
        "kind": "pointwise",
        "name": name or f"{run_id}-{rubric.name}",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rubric": {"name": rubric.name, "hash": rubric.content_hash},
        "source_run": run_id,
        "jurors": _jurors_of(con, juror_keys, blocks[0].jurors),
        # The run's jury (its rule, expected vs present, items below quorum): the "jury" baseline.
        "jury": {b.criterion: jury_summary(b) for b in blocks},
        "covariates": covariates,
        "covariate_levels": levels,
        "split": {"seed": seed, "test_size": test_size, "group_by": group_by, "folds": folds, "bootstrap": n_boot},
        "missing_rule": MISSING_RULE,
        "training_data_hash": hashlib.sha256(
            "".join(results[c]["training_data_hash"] for c in sorted(results)).encode()
        ).hexdigest(),
        # subjects x criteria whose labels aligned the run's rubric (jurybench align): left out
        "label_uses": uses.note(len(uses.pairs), "subjects' labels of a criterion") if uses else None,
        # The labels this calibration was fitted on (its training and held-out splits both chose
        # it): a statistic that takes labels leaves them out wherever its scores are calibrated.
        "labels_used": {"subject_kind": "item", "criteria": {b.criterion: list(b.items) for b in blocks}},
        "criteria": {
            c: {"method": r["winner"], **{k: v for k, v in r["variants"][r["winner"]].items()}, "report": r}
            for c, r in results.items()
        },
    }
    return artifact, save_artifact(con, artifact, out_dir)


def jury_summary(block: CalibrationData) -> dict[str, object]:
    present = np.isfinite(block.scores).sum(axis=1)
    return {
        "aggregation": block.rule,
        "n_jurors_expected": len(block.juror_keys),
        "mean_jurors_present": float(present.mean()) if len(present) else 0.0,
        "items_without_jury_score": int(np.isnan(block.jury).sum()) if block.jury is not None else None,
    }


def save_artifact(con: Connection, artifact: dict[str, Any], out_dir: Path | None) -> Path:
    folder = out_dir or project_root() / "calibration"
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_clean(artifact), indent=2, sort_keys=False) + "\n"
    path = folder / f"{artifact['name']}.json"
    path.write_text(text, encoding="utf-8")
    register_artifact(con, artifact, path, text)
    return path


def _clean(value: object) -> object:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def load_artifact(path: Path) -> tuple[dict[str, Any], str]:
    if not path.exists():
        candidate = project_root() / "calibration" / f"{path}.json"
        if candidate.exists():
            path = candidate
        else:
            raise JurybenchError(f"no calibration file {path}.", hint="Pass the JSON written by 'jurybench calibrate'.")
    text = path.read_text(encoding="utf-8")
    try:
        artifact = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JurybenchError(f"{path} line {exc.lineno}: not valid JSON ({exc.msg}).") from None
    if not isinstance(artifact, dict) or artifact.get("format") != FORMAT:
        raise JurybenchError(f"{path}: not a jurybench calibration (format {FORMAT}).")
    return artifact, text


def refuse_negative_weights(artifact: dict[str, Any], allowed: bool = False) -> list[str]:
    """A calibration whose weights invert the jury is refused in one line unless ``allowed``;
    what is wrong with its weights otherwise (a juror weighted below 0) is returned, to be said
    where it is applied: never applied silently."""
    reports = [spec.get("report", {}) for spec in artifact["criteria"].values()]
    found = [w for r in reports for w in r.get("inverts_jury") or []]
    if found and not allowed:
        raise JurybenchError(
            f"calibration '{artifact['name']}' is not applied: {found[0]}"
            + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
            + ".",
            hint="Refit it on more labels; to apply it anyway, pass --allow-negative-weights (allow_negative_weights=True).",
        )
    return [w for r in reports for w in r.get("weight_warnings") or []]


def apply_calibration(
    con: Connection, path: Path, run_id: str, *, allow_negative_weights: bool = False
) -> dict[str, object]:
    """Write calibrated scores for a run; refuse a run with other jurors, rubric or covariates,
    and weights that invert the jury unless ``allow_negative_weights``."""

    artifact, text = load_artifact(path)
    said = refuse_negative_weights(artifact, allow_negative_weights)
    rubric = run_rubric(con, run_id)
    if rubric.content_hash != artifact["rubric"]["hash"]:
        raise JurybenchError(
            f"calibration '{artifact['name']}' was fitted for rubric {artifact['rubric']['name']} "
            f"({artifact['rubric']['hash'][:12]}); run '{run_id}' used {rubric.name} ({rubric.content_hash[:12]}).",
            hint="Apply it to runs scored with the same rubric file.",
        )
    run_jurors = {
        r[0]
        for r in con.execute(
            "SELECT DISTINCT c.juror_key FROM calls c JOIN run_calls rc USING (call_key) WHERE rc.run_id = ?", [run_id]
        ).fetchall()
    }
    missing = [j for j in artifact["jurors"] if j["key"] not in run_jurors]
    if missing:
        raise JurybenchError(
            f"run '{run_id}' lacks juror(s) {', '.join(j['name'] for j in missing)} of calibration '{artifact['name']}'.",
            hint="Score the run with the same jurors and parameters the calibration was fitted on.",
        )
    if artifact["kind"] == "preference":
        from jurybench.calibration._preference import apply_preference

        return apply_preference(con, artifact, text, path, run_id)
    keys = {j["key"] for j in artifact["jurors"]}
    rows = con.execute(
        """SELECT j.item_id, j.criterion, j.juror_key, avg(j.score) FILTER (WHERE j.status = 'valid')
           FROM pointwise_judgments j JOIN run_calls rc USING (call_key) WHERE rc.run_id = ? GROUP BY ALL""",
        [run_id],
    ).fetchall()
    items = sorted({r[0] for r in rows})
    attrs = item_attributes(con, items)
    try:
        cov, _ = covariate_columns(attrs, items, artifact["covariates"], artifact.get("covariate_levels"))
    except JurybenchError as exc:
        raise JurybenchError(f"run '{run_id}' is missing a covariate of the calibration: {exc.message}") from None
    index = {item: i for i, item in enumerate(items)}
    per_crit: dict[str, dict[str, NDArray[np.float64]]] = {}
    for item, criterion, key, value in rows:
        if key in keys:
            block = per_crit.setdefault(criterion, {})
            col = block.setdefault(key, np.full(len(items), np.nan))
            if value is not None:
                col[index[item]] = value
    out = []
    for criterion, spec in artifact["criteria"].items():
        names = spec["feature_names"]
        columns = []
        for feature in names:
            if feature in cov:
                columns.append(cov[feature])
            elif ":" in feature:  # cross-criterion feature "criterion:juror_key"
                crit, key = feature.split(":", 1)
                columns.append(per_crit.get(crit, {}).get(key, np.full(len(items), np.nan)))
            else:
                columns.append(per_crit.get(criterion, {}).get(feature, np.full(len(items), np.nan)))
        matrix = np.column_stack(columns)
        means = np.array([spec["train_means"][n] for n in names])
        filled, n_missing = impute(matrix, means)
        weights = np.array([spec["weights"][n] for n in names])
        scores = filled @ weights + spec["intercept"]
        part = spec.get("mean_part")
        if part and part["slope"]:  # the mean of the jurors present, not of the imputed columns
            idx = [names.index(n) for n in part["of"]]
            with np.errstate(all="ignore"):
                present = np.nanmean(matrix[:, idx], axis=1)
            present = np.where(np.isnan(present), part["fill"], present)
            scores = scores - filled[:, idx].mean(axis=1) * part["slope"] + present * part["slope"]
        out += [
            {"subject_id": item, "criterion": criterion, "score": float(s), "n_imputed": int(m)}
            for item, s, m in zip(items, scores, n_missing, strict=True)
        ]
    return {**write_calibrated_scores(con, artifact, text, path, run_id, out), "warnings": said}


def fit_preference_calibration(
    con: Connection,
    run_id: str,
    *,
    name: str | None,
    group_by: str,
    test_size: float,
    seed: int,
    out_dir: Path | None,
) -> tuple[dict[str, object], Path]:
    from jurybench.calibration._preference import fit_preference

    artifact = fit_preference(con, run_id, name=name, group_by=group_by, test_size=test_size, seed=seed)
    artifact["jurors"] = _jurors_of(con, artifact.pop("juror_keys"), artifact.pop("juror_labels"))
    return artifact, save_artifact(con, artifact, out_dir)


def attach_calibration(jury: Jury, rubric: AnyRubric) -> Jury:
    """The jury with its calibration file checked (fitted for this rubric, on these jurors) and
    identified; a jury without aggregation 'calibrated' is returned as it is."""
    if (jury.aggregation or "") != "calibrated" or not jury.calibration:
        return jury
    return replace(jury, calibration_id=_checked_calibration(jury, rubric))


def _checked_calibration(jury: Jury, rubric: AnyRubric) -> str:
    if not jury.calibration:
        raise JurybenchError("aggregation 'calibrated' needs a calibration file (calibration: PATH or --calibration).")
    artifact, text = load_artifact(Path(jury.calibration))
    refuse_negative_weights(artifact)  # a jury's rule applies it when the run ends: never silently
    if artifact["rubric"]["hash"] != rubric.content_hash:
        raise JurybenchError(
            f"calibration '{artifact['name']}' was fitted for rubric {artifact['rubric']['name']}, "
            f"not {rubric.name} ({rubric.content_hash[:12]}).",
        )
    keys = {j.key for j in jury.jurors}
    missing = [j["name"] for j in artifact["jurors"] if j["key"] not in keys]
    if missing:
        raise JurybenchError(
            f"calibration '{artifact['name']}' needs juror(s) {', '.join(missing)}, which this jury lacks.",
            hint="Use the jurors, with the same parameters, the calibration was fitted on.",
        )
    return hashlib.sha256(text.encode()).hexdigest()


def calibration_finisher(jury: Jury) -> Callable[[Any, str], None] | None:
    """What the engine applies when a run with this jury ends: its calibration, if it has one."""
    if jury.aggregation != "calibrated" or not jury.calibration:
        return None
    path = Path(jury.calibration)

    def finish(con: Connection, run_id: str) -> None:
        apply_calibration(con, path, run_id)

    return finish
