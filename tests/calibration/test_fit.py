"""Calibration on simulated runs with planted weights (no real data needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jurybench.calibration import apply_calibration, fit_calibration
from jurybench.calibration._fit import _split
from jurybench.engine import call_key
from jurybench.engine._records import register_jurors, register_rubric
from jurybench.errors import JurybenchError
from jurybench.jurors._spec import JurorSpec
from jurybench.jury import Jury, register_jury
from jurybench.rubric import load_rubric
from tests.conftest import run_cli

RUBRIC = load_rubric("story-quality")
PLANTED = {"relevance": ([0.6, 0.3, 0.0], 0.4)}  # weights of jurors j0, j1, j2 and the intercept


def simulate(
    con: Any,
    run_id: str,
    *,
    n_prompts: int = 60,
    per_prompt: int = 5,
    seed: int = 1,
    missing: int = 0,
    jurors: tuple[str, ...] = ("j0", "j1", "j2"),
) -> list[JurorSpec]:
    """Items in prompt groups; juror scores random; the human mean follows the planted weights."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    specs = [JurorSpec(model=f"fake/{name}", name=name) for name in jurors]
    register_rubric(con, RUBRIC)
    register_jurors(con, specs)
    con.execute(
        "INSERT INTO runs (run_id, rubric_hash, mode, jurors, status) VALUES (?, ?, 'pointwise', ?, 'finished')",
        [run_id, RUBRIC.content_hash, json.dumps(sorted(s.key for s in specs))],
    )
    register_jury(con, run_id, Jury(tuple(specs), aggregation="mean"))
    items, calls, judgments, labels = [], [], [], []
    weights, intercept = PLANTED["relevance"]
    for p in range(n_prompts):
        for k in range(per_prompt):
            item = f"{run_id}-p{p:03d}-{k}"
            items.append(
                {
                    "item_id": item,
                    "prompt": f"prompt {p}",
                    "response": "x" * int(rng.integers(10, 500)),
                    "language": "en" if k % 2 else "ko",
                }
            )
            scores = rng.uniform(1, 5, len(specs))
            for crit in RUBRIC.dimensions:
                target = float(np.dot(weights, scores[:3]) + intercept + rng.normal(scale=0.15))
                for a in range(3):
                    labels.append({"subject_id": item, "criterion": crit, "annotator": f"h{a}", "value": target})
            for j, spec in enumerate(specs):
                key = call_key(RUBRIC.content_hash, spec.key, item, "", 0)
                calls.append({"call_key": key, "juror_key": spec.key, "subject_id": item})
                gone = missing and j == 0 and rng.random() < missing / 100
                for crit in RUBRIC.dimensions:
                    judgments.append(
                        {
                            "call_key": key,
                            "juror_key": spec.key,
                            "item_id": item,
                            "criterion": crit,
                            "score": None if gone else float(scores[j]),
                            "status": "invalid" if gone else "valid",
                        }
                    )
    for name, rows in (("i", items), ("c", calls), ("j", judgments), ("h", labels)):
        con.register(name, pa.Table.from_pylist(rows))
    con.execute("INSERT INTO items (item_id, prompt, response, language) SELECT * FROM i")
    con.execute(
        "INSERT INTO calls (call_key, rubric_hash, juror_key, subject_kind, subject_id, sample_index, messages, status, attempts) "
        "SELECT call_key, ?, juror_key, 'item', subject_id, 0, '[]', 'ok', 1 FROM c",
        [RUBRIC.content_hash],
    )
    con.execute(
        "INSERT INTO pointwise_judgments (call_key, rubric_hash, juror_key, item_id, sample_index, criterion, score, status) "
        "SELECT call_key, ?, juror_key, item_id, 0, criterion, score, status FROM j",
        [RUBRIC.content_hash],
    )
    con.execute("INSERT INTO run_calls SELECT ?, call_key FROM c", [run_id])
    con.execute(
        "INSERT INTO human_labels (subject_kind, subject_id, criterion, annotator, value) "
        "SELECT 'item', subject_id, criterion, annotator, value FROM h"
    )
    return specs


