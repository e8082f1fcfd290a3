"""Statistics and calibration endpoints: the CLI's parameters, the same functions, recorded results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.service.conftest import make_client


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with a pointwise run (3 models, 2 languages, 2 arms, human labels), two pairwise runs
    and a classification run, all from simulated jurors."""
    from jurybench.annotations import simulate_human_labels
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect, import_items, import_pairs

    folder = tmp_path_factory.mktemp("svc")
    db = folder / "s.duckdb"
    con = connect(db)
    quiet = EngineOptions(progress=False)
    rows = ["item_id,prompt,response,model,lang,gender,dataset"]
    for k in range(48):
        rows.append(f"i{k:02d},p{k % 8},Story {k},m{k % 3},{'en' if k % 2 else 'de'},{'f' if (k // 2) % 2 else 'm'},pw")
    import_items(con, write(folder / "items.csv", "\n".join(rows) + "\n"), treatment_columns=["gender"])
    quality = load_rubric("story-quality")
    jurors = [parse_juror("sim/a,noise=0.3"), parse_juror("sim/b,noise=0.8"), parse_juror("sim/c,noise=1.2")]
    score(con, quality, jurors, run_id="pw", where="dataset = 'pw'", options=quiet)
    simulate_human_labels(con, quality, where="dataset = 'pw'", annotators=2)
    pairs = ["pair_id,item_a,item_b"] + [f"q{k},i{2 * k:02d},i{2 * k + 1:02d}" for k in range(24)]
    import_pairs(con, write(folder / "pairs.csv", "\n".join(pairs) + "\n"))
    persuasion = load_rubric("persuasion")
    score(con, persuasion, [parse_juror("sim/j1,noise=0.3")], run_id="pa", options=quiet)
    score(con, persuasion, [parse_juror("sim/j2,noise=0.5")], run_id="pb", options=quiet)
    texts = ["item_id,response,language,reference,dataset"]
    texts += [f"e{k},text {k},{'en' if k % 2 else 'de'},{'joy' if k % 3 else 'fear'},emo" for k in range(30)]
    import_items(con, write(folder / "texts.csv", "\n".join(texts) + "\n"))
    score(
        con,
        load_rubric("emotion-label"),
        [parse_juror("sim/clf,accuracy=0.8")],
        run_id="emo",
        where="dataset = 'emo'",
        options=quiet,
    )
    con.execute(
        "INSERT INTO human_baselines (name, statistic, target, cell, value) VALUES "
        "('h', 'd', 'coherence', '', 0.2), ('hm', 'mean', '', '', 3.0)"
    )
    con.close()
    return db


@pytest.fixture
def client(prepared: Path, tmp_path: Path) -> Any:
    import shutil

    db = tmp_path / "copy.duckdb"
    shutil.copy(prepared, db)
    with make_client(db, calibration_dir=tmp_path / "cal") as c:
        yield c


STATS = [
    ("directional", {"run": "pa"}),
    ("gap", {"run": "pa", "by": "model_a", "boot": 100}),
    ("consistency", {"run": "pa"}),
    ("robustness", {"run": "pa", "other_run": "pb"}),
    ("friedman", {"run": "pw", "by": "model"}),
    ("ttest", {"run": "pw", "by": "model", "baseline": 3}),
    ("ttest", {"run": "pw", "by": "model", "baselines": "hm"}),
    ("welch", {"run": "pw", "groups": "m0,m1"}),
    ("mannwhitney", {"run": "pw", "groups": "m0,m1"}),
    ("kendall", {"run": "pw", "reference": {"m0": 1, "m1": 2, "m2": 3}}),
    ("cohens-d", {"run": "pw", "arm": "treatment->>'gender'", "arms": "f,m", "baselines": "h", "boot": 100}),
    ("item-spearman", {"run": "pw", "arm": "treatment->>'gender'", "arms": "f,m", "by": "metadata->>'lang'"}),
    (
        "item-spearman",
        {
            "run": "pw",
            "arm": "treatment->>'gender'",
            "arms": "f,m",
            "by": "metadata->>'lang'",
            "keys": {"coherence": -1},
        },
    ),
    (
        "cohens-d",
        {
            "run": "pw",
            "arm": "treatment->>'gender'",
            "arms": "f,m",
            "boot": 100,
            "factors": {"coherence": "craft", "complexity": "craft", "empathy": "feeling"},
        },
    ),
    (
        "disparity",
        {"sql": "SELECT language AS grp, gold AS category, correct, invalid FROM classification_outcomes", "boot": 100},
    ),
    ("gap", {"run": "pa", "boot": 100, "resample": "clusters:prompt"}),
    ("gap", {"run": "pa", "boot": 100, "test": "bootstrap"}),
    ("leaderboard", {"run": "pa", "category": "logos", "boot": 50, "resample": "pairs"}),
    ("power", {"run": "pw", "arm": "treatment->>'gender'", "arms": "f,m", "pair_on": "model", "d": 0.5}),
    ("bias", {"run": "pw", "feature": ["sql:metadata->>'lang' = 'en'"], "family": ["m0=acme"], "correction": "bh"}),
    ("bias", {"run": "pw", "against": "prompts", "raters": "jury", "feature": ["chars"]}),
    ("bias", {"run": "pa", "feature": ["chars", "position"]}),
]


