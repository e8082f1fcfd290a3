"""Cost-aware jury selection (issue 31): hand-worked Pareto fronts, choices and costs, the
held-out error checked against a plain numpy reimplementation, simulated jurors of known
accuracy and price whose cheap good juror is recovered, and the three faces."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

import jurybench as jb
from jurybench.calibration import SubJury
from jurybench.calibration._selection import PilotRows, held_out_errors, pareto_front
from jurybench.calibration._selection import choose_sub_jury as choose
from jurybench.rubric import load_rubric
from tests.conftest import run_cli

GOOD_CHEAP = "sim/good-cheap,noise=0.3,cost=0.001,latency_ms=400"
GOOD_DEAR = "sim/good-dear,noise=0.3,cost=0.02,latency_ms=2000"
BAD = ["sim/bad-a,noise=2,cost=0.0005,latency_ms=300", "sim/bad-b,noise=2.5,cost=0.0008,latency_ms=250"]


def _candidate(name: str, folds: list[float], cost: float | None) -> SubJury:
    return SubJury((name,), (name,), float(np.mean(folds)), folds, cost, None)


def test_the_pareto_front_by_hand() -> None:
    # (error, cost): a (1.0, $1) b (0.5, $2) c (0.6, $3: b is cheaper and better) d (0.4, unknown: highest cost)
    a, b, c, d = (
        _candidate("a", [1.0], 1.0),
        _candidate("b", [0.5], 2.0),
        _candidate("c", [0.6], 3.0),
        _candidate("d", [0.4], None),
    )
    pareto_front([a, b, c, d])
    assert [x.pareto for x in (a, b, c, d)] == [True, True, False, True]


def test_the_non_inferiority_test_by_hand() -> None:
    """Issue 42, item 4. Four rows in four groups; the full jury's squared errors 1, 1, 1, 1,
    a candidate's 1.21, 1.00, 1.44, 0.81: the paired differences 0.21, 0, 0.44, -0.19 have mean
    0.115 (the MSE difference); their deviations 0.095, -0.115, 0.325, -0.305 square to 0.2209,
    so SE = sqrt(4/3 x 0.2209) / 4 = 0.135677; the 95 % upper bound is 0.115 + 2.353363 x
    0.135677 = 0.434297, and against a margin of 0.3 the p-value is the t(3) cdf at
    (0.115 - 0.3) / 0.135677 = -1.363531."""
    from scipy.stats import t

    from jurybench.calibration._selection import non_inferiority

    diff, upper, p = non_inferiority(np.array([1.21, 1.0, 1.44, 0.81]), np.ones(4), ["g1", "g2", "g3", "g4"], 0.3)
    assert diff == pytest.approx(0.115, abs=1e-12)
    assert upper == pytest.approx(0.434297, abs=1e-5)
    assert p == pytest.approx(float(t.cdf(-1.363531, 3)), abs=1e-6)


def _with_rows(name: str, squared: list[float], cost: float | None, step: int) -> SubJury:
    c = _candidate(name, [float(np.sqrt(np.mean(squared)))], cost)
    c.sq_errors, c.path_step = np.array(squared), step
    return c


def test_the_price_path_drops_the_dearest_first() -> None:
    from jurybench.calibration._selection import price_path

    jurors = [("a", "a"), ("b", "b"), ("c", "c"), ("d", "d")]
    cost = {"a": 1.0, "b": 5.0, "c": None, "d": 1.0}  # c's price unknown: the dearest
    latency = {"a": 100.0, "b": 10.0, "c": None, "d": 300.0}  # a and d cost the same: d is slower
    assert price_path(jurors, cost, latency) == [(0, 1, 2, 3), (0, 1, 3), (0, 3), (0,)]


def test_the_choice_by_hand() -> None:
    groups = [f"g{i}" for i in range(8)]
    # The price path: full ($10), then close ($1), then far ($0.5).
    full = _with_rows("full", [0.25, 0.36, 0.16, 0.30, 0.20, 0.28, 0.22, 0.27], 10.0, 0)
    close = _with_rows("close", [0.24, 0.37, 0.17, 0.29, 0.21, 0.27, 0.23, 0.26], 1.0, 1)  # all but equal
    far = _with_rows("far", [0.9, 1.2, 0.8, 1.0, 0.95, 1.1, 0.85, 1.05], 0.5, 2)  # MSE about four times the full's
    chosen, rule, margin = choose([full, close, far], full, max_error=None, budget=None, subjects=100, groups=groups)
    assert margin == pytest.approx(0.2 * np.mean(full.sq_errors))  # the default: a fifth of the full jury's MSE
    assert chosen is close and close.no_worse_than_full and not far.no_worse_than_full
    assert "shown by price path" in rule and "1 of 2 steps shown" in rule and close.shown_by == "price path"
    assert close.upper < margin < far.mse_minus_full
    # A margin too small to show anything: the full jury, said so.
    chosen, rule, _ = choose(
        [full, close, far], full, max_error=None, budget=None, subjects=100, groups=groups, margin=0.0001
    )
    assert chosen is full and "no sub-jury is shown within" in rule
    chosen, _, _ = choose([full, close, far], full, max_error=1.0, budget=None, subjects=100, groups=groups)
    assert chosen is far  # the cheapest with error <= 1.0 (0.991)
    chosen, _, _ = choose([full, close, far], full, max_error=None, budget=60.0, subjects=100, groups=groups)
    assert chosen is far  # $0.5 x 100 = $50 fits, 'close' ($100) does not
    chosen, _, _ = choose([full, close, far], full, max_error=None, budget=100.0, subjects=100, groups=groups)
    assert chosen is close  # both fit: the more accurate
    with pytest.raises(jb.JurybenchError, match=r"no sub-jury has a held-out error of at most 0.1; the lowest is"):
        choose([full, close, far], full, max_error=0.1, budget=None, subjects=100, groups=groups)
    with pytest.raises(jb.JurybenchError, match=r"no sub-jury fits \$10 for 100 subjects; the cheapest needs \$50"):
        choose([full, close, far], full, max_error=None, budget=10.0, subjects=100, groups=groups)


def test_the_held_out_error_is_what_numpy_gives_fold_by_fold() -> None:
    """The mean method: per criterion, a line fitted on the training rows from the sub-jury's mean."""
    rng = np.random.default_rng(3)
    n = 40
    truth = rng.normal(3, 1, n)
    x = np.column_stack([truth + rng.normal(0, s, n) for s in (0.2, 0.8, 1.5)])
    x[5, 1] = np.nan  # a missing vote: the mean of the others present
    rows = [(f"s{i // 2}", "c1" if i % 2 else "c2") for i in range(n)]
    data = PilotRows("pointwise", rows, [f"g{i % 8}" for i in range(n)], x, truth, ["c1", "c2"])
    folds = [(np.flatnonzero(np.arange(n) % 4 != k), np.flatnonzero(np.arange(n) % 4 == k)) for k in range(4)]
    got, _ = held_out_errors(data, [0, 1], "mean", folds)
    dims = np.array([d for _, d in rows])
    expected = []
    for train, test in folds:
        pred = np.empty(len(test))
        for d in ("c1", "c2"):
            tr, te = train[dims[train] == d], test[dims[test] == d]
            feature = np.nanmean(x[:, [0, 1]], axis=1)
            slope, intercept = np.polyfit(feature[tr], truth[tr], 1)
            pred[dims[test] == d] = intercept + slope * feature[te]
        expected.append(float(np.sqrt(np.mean((pred - truth[test]) ** 2))))
    assert got == pytest.approx(expected, rel=1e-9)


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 stories on 20 prompts judged by two good jurors (one cheap, one dear) and two noisy cheap
    ones, twice each for the cheap good one; three simulated annotators per story."""
    db = tmp_path_factory.mktemp("sel") / "pilot.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k}", "response": f"Story {k}", "prompt": f"p{k % 20}"} for k in range(60)])
        jurors = [GOOD_CHEAP + ",samples=2", GOOD_DEAR, *BAD]
        jb.score(store, rubric="story-quality", jury=jurors, run="pilot")
        store.simulate_annotations(rubric="story-quality", annotators=3, noise=0.5)
    return db


def test_the_cheap_good_juror_is_recovered_and_costs_are_the_calls(pilot: Path) -> None:
    selection = jb.select_jury(pilot, "pilot")
    assert selection.target == "human" and selection.exhaustive and len(selection.candidates) == 15
    assert selection.chosen.jurors == ("sim/good-cheap",)
    # Hand-worked costs: 2 samples x $0.001 per story for the cheap good juror; the full jury
    # 0.002 + 0.02 + 0.0005 + 0.0008 = $0.0233 per story; latency is the slowest juror's.
    assert selection.chosen.cost_per_subject == pytest.approx(0.002)
    assert selection.full.cost_per_subject == pytest.approx(0.0233)
    assert selection.full.latency_ms == 2000 and selection.chosen.latency_ms == 400
    assert selection.saving() == pytest.approx(0.002 / 0.0233)
    assert selection.chosen.error < selection.full.error  # the noisy jurors hurt the plain mean
    front = {c.jurors for c in selection.pareto}
    assert ("sim/good-cheap",) in front and ("sim/good-dear",) not in front  # same accuracy, ten times the price
    calibrated = jb.select_jury(pilot, "pilot", method="calibrated")
    assert "sim/good-cheap" in calibrated.chosen.jurors and calibrated.chosen.cost_per_subject < 0.02


def test_the_cli_writes_a_jury_file_that_scores_from_the_cache(pilot: Path, tmp_path: Path) -> None:
    out = tmp_path / "chosen.yaml"
    shown = run_cli("jury", "select", "--run", "pilot", "--out", str(out), "--db", str(pilot))
    assert shown.exit_code == 0, shown.stderr
    assert (
        "chosen" in shown.stdout and "sim/good-cheap" in shown.stdout and "8.6% of the full jury's cost" in shown.stdout
    )
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert written["aggregation"] == "mean"
    assert written["jurors"] == [
        {"model": "sim/good-cheap", "cost": 0.001, "latency_ms": 400, "noise": 0.3, "samples": 2}
    ]
    again = run_cli(
        "score", "--jury", str(out), "-r", "story-quality", "--run", "chosen", "--no-progress", "--db", str(pilot)
    )
    assert again.exit_code == 0 and "0 called" in again.stdout  # the same juror: every answer is stored
    as_json = json.loads(run_cli("jury", "select", "--run", "pilot", "--format", "json", "--db", str(pilot)).stdout)
    assert as_json["chosen"]["jurors"] == ["sim/good-cheap"] and len(as_json["candidates"]) == 15
    assert as_json["margin"] > 0 and as_json["chosen"]["shown_by"] in ("price path", "Holm")
    strict = run_cli("jury", "select", "--run", "pilot", "--margin", "0", "--format", "json", "--db", str(pilot))
    refused = json.loads(strict.stdout)  # nothing is better than the full jury by a margin of 0 shown... unless it is
    assert refused["margin"] == 0 and (refused["chosen"]["jurors"] == refused["full"]["jurors"]) == (
        "no sub-jury is shown" in refused["rule"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-error", "0.01"], "no sub-jury has a held-out error of at most 0.01"),
        (["--max-error", "1", "--budget", "2"], "give --max-error or --budget, not both"),
        (["--target", "people"], "--target 'people' is not valid"),
        (["--folds", "1"], "--folds must be at least 2"),
        (["--budget", "nan"], "--budget must be a finite number"),
        (["--margin", "-1"], "--margin must be at least 0"),
        (["--alpha", "1.5"], "--alpha must be at least 1e-10 and less than 1"),
    ],
)
def test_bad_requests_are_one_line_and_exit_2(pilot: Path, args: list[str], message: str) -> None:
    done = run_cli("jury", "select", "--run", "pilot", *args, "--db", str(pilot))
    assert done.exit_code == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_over_http(pilot: Path, tmp_path: Path) -> None:
    import shutil

    from tests.service.conftest import make_client

    db = tmp_path / "copy.duckdb"
    shutil.copy(pilot, db)
    with make_client(db) as client:
        margin = client.post("/v1/jury/select", json={"run": "pilot", "margin": 0.5, "alpha": 0.1})
        assert margin.status_code == 200 and margin.json()["margin"] == 0.5 and margin.json()["alpha"] == 0.1
        assert client.post("/v1/jury/select", json={"run": "pilot", "margin": -1}).status_code == 422
        answer = client.post("/v1/jury/select", json={"run": "pilot", "budget": 0.13, "subjects": 60})
        assert answer.status_code == 200, answer.json()
        body = answer.json()
        assert body["chosen"]["jurors"] == ["sim/good-cheap"] and "model: sim/good-cheap" in body["jury_file"]
        assert client.post("/v1/jury/select", json={"run": "pilot", "budget": -1}).status_code == 422
        assert client.post("/v1/jury/select", json={"run": "nope"}).status_code in (400, 404)


def _pairs_store(db: Path, rubric: str, jurors: list[str]) -> None:
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k}", "response": f"Reply {k}", "prompt": f"p{k // 2}"} for k in range(80)])
        store.import_pairs([{"pair_id": f"q{k}", "item_a": f"i{2 * k}", "item_b": f"i{2 * k + 1}"} for k in range(40)])
        jb.score(store, rubric=rubric, jury=jurors, run="pairs")


@pytest.mark.parametrize(("rubric", "kind"), [("persuasion", "pairwise"), ("preference", "preference")])
def test_pairwise_and_preference_runs_against_the_full_jury(tmp_path: Path, rubric: str, kind: str) -> None:
    """No human labels: the target is the full jury's ε; a bound on the error picks the cheapest
    sub-jury within it."""
    db = tmp_path / "p.duckdb"
    _pairs_store(
        db, rubric, ["sim/good,noise=0.2,cost=0.001", "sim/noisy,noise=3,cost=0.0001", "sim/dear,noise=0.2,cost=0.05"]
    )
    loose = jb.select_jury(db, "pairs", max_error=10.0)
    assert loose.target == "jury" and loose.kind == kind and loose.n_rows == 40 * len(load_rubric(rubric).dimensions)
    assert loose.chosen.jurors == ("sim/noisy",)  # the cheapest under a loose bound
    good = next(c for c in loose.candidates if c.jurors == ("sim/good",))
    noisy = next(c for c in loose.candidates if c.jurors == ("sim/noisy",))
    assert good.error < noisy.error
    bound = jb.select_jury(db, "pairs", max_error=good.error)
    assert bound.chosen.jurors == ("sim/good",)  # the cheapest as good as the good juror


def test_beyond_ten_jurors_a_greedy_path(tmp_path: Path) -> None:
    db = tmp_path / "many.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k}", "response": f"S {k}", "prompt": f"p{k % 10}"} for k in range(30)])
        jurors = [f"sim/j{k},noise={0.2 + 0.2 * k:.1f},cost={0.001 * (k + 1):.3f}" for k in range(11)]
        jb.score(store, rubric="story-quality", jury=jurors, run="many")
    selection = jb.select_jury(db, "many", target="jury", max_error=100.0)
    assert not selection.exhaustive
    sizes = sorted(len(c.jurors) for c in selection.candidates)
    # The singletons, the greedy path and the price path (up to 9 sub-juries of 2..10 not on the greedy one)
    assert sizes.count(1) == 11 and sizes[-1] == 11 and len(selection.candidates) <= 11 + 10 + 9
    on_path = sorted((c for c in selection.candidates if c.path_step is not None), key=lambda c: c.path_step or 0)
    assert [len(c.jurors) for c in on_path] == list(range(11, 0, -1))  # the dearest dropped at each step
    assert on_path[-1].jurors == ("sim/j0",)
    assert selection.chosen.jurors == ("sim/j0",)  # the cheapest of all


def test_a_run_with_one_juror_has_nothing_to_select(tmp_path: Path) -> None:
    db = tmp_path / "one.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k}", "response": f"S {k}"} for k in range(6)])
        jb.score(store, rubric="story-quality", jury=["sim/only"], run="one")
    with pytest.raises(jb.JurybenchError, match="nothing to select"):
        jb.select_jury(db, "one")


def test_a_juror_with_no_valid_answer_is_in_no_sub_jury_and_named(tmp_path: Path) -> None:
    """Issue 45: a juror whose every answer is invalid, the cheapest of the pilot. Before, the
    sub-jury of that juror alone fed NaN to least squares (LAPACK's 'DLASCL' lines on stderr and
    'a jurybench bug'); kept as the training mean, it could be chosen as the cheapest, a jury that
    would score nothing. Now it is in no candidate but the full jury, the price path goes from the
    full jury to the jurors that answered, and the report names it."""
    db = tmp_path / "silent.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k}", "response": f"S {k}", "prompt": f"p{k % 10}"} for k in range(40)])
        jurors = [GOOD_CHEAP, GOOD_DEAR, "sim/broken,invalid_rate=1.0,cost=0.00001,seed=7"]
        jb.score(store, rubric="story-quality", jury=jurors, run="pilot")
        store.simulate_annotations(rubric="story-quality", annotators=3, noise=0.5)
    for method in ("mean", "calibrated"):
        selection = jb.select_jury(db, "pilot", method=method)
        assert selection.without_valid_answers == ["sim/broken"]
        subsets = {c.jurors for c in selection.candidates}
        # the two that answered, each alone and together, and the full jury
        assert subsets == {
            ("sim/good-cheap",),
            ("sim/good-dear",),
            ("sim/good-cheap", "sim/good-dear"),
            ("sim/good-cheap", "sim/good-dear", "sim/broken"),
        }, subsets
        on_path = sorted((c for c in selection.candidates if c.path_step is not None), key=lambda c: c.path_step or 0)
        assert [c.jurors for c in on_path] == [
            ("sim/good-cheap", "sim/good-dear", "sim/broken"),
            ("sim/good-cheap", "sim/good-dear"),
            ("sim/good-cheap",),
        ]
        assert "sim/broken" not in selection.chosen.jurors
    shown = run_cli("jury", "select", "--run", "pilot", "--db", str(db))
    assert shown.exit_code == 0 and shown.stderr == "", shown.stderr
    assert "in no sub-jury: sim/broken (no valid answers" in shown.stdout


def _off_path(name: str, diffs: list[float]) -> SubJury:
    """A candidate off the price path whose squared errors exceed a zero full jury's by ``diffs``."""
    c = _candidate(name, [1.0], 1.0)
    c.sq_errors = np.array(diffs)
    return c