def test_planted_weights_are_recovered_within_their_cis(con: Any, tmp_path: Path) -> None:
    specs = simulate(con, "sim")
    artifact, path = fit_calibration(con, "sim", criteria=["relevance"], methods=["ols"], n_boot=300, out_dir=tmp_path)
    spec = artifact["criteria"]["relevance"]
    weights, intercept = PLANTED["relevance"]
    for name, w in zip([s.key for s in specs], weights, strict=True):
        ci = spec["coefficient_ci"][name]
        assert ci["low"] <= w <= ci["high"], (name, spec["weights"][name], ci)
        assert spec["weights"][name] == pytest.approx(w, abs=0.03)
    assert spec["intercept"] == pytest.approx(intercept, abs=0.15)
    # Noise sd 0.15 is the floor: held-out RMSE near it, far below any single juror.
    report = spec["report"]
    assert report["variants"]["ols"]["test"]["rmse"] == pytest.approx(0.15, abs=0.05)
    assert all(
        report["variants"]["ols"]["test"]["rmse"] < report["baselines"][j]["test"]["rmse"] for j in ("j0", "j1", "j2")
    )
    saved = json.loads(path.read_text())
    assert saved["split"] == {"seed": 0, "test_size": 0.2, "group_by": "prompt", "folds": 10, "bootstrap": 300}
    assert saved["rubric"]["hash"] == RUBRIC.content_hash and len(saved["training_data_hash"]) == 64
    assert [j["name"] for j in saved["jurors"]] == ["j0", "j1", "j2"] and saved["created_at"]


def test_split_is_grouped_and_seeded() -> None:
    groups = [f"g{i // 4}" for i in range(200)]
    train, test = _split(groups, 0.2, seed=3)
    assert not {groups[i] for i in train} & {groups[i] for i in test}
    assert len({groups[i] for i in test}) == 10
    again = _split(groups, 0.2, seed=3)
    assert (again[0] == train).all() and not (_split(groups, 0.2, seed=4)[1] == test).all()


def test_test_split_informs_no_choice(con: Any, tmp_path: Path) -> None:
    simulate(con, "sim")
    first, _ = fit_calibration(con, "sim", criteria=["relevance"], n_boot=0, out_dir=tmp_path)
    test_items = set(first["criteria"]["relevance"]["report"]["n_test"] * [""])  # size only
    # Scramble the human labels of the held-out prompts: weights and winner must not move.
    from jurybench.calibration._data import calibration_data

    block = calibration_data(con, "sim", criteria=["relevance"], group_by="prompt", covariates=[])[0][0]
    _, test = _split(block.groups, 0.2, 0)
    held = [block.items[i] for i in test]
    con.executemany(
        "UPDATE human_labels SET value = 3 WHERE subject_id = ? AND criterion = 'relevance'", [[i] for i in held]
    )
    second, _ = fit_calibration(con, "sim", criteria=["relevance"], n_boot=0, out_dir=tmp_path)
    a, b = first["criteria"]["relevance"], second["criteria"]["relevance"]
    assert a["method"] == b["method"] and a["weights"] == pytest.approx(b["weights"])
    assert a["report"]["variants"]["ols"]["test"]["rmse"] != b["report"]["variants"]["ols"]["test"]["rmse"]
    assert test_items is not None


def test_missing_votes_are_imputed_and_counted(con: Any, tmp_path: Path) -> None:
    simulate(con, "sim", missing=20)
    artifact, _ = fit_calibration(con, "sim", criteria=["relevance"], methods=["ols"], n_boot=0, out_dir=tmp_path)
    ols = artifact["criteria"]["relevance"]["report"]["variants"]["ols"]
    assert ols["imputed_train"] + ols["imputed_test"] > 20
    assert "training split" in artifact["missing_rule"]


def test_apply_writes_scores_equal_to_the_formula(con: Any, tmp_path: Path) -> None:
    simulate(con, "sim")
    artifact, path = fit_calibration(
        con,
        "sim",
        criteria=["relevance"],
        methods=["ols", "nnls"],
        n_boot=0,
        covariates=["language", "length"],
        out_dir=tmp_path,
    )
    simulate(con, "new", seed=9)  # same jurors, new items
    result = apply_calibration(con, path, "new")
    assert result["rows"] == 300 and result["imputed"] == 0
    spec = artifact["criteria"]["relevance"]
    item, score = con.execute(
        "SELECT subject_id, score FROM calibrated_scores WHERE run_id = 'new' ORDER BY subject_id LIMIT 1"
    ).fetchall()[0]
    juror = dict(
        con.execute(
            "SELECT j.juror_key, j.score FROM pointwise_judgments j WHERE item_id = ? AND criterion = 'relevance'",
            [item],
        ).fetchall()
    )
    lang, length = con.execute("SELECT language, length(response) FROM items WHERE item_id = ?", [item]).fetchall()[0]
    features = {**juror, "language=ko": float(lang == "ko"), "length_kchars": length / 1000}
    expected = spec["intercept"] + sum(spec["weights"][k] * features[k] for k in spec["feature_names"])
    assert score == pytest.approx(expected, abs=1e-9)
    assert con.execute("SELECT count(*) FROM calibrated_items WHERE run_id = 'new'").fetchall()[0][0] == 300