@pytest.mark.parametrize(("name", "params"), STATS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(STATS)])
def test_each_statistic_runs_and_is_recorded(client: Any, name: str, params: dict[str, Any]) -> None:
    r = client.post(f"/v1/stats/{name}", json=params)
    assert r.status_code == 200, r.json()
    body = r.json()
    assert body["name"] == name and body["result"]
    if name == "gap":  # the permutation test unless asked otherwise (issue 42)
        assert body["result"]["test"] == params.get("test", "permutation")
    stored = client.get(f"/v1/stats/results/{body['result_id']}").json()
    assert stored["name"] == name and stored["params"]["run" if "run" in params else "sql"]
    assert body["result_id"] in [x["result_id"] for x in client.get("/v1/stats/results").json()]


def test_inline_factors_and_keys_act_like_the_cli_files(client: Any, prepared: Path, tmp_path: Path) -> None:
    from jurybench.stats.builtin.cohens_d import cohens_d
    from jurybench.stats.builtin.item_spearman import item_spearman
    from jurybench.store import connect

    params = {"run": "pw", "arm": "treatment->>'gender'", "arms": "f,m", "boot": 100}
    api = client.post("/v1/stats/cohens-d", json={**params, "factors": {"coherence": "craft", "complexity": "craft"}})
    factor_file = write(tmp_path / "f.csv", "criterion,factor\ncoherence,craft\ncomplexity,craft\n")
    key_file = write(tmp_path / "k.csv", "criterion,key\ncoherence,-1\n")
    spearman = client.post(
        "/v1/stats/item-spearman",
        json={**{k: v for k, v in params.items() if k != "boot"}, "by": "metadata->>'lang'", "keys": {"coherence": -1}},
    )
    con = connect(prepared, read_only=True)
    direct = cohens_d.compute(con, "pw", arm="treatment->>'gender'", arms=("f", "m"), factor_file=factor_file, boot=100)
    keyed = item_spearman.compute(
        con, "pw", arm="treatment->>'gender'", arms=("f", "m"), by="metadata->>'lang'", key_file=key_file
    )
    con.close()
    craft = api.json()["result"]["cells"]["all"]["effects"]["factor:craft"]["d_avg"]["value"]
    assert craft == pytest.approx(direct["cells"]["all"]["effects"]["factor:craft"]["d_avg"]["value"])
    got = spearman.json()["result"]["keyed_differences"]
    assert set(got) == set(keyed["keyed_differences"]) == {"de", "en"}
    for lang, values in keyed["keyed_differences"].items():
        assert got[lang] == pytest.approx([float(v) for v in values])


def test_statistics_compute_what_the_library_computes(client: Any, prepared: Path) -> None:
    from jurybench.stats.builtin.friedman import friedman
    from jurybench.store import connect

    api = client.post("/v1/stats/friedman", json={"run": "pw", "by": "model"}).json()["result"]
    con = connect(prepared, read_only=True)
    direct = friedman.compute(con, "pw", by="model")
    con.close()
    assert api["criteria"]["coherence"]["chi2"] == pytest.approx(direct["criteria"]["coherence"]["chi2"])
    assert api["criteria"]["coherence"]["p"] == pytest.approx(direct["criteria"]["coherence"]["p"])