def test_every_mark_is_the_bound_it_prints_and_holm_divides() -> None:
    """Issue 57, items 3 and 4. Four candidates off the price path, four groups of one row; the
    full jury's squared errors are 0, so each candidate's paired differences are its own. With
    differences d1..d4 = c + (-0.1, 0, 0.1, 0) the SE is sqrt(4/3 x 0.02) / 4 = 0.040825 and
    t(3) quantiles are 3.182446 (one-sided 2.5 %: alpha / 2 for one test), 4.176535 (1.25 %),
    4.856657 (0.8333 %) and 5.391949 (0.625 %: (alpha / 2) / 4, Holm's first step).
    Means 0.00, 0.01, 0.02, 0.03 against a margin of 0.2:
    - 'a' (mean 0.00, smallest p) is tested at 0.625 %: 0.00 + 5.391949 x 0.040825 = 0.220125 > 0.2,
      so Holm stops there and nothing is shown, although each bound at 2.5 % (0.13 + mean) is
      below the margin: Holm without its division would show all four.
    With a margin of 0.25 'a' passes (0.220125); 'b' at 0.8333 %: 0.01 + 4.856657 x 0.040825 =
    0.208275 -> max(0.220125, 0.208275) = 0.220125 passes; 'c' at 1.25 %: 0.02 + 0.170508 =
    0.190508 -> 0.220125 passes; 'd' at 2.5 %: 0.03 + 0.129923 = 0.159923 -> passes."""
    groups = ["g1", "g2", "g3", "g4"]
    full = _with_rows("full", [0.0, 0.0, 0.0, 0.0], 10.0, 0)
    shape = [-0.1, 0.0, 0.1, 0.0]
    cands = [_off_path(n, [m + d for d in shape]) for n, m in zip("abcd", (0.0, 0.01, 0.02, 0.03), strict=True)]
    chosen, rule, _ = choose([full, *cands], full, max_error=None, budget=None, subjects=10, groups=groups, margin=0.2)
    assert chosen is full and "no sub-jury is shown" in rule
    assert [c.no_worse_than_full for c in cands] == [False] * 4
    assert cands[0].upper == pytest.approx(0.220125, abs=1e-5)
    # Every row's mark is its printed bound against the margin: no "no" with a bound inside it.
    assert all(c.upper > 0.2 for c in cands)
    chosen, _, _ = choose([full, *cands], full, max_error=None, budget=None, subjects=10, groups=groups, margin=0.25)
    assert [c.no_worse_than_full for c in cands] == [True] * 4 and {c.shown_by for c in cands} == {"Holm"}
    assert [c.upper for c in cands] == pytest.approx([0.220125] * 4, abs=1e-5)