def test_apply_refuses_other_jurors_rubric_or_covariates(con: Any, tmp_path: Path) -> None:
    simulate(con, "sim")
    _, path = fit_calibration(con, "sim", criteria=["relevance"], methods=["ols"], n_boot=0, out_dir=tmp_path)
    simulate(con, "other", seed=4, jurors=("j0", "j1", "k9"))
    with pytest.raises(JurybenchError, match=r"run 'other' lacks juror\(s\) j2 of calibration"):
        apply_calibration(con, path, "other")
    changed = RUBRIC.model_copy(update={"version": "9"})
    register_rubric(con, changed)
    con.execute("UPDATE runs SET rubric_hash = ? WHERE run_id = 'other'", [changed.content_hash])
    with pytest.raises(JurybenchError, match=r"was fitted for rubric story-quality .* run 'other' used"):
        apply_calibration(con, path, "other")
    with pytest.raises(JurybenchError, match="no calibration file"):
        apply_calibration(con, tmp_path / "absent.json", "sim")
    _, meta_path = fit_calibration(
        con,
        "sim",
        name="with-meta",
        criteria=["relevance"],
        methods=["ols"],
        n_boot=0,
        covariates=["length"],
        out_dir=tmp_path,
    )
    assert json.loads(meta_path.read_text())["covariates"] == ["length"]
    with pytest.raises(JurybenchError, match=r"covariate 'meta.age': every item needs a numeric metadata field"):
        fit_calibration(con, "sim", criteria=["relevance"], covariates=["meta.age"], n_boot=0, out_dir=tmp_path)


def test_weights_are_keyed_by_juror_identity_not_display_name(con: Any, tmp_path: Path) -> None:
    # The same model at two temperatures shares the display name 'fake/x': two jurors, two weights.

    specs = simulate(con, "sim")
    twins = [JurorSpec("fake/x", params={"temperature": t}) for t in (0.2, 0.9)]
    assert twins[0].display_name == twins[1].display_name and twins[0].key != twins[1].key
    register_jurors(con, twins)
    for spec, twin in zip(specs[:2], twins, strict=True):
        con.execute("UPDATE pointwise_judgments SET juror_key = ? WHERE juror_key = ?", [twin.key, spec.key])
        con.execute("UPDATE calls SET juror_key = ? WHERE juror_key = ?", [twin.key, spec.key])
    register_jury(con, "sim", Jury((*twins, specs[2]), aggregation="mean"))
    artifact, _ = fit_calibration(con, "sim", criteria=["relevance"], methods=["ols"], n_boot=0, out_dir=tmp_path)
    weights = artifact["criteria"]["relevance"]["weights"]
    # Planted 0.6 and 0.3 stay apart under the twins' own keys.
    assert weights[twins[0].key] == pytest.approx(0.6, abs=0.03)
    assert weights[twins[1].key] == pytest.approx(0.3, abs=0.03)
    labels = [j["label"] for j in artifact["jurors"]]
    assert labels == ["fake/x [temperature=0.2]", "fake/x [temperature=0.9]", "j2"]


def test_planted_unequal_weights_are_kept_and_the_mean_is_a_candidate(con: Any, tmp_path: Path) -> None:
    """With weights 0.6 / 0.3 / 0 and little noise, the plain mean (equal weights) is far off:
    calibration keeps fitted weights (little or no shrinkage) and beats the mean held out."""
    simulate(con, "sim")
    artifact, _ = fit_calibration(con, "sim", criteria=["relevance"], n_boot=0, out_dir=tmp_path)
    spec = artifact["criteria"]["relevance"]
    report = spec["report"]
    assert {"mean", "shrunk"} <= set(report["variants"])
    assert spec["method"] != "mean"
    assert report["variants"]["shrunk"]["shrinkage"]["share"] <= 0.2
    assert report["variants"][spec["method"]]["test"]["rmse"] < report["variants"]["mean"]["test"]["rmse"]
    # The mean variant is the 'jury (mean)' baseline exactly.
    assert report["variants"]["mean"]["test"]["rmse"] == pytest.approx(
        report["baselines"]["jury (mean)"]["test"]["rmse"], abs=1e-12
    )