@pytest.mark.parametrize(
    ("name", "params", "status", "message"),
    [
        ("directional", {"run": "nope"}, 400, "no run 'nope'"),
        ("directional", {"run": "pa", "level": "panel"}, 422, "body.level"),
        ("gap", {"run": "pa", "by": "1; DROP TABLE items"}, 400, "not one SQL expression"),
        ("welch", {"run": "pw", "groups": "m0"}, 400, "two comma-separated values"),
        (
            "cohens-d",
            {"run": "pw", "arm": "treatment->>'gender'", "arms": "f,m", "baselines": "none"},
            400,
            "no d baselines named 'none'",
        ),
        ("disparity", {"sql": "DELETE FROM items"}, 400, "only a single SELECT"),
        ("directional", {"run": "pa", "colour": 1}, 422, "body.colour"),
    ],
)
def test_statistics_errors(client: Any, name: str, params: dict[str, Any], status: int, message: str) -> None:
    r = client.post(f"/v1/stats/{name}", json=params)
    assert r.status_code == status and message in r.json()["error"], r.json()
    assert client.post("/v1/stats/nosuch", json={}).status_code == 404


def test_calibration_fit_list_apply(client: Any) -> None:
    r = client.post(
        "/v1/calibrations",
        json={"run": "pw", "name": "cal1", "group_by": "prompt", "folds": 3, "boot": 20, "criteria": ["coherence"]},
    )
    assert r.status_code == 201, r.json()
    artifact = r.json()["artifact"]
    weights = artifact["criteria"]["coherence"]["weights"] if "criteria" in artifact else None
    assert artifact["name"] == "cal1" and weights is not None
    listed = client.get("/v1/calibrations").json()
    assert [c["name"] for c in listed] == ["cal1"]
    applied = client.post("/v1/calibrations/cal1/apply", json={"run": "pw"})
    assert applied.status_code == 200, applied.json()
    n = client.post("/v1/sql", json={"query": "SELECT count(*) FROM calibrated_scores WHERE run_id = 'pw'"}).json()
    assert n["rows"][0][0] > 0
    assert client.post("/v1/calibrations/nosuch/apply", json={"run": "pw"}).status_code == 404
    assert client.post("/v1/calibrations/../x/apply", json={"run": "pw"}).status_code in (404, 422)
    bad = client.post("/v1/calibrations", json={"run": "nope", "name": "c2"})
    assert bad.status_code == 400
    # A job may use a stored calibration by name (aggregation calibrated), never by path.
    job = client.post(
        "/v1/jobs",
        json={
            "rubric": "story-quality",
            "where": "dataset = 'pw'",
            "jury": {
                "jurors": ["sim/a,noise=0.3", "sim/b,noise=0.8", "sim/c,noise=1.2"],
                "aggregation": "calibrated",
                "calibration": "cal1",
            },
        },
    )
    assert job.status_code == 202, job.json()
    by_path = client.post(
        "/v1/jobs",
        json={
            "rubric": "story-quality",
            "where": "dataset = 'pw'",
            "jury": {"jurors": ["sim/a"], "aggregation": "calibrated", "calibration": "/etc/passwd"},
        },
    )
    assert by_path.status_code == 422


@pytest.mark.parametrize("field", ["by", "block", "where"])
def test_friedman_with_a_misspelt_column_is_a_400_not_a_500(client: Any, field: str) -> None:
    # The clean-up's DROP TABLE ran in the aborted transaction and failed: a 500 (issue 27).
    value = "nope = 1" if field == "where" else "nope"
    r = client.post("/v1/stats/friedman", json={"run": "pw", field: value})
    assert r.status_code == 400 and "nope" in r.json()["error"], r.text
    ok = client.post("/v1/stats/friedman", json={"run": "pw"})
    assert ok.status_code == 200, ok.text