def test_a_path_step_after_a_failed_one_is_not_shown_and_its_bound_says_so() -> None:
    """The price path stops at its first step above the margin: a later step's adjusted bound is
    the largest on the way to it, so its mark and its printed bound agree. Path: full, then 'x'
    (mean 0.15, bound at 2.5 % 0.15 + 0.129923 = 0.279923), then 'y' (mean 0.0, 0.129923);
    margin 0.2: 'x' fails, 'y' is not reached by the path (bound max(0.279923, 0.129923)); by
    Holm (m = 2) 'y' has the smaller p and is tested at 1.25 %: 0.0 + 4.176535 x 0.040825 =
    0.170508 <= 0.2: shown by Holm, with that bound."""
    groups = ["g1", "g2", "g3", "g4"]
    full = _with_rows("full", [0.0, 0.0, 0.0, 0.0], 10.0, 0)
    shape = [-0.1, 0.0, 0.1, 0.0]
    x = _with_rows("x", [0.15 + d for d in shape], 5.0, 1)
    y = _with_rows("y", [0.0 + d for d in shape], 1.0, 2)
    chosen, rule, _ = choose([full, x, y], full, max_error=None, budget=None, subjects=10, groups=groups, margin=0.2)
    assert chosen is y and y.shown_by == "Holm" and not x.no_worse_than_full
    assert y.upper == pytest.approx(0.170508, abs=1e-5) and x.upper == pytest.approx(0.279923, abs=1e-5)
    assert "0 of 2 steps shown" in rule


def test_every_row_printed_is_marked_by_its_own_bound(pilot: Path) -> None:
    """Issue 57, item 3: the table prints each row's adjusted bound and the margin it must beat,
    and a row is marked 'yes' exactly when its bound is at most the margin."""
    selection = jb.select_jury(pilot, "pilot")
    for c in selection.candidates:
        if c is not selection.full:
            assert c.no_worse_than_full == (c.upper <= selection.margin)
    shown = run_cli("jury", "select", "--run", "pilot", "--db", str(pilot))
    assert shown.exit_code == 0, shown.stderr
    assert f"adjusted_upper (<= {selection.margin:.4g}?)" in " ".join(shown.stdout.split())
    assert f"is at most the margin {selection.margin:.4g}" in shown.stdout