def test_equal_jurors_fall_back_to_the_plain_mean(con: Any, tmp_path: Path) -> None:
    """Three jurors that are the same noisy copy of the truth: equal weights are right, and fitted
    weights only add variance, so calibration says so and uses the plain mean (rescaled)."""
    simulate(con, "eq", n_prompts=40)
    # Overwrite the human labels: the mean of the three jurors' scores plus noise.
    con.execute("""
        UPDATE human_labels h SET value = s.m + 0.8 * (hash(h.subject_id) % 1000 / 1000.0 - 0.5)
        FROM (SELECT item_id, criterion, avg(score) AS m FROM pointwise_judgments GROUP BY ALL) s
        WHERE s.item_id = h.subject_id AND s.criterion = h.criterion""")
    artifact, _ = fit_calibration(
        con, "eq", criteria=["relevance"], methods=["ols", "mean", "shrunk"], n_boot=0, out_dir=tmp_path
    )
    spec = artifact["criteria"]["relevance"]
    assert spec["method"] == "mean"
    assert "plain mean" in spec["report"]["note"]
    weights = list(spec["weights"].values())
    assert weights[0] == pytest.approx(weights[1]) == pytest.approx(weights[2])


def test_applying_the_mean_averages_the_jurors_present(con: Any, tmp_path: Path) -> None:
    """Juror j0 misses some items: the mean variant scores them by the mean of j1 and j2 (as the
    run's mean rule does), not by filling j0 with its training mean."""
    simulate(con, "miss", missing=30)
    artifact, path = fit_calibration(con, "miss", criteria=["relevance"], methods=["mean"], n_boot=0, out_dir=tmp_path)
    spec = artifact["criteria"]["relevance"]
    part = spec["mean_part"]
    apply_calibration(con, path, "miss")
    rows = con.execute("""
        SELECT c.subject_id, c.score, avg(j.score) FILTER (WHERE j.status = 'valid')
        FROM calibrated_scores c JOIN pointwise_judgments j ON j.item_id = c.subject_id AND j.criterion = c.criterion
        WHERE c.criterion = 'relevance' AND c.run_id = 'miss' GROUP BY ALL""").fetchall()
    assert any(
        r[0] for r in con.execute("SELECT count(*) FROM pointwise_judgments WHERE status = 'invalid'").fetchall()
    )
    for _, score, present in rows:
        assert score == pytest.approx(spec["intercept"] + part["slope"] * present, abs=1e-9)


def test_variant_choice_compares_paired_folds() -> None:
    """A variant 0.01 worse on every fold is worse, however much the folds differ in difficulty
    (the old unpaired rule called it equal: the best's own fold SD, 0.258, dwarfed 0.01)."""
    from jurybench.calibration._fit import choose, no_worse

    best = [0.5, 0.9, 0.7, 1.1]
    assert not no_worse([b + 0.01 for b in best], best)
    # Hand-worked: differences 0.1, 0.1, 0.2: mean 0.1333, SD 0.0577, SE 0.0333; the one-sided
    # 5% critical t with 2 df is 2.920, so the limit is 0.0973 < 0.1333: worse.
    assert not no_worse([1.0, 1.1, 1.2], [0.9, 1.0, 1.0])
    # Differences 0.1, -0.1, 0.1: mean 0.0333, SE 0.0667, limit 0.1947: as good.
    assert no_worse([1.0, 0.9, 1.1], [0.9, 1.0, 1.0])
    variants = {
        "mean": {"cv_rmse_mean": 0.81, "cv_rmse_folds": [b + 0.01 for b in best]},
        "shrunk": {"cv_rmse_mean": 0.8025, "cv_rmse_folds": [0.5, 0.91, 0.7, 1.1]},
        "ols": {"cv_rmse_mean": 0.8, "cv_rmse_folds": best},
    }
    # The mean is consistently worse; shrunk differs on one fold only: the simplest as-good wins.
    assert choose(variants) == "shrunk"