def test_a_statistic_left_with_its_defaults_gives_what_the_cli_and_python_give(client: Any, prepared: Path) -> None:
    """The HTTP bodies are the statistics' own parameters: friedman and kendall over HTTP once
    defaulted 'by' to nothing, so at the juror level they grouped by juror alone while the CLI
    and Python grouped by juror and model."""
    import jurybench as jb

    served = client.post("/v1/stats/friedman", json={"run": "pw", "level": "juror"})
    assert served.status_code == 200, served.json()
    local = jb.stats.friedman(prepared, "pw", level="juror").attrs["result"]
    groups = sorted(next(iter(served.json()["result"]["criteria"].values()))["means"])
    assert groups == sorted(next(iter(local["criteria"].values()))["means"])
    assert all(" / " in g for g in groups)  # juror / model, as the CLI's default --by model gives


def test_agreement_over_http_is_what_python_and_the_cli_give(client: Any, prepared: Path, tmp_path: Path) -> None:
    """POST /v1/agreement is 'jurybench agreement --format json' (one declaration), on a pointwise
    run with two annotators."""
    import json
    import shutil

    from typer.testing import CliRunner

    from jurybench import api
    from jurybench.cli import app
    from jurybench.stats import jsonable

    db = tmp_path / "mine.duckdb"
    shutil.copy(prepared, db)
    for body in ({"run": "pw", "boot": 30, "seed": 3, "criteria": ["coherence"]}, {"run": "pw", "boot": 30}):
        r = client.post("/v1/agreement", json=body)
        assert r.status_code == 200, r.json()
        python = jsonable(api.agreement(db, **body).attrs["report"])
        assert r.json() == python
        flags = ["--run", body["run"], "--boot", "30", "--db", str(db), "--format", "json"]
        flags += ["--seed", "3", "--criterion", "coherence"] if "seed" in body else []
        out = CliRunner().invoke(app, ["agreement", *flags])
        assert out.exit_code == 0, out.output
        assert jsonable(json.loads(out.output)) == python
    coherence = client.post("/v1/agreement", json={"run": "pw", "boot": 30}).json()
    assert {b["criterion"] for b in coherence} >= {"coherence"} and coherence[0]["n_annotators"] == 2
    assert client.post("/v1/agreement", json={"run": "pw", "invalid": "maybe"}).status_code == 422
    assert client.post("/v1/agreement", json={"run": "pw", "boot": 10**6}).status_code == 422
    missing = client.post("/v1/agreement", json={"run": "nosuch"})
    assert missing.status_code in (400, 404) and "nosuch" in missing.json()["error"]


def test_bias_over_http_refuses_what_the_cli_refuses(client: Any) -> None:
    """A classification run, an unknown feature, a bad choice: 400 or 422 in one line, never a 500."""
    labels = client.post("/v1/stats/bias", json={"run": "emo"})
    assert labels.status_code == 400 and "reads pointwise runs" in labels.json()["error"]
    unknown = client.post("/v1/stats/bias", json={"run": "pw", "feature": ["loudness"]})
    assert unknown.status_code == 400 and "'loudness' is not known" in unknown.json()["error"]
    assert client.post("/v1/stats/bias", json={"run": "pw", "correction": "x"}).status_code in (400, 422)
    assert client.post("/v1/stats/bias", json={"run": "pw", "feature": ["x" * 3000]}).status_code == 422


def test_reports_over_http_are_what_python_gives(client: Any, prepared: Path) -> None:
    """POST /v1/reports/classification and /v1/reports/preference: 'jurybench report ...' with
    --format json, from one declaration each; a run of another kind is a 400 in one line."""
    from jurybench import api

    r = client.post("/v1/reports/classification", json={"run": "emo"})
    assert r.status_code == 200, r.json()
    assert r.json() == api.classification_answers(prepared, "emo").to_dict("records")
    assert sum(row["answers"] for row in r.json()) == 30 and {row["language"] for row in r.json()} == {"en", "de"}
    wrong = client.post("/v1/reports/preference", json={"run": "emo"})
    assert wrong.status_code == 400 and "preference rubric" in wrong.json()["error"]
    assert client.post("/v1/reports/classification", json={"run": "pw"}).status_code == 400
    assert client.post("/v1/reports/classification", json={"run": ""}).status_code == 422
    assert client.post("/v1/reports/preference", json={"run": "emo", "extra": 1}).status_code == 422