def test_the_weights_to_report_are_least_squares_with_a_group_jackknife() -> None:
    """Issue 43, item 6: the reported weights are ordinary least squares over every labelled row,
    each with a 95 % interval from the jackknife leaving one group out, t with groups - 1 df.
    Checked against a plain reimplementation: refit without each group, the spread of the refits."""
    from scipy.stats import t

    from jurybench.calibration._fit import least_squares_weights

    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, (24, 2))
    y = 1.0 + x @ np.array([0.7, -0.2]) + rng.normal(0, 0.3, 24)
    groups = [f"g{i // 3}" for i in range(24)]  # 8 groups of 3 rows
    out = least_squares_weights(x, y, groups, ["a", "b"])
    design = np.column_stack([np.ones(24), x])
    full = np.linalg.lstsq(design, y, rcond=None)[0]
    refits = np.array(
        [
            np.linalg.lstsq(design[[i // 3 != g for i in range(24)]], y[[i // 3 != g for i in range(24)]], rcond=None)[
                0
            ]
            for g in range(8)
        ]
    )
    se = np.sqrt(7 / 8 * ((refits - refits.mean(axis=0)) ** 2).sum(axis=0))
    assert out["weights"]["a"] == pytest.approx(full[1]) and out["intercept"] == pytest.approx(full[0])
    assert out["standard_errors"]["b"] == pytest.approx(se[2])
    assert out["ci"]["a"]["low"] == pytest.approx(full[1] - t.ppf(0.975, 7) * se[1])
    assert out["n_groups"] == 8 and out["n_rows"] == 24
    few = least_squares_weights(x[:6], y[:6], groups[:6], ["a", "b"])  # 2 groups for 3 coefficients
    assert "weights" not in few and "too few" in few["note"]


def test_the_reported_intervals_cover_where_the_applied_winners_did_not() -> None:
    """Issue 43, item 6 (fails before: the weights table gave the shrunk winner's bootstrap
    intervals). On simulated panel means with known weights and a language covariate, the
    reported least-squares intervals cover near 95 %; the applied winner's covered far less."""
    from jurybench.validity import _calibration as v

    reported, applied, winners = v.coverage(120, n_boot=50)
    assert all(0.88 <= reported[name] / 120 <= 1.0 for name in v.WEIGHTS)
    assert winners.get("shrunk", 0) > 60 and applied["language"] / 120 < 0.3 and applied["j1"] / 120 < 0.6


def test_a_juror_with_one_score_throughout_calibrates_without_warnings() -> None:
    """Issue 45, item 5: a real judge that wrote the same score for every answer made numpy and
    scipy warn on stderr in the middle of a study (polyfit poorly conditioned, constant input)."""
    import warnings

    import numpy as np

    from jurybench.calibration._fit import _rescaled, regression_metrics

    x = np.full(10, 0.1 + 0.2)  # equal scores whose mean can differ in the last bit
    x[3] = 0.3
    y = np.linspace(1, 7, 10)
    train, test = np.arange(7), np.arange(7, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rescaled = _rescaled(x, y, train, test)
        metrics = regression_metrics(rescaled, y[test])
    assert rescaled == pytest.approx(np.full(3, y[train].mean()))
    assert np.isnan(metrics["pearson"]) and metrics["mae"] > 0


def test_a_juror_without_a_valid_score_imputes_without_warnings() -> None:
    """A juror whose every answer was invalid is a column of NaN: numpy warned (mean of an empty
    slice) in the middle of the culture study with such a juror added."""
    import warnings

    import numpy as np

    from jurybench.calibration._fit import _column_means, _fit_predict

    features = np.column_stack([np.linspace(1, 7, 12), np.full(12, np.nan)])
    target = np.linspace(1, 7, 12) + 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        means = _column_means(features)
        _model, predicted, imputed, _ = _fit_predict("ols", features, target, np.arange(8), np.arange(8, 12))
    assert means[0] == pytest.approx(4.0) and np.isnan(means[1])
    assert imputed[1] == pytest.approx(4.0) and predicted == pytest.approx(target[8:], abs=1e-9)


def test_a_juror_without_a_valid_score_is_named_in_the_fit() -> None:
    import warnings

    import numpy as np

    from jurybench.calibration._data import CalibrationData
    from jurybench.calibration._fit import fit_criterion

    rng = np.random.default_rng(0)
    n = 60
    truth = rng.uniform(1, 7, n)
    scores = np.column_stack([truth + rng.normal(0, 0.5, n), truth + rng.normal(0, 0.8, n), np.full(n, np.nan)])
    data = CalibrationData(
        "position",
        [f"i{k}" for k in range(n)],
        ["a", "b", "broken"],
        ["ka", "kb", "kx"],
        scores,
        truth,
        [f"g{k % 12}" for k in range(n)],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = fit_criterion(
            data,
            cross_features=None,
            cross_names=None,
            methods=["ols", "mean"],
            test_size=0.2,
            folds=3,
            seed=0,
            n_boot=20,
        )
    assert report["jurors_without_scores"] == ["broken"]


def test_a_calibration_that_inverts_the_jury_is_named_and_not_applied_silently(con: Any, tmp_path: Path) -> None:
    """Issue 82: on 8 training items the 'mean' fallback fitted a weight of -0.214 per juror (a
    higher jury score, a lower calibrated one) and printed 'winner mean'. Here the people's
    labels are turned upside down (6 - value): every fitted weight set is negative, the report
    names it, and calibrate apply refuses it unless --allow-negative-weights. Few held-out items
    also warn (the test figures are rough)."""
    from jurybench.calibration import apply_calibration

    simulate(con, "sim", n_prompts=6, per_prompt=2)
    con.execute("UPDATE human_labels SET value = 6 - value")
    artifact, path = fit_calibration(
        con, "sim", criteria=["relevance"], methods=["mean"], folds=3, n_boot=0, out_dir=tmp_path
    )
    report = artifact["criteria"]["relevance"]["report"]
    assert report["winner"] == "mean" and sum(artifact["criteria"]["relevance"]["weights"].values()) < 0
    assert any("inverts the jury" in w for w in report["weight_warnings"]), report["weight_warnings"]
    assert any("held-out items, fewer than 20" in w for w in report["warnings"])
    with pytest.raises(JurybenchError, match="is not applied: relevance: the mean calibration inverts the jury"):
        apply_calibration(con, path, "sim")
    done = apply_calibration(con, path, "sim", allow_negative_weights=True)
    assert done["rows"] == 12


def test_inverted_weights_are_printed_and_refused_from_the_command_line(tmp_path: Path) -> None:
    from jurybench.store import connect

    db = tmp_path / "inv.duckdb"
    con = connect(db)
    simulate(con, "sim", n_prompts=6, per_prompt=2)
    con.execute("UPDATE human_labels SET value = 6 - value")
    con.close()
    fit = run_cli(
        "calibrate",
        "--run",
        "sim",
        "--criterion",
        "relevance",
        "--method",
        "mean",
        "--folds",
        "3",
        "--boot",
        "0",
        "--name",
        "inv",
        "--out",
        str(tmp_path),
        "--db",
        str(db),
    )
    assert fit.exit_code == 0, fit.stdout + fit.stderr
    assert "warning: relevance: the mean calibration inverts the jury" in " ".join(fit.stdout.split())
    assert ".0000" not in fit.stdout  # three held-out items: two decimals, not four
    refused = run_cli("calibrate", "apply", str(tmp_path / "inv.json"), "--run", "sim", "--db", str(db))
    assert refused.exit_code == 2 and "--allow-negative-weights" in refused.stderr, refused.stderr
    forced = run_cli(
        "calibrate", "apply", str(tmp_path / "inv.json"), "--run", "sim", "--allow-negative-weights", "--db", str(db)
    )
    assert forced.exit_code == 0, forced.stderr


def test_a_juror_weighted_below_zero_is_said_when_applied(
    con: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A juror whose planted weight is -0.3 (the others 0.6 and 0.5: the jury is not inverted) is
    weighted below 0 by least squares: the calibration is applied, and says so."""
    from jurybench.calibration import apply_calibration

    monkeypatch.setitem(PLANTED, "relevance", ([0.6, 0.5, -0.3], 0.4))
    simulate(con, "sim")
    artifact, path = fit_calibration(con, "sim", criteria=["relevance"], methods=["ols"], n_boot=0, out_dir=tmp_path)
    report = artifact["criteria"]["relevance"]["report"]
    assert report["inverts_jury"] == [] and len(report["weight_warnings"]) == 1
    assert "weights j2 -0.29" in report["weight_warnings"][0]  # -0.296: the planted -0.3, fitted
    done = apply_calibration(con, path, "sim")
    assert done["rows"] == 300 and done["warnings"] == report["weight_warnings"]
