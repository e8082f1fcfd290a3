"""Bradley–Terry leaderboards: a hand-worked fit, an independent fit, planted strengths, orders."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from jurybench.stats.functions import NotIdentifiable, bradley_terry, elo, win_rate
from tests.conftest import run_cli, write


def _battles(counts: dict[tuple[int, int], tuple[int, int]]) -> tuple[list[int], list[int], list[float]]:
    """(first, second, outcome) from {(i, j): (wins of i, wins of j)}."""
    first, second, outcome = [], [], []
    for (i, j), (wi, wj) in counts.items():
        first += [i] * (wi + wj)
        second += [j] * (wi + wj)
        outcome += [1.0] * wi + [0.0] * wj
    return first, second, outcome


def test_a_hand_worked_three_model_fit() -> None:
    # A beats B 2 of 3, B beats C 2 of 3, A beats C 4 of 5. Strengths with b_A - b_B = ln 2 and
    # b_B - b_C = ln 2 predict exactly these rates (2/3, 2/3 and 4/(4+1)), so the likelihood
    # equations (expected wins = observed wins for every model) hold there: that is the MLE.
    first, second, outcome = _battles({(0, 1): (2, 1), (1, 2): (2, 1), (0, 2): (4, 1)})
    beta = bradley_terry(first, second, outcome, 3, anchor=2)
    assert beta == pytest.approx([2 * math.log(2), math.log(2), 0.0], abs=1e-9)
    # Elo: 1000 + 400 * b / ln 10, so A is 400 * log10(4) = 240.82 points above C.
    assert elo(beta) == pytest.approx([1000 + 400 * math.log10(4), 1000 + 400 * math.log10(2), 1000], abs=1e-6)
    assert win_rate(beta, 2) == pytest.approx([4 / 5, 2 / 3, 1 / 2])


def test_equal_to_an_independent_logistic_regression() -> None:
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(3)
    truth = np.array([0.0, 0.4, -0.3, 1.1, 0.2])
    first = rng.integers(0, 5, 600)
    second = (first + rng.integers(1, 5, 600)) % 5
    p = 1 / (1 + np.exp(-(truth[first] - truth[second])))
    outcome = (rng.random(600) < p).astype(float)
    outcome[:40] = 0.5  # some ties: half a win each way
    beta = bradley_terry(first, second, outcome, 5, anchor=0)
    # The same design for scikit-learn: +1 first, -1 second, the anchor's column dropped; a tie
    # as two rows (a win and a loss) of weight 1/2; no intercept, no penalty.
    x = np.zeros((600, 5))
    x[np.arange(600), first] += 1
    x[np.arange(600), second] -= 1
    x = x[:, 1:]
    tie = outcome == 0.5
    xs = np.vstack([x[~tie], x[tie], x[tie]])
    ys = np.concatenate([outcome[~tie], np.ones(tie.sum()), np.zeros(tie.sum())])
    ws = np.concatenate([np.ones((~tie).sum()), np.full(tie.sum(), 0.5), np.full(tie.sum(), 0.5)])
    fit = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000)  # no penalty
    fit.fit(xs, ys, sample_weight=ws)
    assert beta[1:] == pytest.approx(fit.coef_[0], abs=1e-6)


def test_planted_strengths_are_recovered_and_the_order_does_not_matter() -> None:
    rng = np.random.default_rng(7)
    truth = np.array([0.0, 0.5, 1.0, -0.5])
    first = rng.integers(0, 4, 20_000)
    second = (first + rng.integers(1, 4, 20_000)) % 4
    p = 1 / (1 + np.exp(-(truth[first] - truth[second])))
    outcome = (rng.random(20_000) < p).astype(float)
    beta = bradley_terry(first, second, outcome, 4, anchor=0)
    assert beta == pytest.approx(truth, abs=0.06)
    # The same battles with the presentation swapped (and outcomes with it): the same ratings.
    swapped = bradley_terry(second, first, 1 - outcome, 4, anchor=0)
    assert swapped == pytest.approx(beta, abs=1e-9)


def test_a_model_that_never_loses_has_no_finite_rating() -> None:
    first, second, outcome = _battles({(0, 1): (5, 0), (1, 2): (2, 2)})
    with pytest.raises(NotIdentifiable, match="every battle"):
        bradley_terry(first, second, outcome, 3)
    with pytest.raises(NotIdentifiable, match="never met"):
        bradley_terry([0, 1], [1, 0], [1.0, 1.0], 4)


ITEMS = "item_id,prompt,response,model\n" + "".join(
    f"{m}-{p},prompt {p},Answer {p} by {m}.,{m}\n" for p in range(12) for m in ("m1", "m2", "m3")
)
PAIRS = "pair_id,item_a,item_b\n" + "".join(
    f"p{p}-{a}{b},{a}-{p},{b}-{p}\n" for p in range(12) for a, b in (("m1", "m2"), ("m2", "m3"), ("m1", "m3"))
)


def test_the_leaderboard_of_a_preference_run(tmp_path: Path) -> None:
    db = str(tmp_path / "lb.duckdb")
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", db).exit_code == 0
    assert run_cli("pairs", "import", str(write(tmp_path / "p.csv", PAIRS)), "--db", db).exit_code == 0
    scored = run_cli(
        "score",
        "--rubric",
        "preference",
        "--run",
        "lb",
        "--juror",
        "sim/pick,noise=0.8",
        "--juror",
        "sim/other,noise=1.2,seed=5",
        "--no-progress",
        "--db",
        db,
    )
    assert scored.exit_code == 0, scored.stderr
    import json

    import jurybench as jb

    with jb.open(db) as store:
        board = jb.stats.leaderboard(store, "lb", anchor="m1", boot=200)
        result = board.attrs["result"]
        models = result["boards"]["jury"]["models"]
        assert {m["model"] for m in models} == {"m1", "m2", "m3"}
        assert next(m for m in models if m["model"] == "m1")["rating"] == pytest.approx(1000.0)
        for m in models:  # every pair judged in both orders: 12 prompts x 2 opponents x 2 orders
            assert m["battles"] == 48 and m["wins"] + m["losses"] + m["ties"] == 48
            assert m["ci_low"] <= m["rating"] <= m["ci_high"] or m["model"] == "m1"
            assert 1 <= m["rank_low"] <= m["rank"] <= m["rank_high"] <= 3
        assert sorted(m["rank"] for m in models) == [1, 2, 3] and result["boards"]["jury"]["n_clusters"] == 12
        per_juror = jb.stats.leaderboard(store, "lb", level="juror", boot=50).attrs["result"]["boards"]
        assert set(per_juror) == {"sim/pick", "sim/other"}
    shown = run_cli("stats", "leaderboard", "--run", "lb", "--boot", "50", "--format", "json", "--db", db)
    assert shown.exit_code == 0 and json.loads(shown.stdout)["name"] == "leaderboard"
    bad = run_cli("stats", "leaderboard", "--run", "lb", "--anchor", "gpt-9", "--db", db)
    assert bad.exit_code == 2 and "--anchor 'gpt-9' is not a model of the run" in bad.stderr


def test_the_bootstrap_unit_of_a_leaderboard(tmp_path: Path) -> None:
    """prompts (default): 12 clusters; pairs: 36 (three pairs per prompt); battles: every battle
    its own (72 = 36 pairs x 2 orders); one cluster holding everything (clusters:'all') leaves
    nothing to vary, so every interval collapses onto its estimate. A unit that is not one is a
    one-line error."""
    db = str(tmp_path / "lb.duckdb")
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", db).exit_code == 0
    assert run_cli("pairs", "import", str(write(tmp_path / "p.csv", PAIRS)), "--db", db).exit_code == 0
    assert (
        run_cli(
            "score",
            "--rubric",
            "preference",
            "--run",
            "lb",
            "--juror",
            "sim/pick,noise=0.8",
            "--no-progress",
            "--db",
            db,
        ).exit_code
        == 0
    )
    import jurybench as jb

    with jb.open(db) as store:
        counts = {
            unit: jb.stats.leaderboard(store, "lb", boot=50, resample=unit).attrs["result"]["boards"]["jury"]
            for unit in ("prompts", "pairs", "battles", "clusters:'all'")
        }
        assert {u: b["n_clusters"] for u, b in counts.items()} == {
            "prompts": 12,
            "pairs": 36,
            "battles": counts["battles"]["n_battles"],
            "clusters:'all'": 1,
        }
        for m in counts["clusters:'all'"]["models"]:
            assert m["ci_low"] == pytest.approx(m["rating"]) and m["ci_high"] == pytest.approx(m["rating"])
        assert jb.stats.results(store, name="leaderboard").shape[0] == 4
    bad = run_cli("stats", "leaderboard", "--run", "lb", "--resample", "judges", "--db", db)
    assert bad.exit_code == 2 and "--resample 'judges' is not valid" in bad.stderr


def test_strong_verdicts_count_as_several_battles(tmp_path: Path) -> None:
    """A two-juror mean jury gives +1/-1 when the jurors agree and 0 (a tie) when they do not.
    With --strong 1:3 every decisive verdict counts three times, a tie once: the ratings equal a
    weighted Bradley-Terry fit (weights 3 and 1) of the same battles read from the store."""
    db = str(tmp_path / "lb.duckdb")
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", db).exit_code == 0
    assert run_cli("pairs", "import", str(write(tmp_path / "p.csv", PAIRS)), "--db", db).exit_code == 0
    assert (
        run_cli(
            "score",
            "--rubric",
            "preference",
            "--run",
            "lb",
            "--juror",
            "sim/pick,noise=0.8",
            "--juror",
            "sim/other,noise=1.2,seed=5",
            "--no-progress",
            "--db",
            db,
        ).exit_code
        == 0
    )
    import jurybench as jb

    with jb.open(db) as store:
        board = jb.stats.leaderboard(store, "lb", anchor="m1", boot=20, strong="1:3").attrs["result"]
        battles = store.sql(
            "SELECT o.presented_order, o.jury_score, a.model AS ma, b.model AS mb FROM jury_pairwise_orders o "
            "JOIN pairs p USING (pair_id) JOIN items a ON a.item_id = p.item_a JOIN items b ON b.item_id = p.item_b "
            "WHERE o.run_id = 'lb' AND o.jury_score IS NOT NULL AND a.model <> b.model"
        )
    names = ["m1", "m2", "m3"]
    first = [names.index(r.ma if r.presented_order == "AB" else r.mb) for r in battles.itertuples()]
    second = [names.index(r.mb if r.presented_order == "AB" else r.ma) for r in battles.itertuples()]
    outcome = [1.0 if s > 0 else 0.0 if s < 0 else 0.5 for s in battles.jury_score]
    weights = [3.0 if abs(s) >= 1 else 1.0 for s in battles.jury_score]
    assert 0.5 in outcome and 1.0 in outcome  # both kinds of verdict occur
    expected = elo(bradley_terry(first, second, outcome, 3, anchor=0, weights=weights))
    got = {m["model"]: m["rating"] for m in board["boards"]["jury"]["models"]}
    assert [got[n] for n in names] == pytest.approx(list(expected), abs=1e-6)
    assert board["strong"] == {"threshold": 1.0, "weight": 3}
    bad = run_cli("stats", "leaderboard", "--run", "lb", "--strong", "much:3", "--db", db)
    assert bad.exit_code == 2 and "--strong 'much:3' is not valid" in bad.stderr


def test_the_leaderboard_plot(tmp_path: Path) -> None:
    db = str(tmp_path / "lb.duckdb")
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS)), "--db", db).exit_code == 0
    assert run_cli("pairs", "import", str(write(tmp_path / "p.csv", PAIRS)), "--db", db).exit_code == 0
    assert (
        run_cli(
            "score",
            "--rubric",
            "preference",
            "--run",
            "lb",
            "--juror",
            "sim/pick,noise=0.8",
            "--no-progress",
            "--db",
            db,
        ).exit_code
        == 0
    )
    assert run_cli("stats", "leaderboard", "--run", "lb", "--level", "juror", "--boot", "50", "--db", db).exit_code == 0
    out = tmp_path / "lb.svg"
    drawn = run_cli("plot", "leaderboard", "-o", str(out), "--db", db)
    assert drawn.exit_code == 0, drawn.stderr
    text = out.read_text()
    assert "Leaderboard (preference" in text and "run lb; rubric preference" in text
    assert all(m in text for m in ("m1", "m2", "m3"))


def test_style_control_removes_a_planted_length_bias() -> None:
    """Three equally strong models that write at different lengths, judged by a judge who
    prefers the longer response (gamma = 1.5 on the normalised length difference). Raw ratings
    rank the verbose model first; with the length covariate the ratings are equal within noise
    and the coefficient is recovered."""
    from jurybench.stats.functions import bradley_terry_styled

    rng = np.random.default_rng(4)
    mean_length = [200.0, 600.0, 400.0]
    first, second, outcome, z = [], [], [], []
    for _ in range(6000):
        a, b = rng.choice(3, size=2, replace=False)
        la, lb = (mean_length[m] * rng.lognormal(0, 0.5) for m in (a, b))
        d = (la - lb) / (la + lb)
        first.append(a)
        second.append(b)
        z.append(d)
        outcome.append(float(rng.random() < 1 / (1 + np.exp(-1.5 * d))))
    raw = bradley_terry(first, second, outcome, 3)
    assert raw[1] > raw[2] > raw[0] + 0.2  # the bias shows up as strength
    b, gamma = bradley_terry_styled(first, second, outcome, np.array(z)[:, None], 3)
    assert np.abs(b).max() < 0.1
    assert gamma[0] == pytest.approx(1.5, abs=0.2)
    # Independent check of the same likelihood: an unpenalised logistic regression.
    from sklearn.linear_model import LogisticRegression

    design = np.column_stack([(np.array(first) == m).astype(float) - (np.array(second) == m) for m in (1, 2)] + [z])
    fit = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-10, max_iter=1000).fit(design, outcome)
    assert [*list(b[1:]), gamma[0]] == pytest.approx(list(fit.coef_[0]), abs=1e-5)


def test_style_control_from_the_cli(tmp_path: Path) -> None:
    """--control length,markdown reports style-adjusted ratings beside the raw ones and one
    coefficient per style feature that varies; responses of equal length leave length out."""
    import json

    rows = ["item_id,prompt,response,model"]
    for p in range(12):
        rows.append(f'm1-{p},prompt {p},"Short answer {p}.",m1')
        heading = "# Answer\n\n" if p % 2 else ""
        rows.append(
            f'm2-{p},prompt {p},"{heading}- **first** point\n- second point, at length: {"word " * (p + 5)}",m2'
        )
        bold = "**plain**" if p % 3 == 0 else "plain"
        rows.append(f'm3-{p},prompt {p},"A {bold} answer of middling length for prompt {p}{"." * p}",m3')
    db = str(tmp_path / "lb.duckdb")
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", "\n".join(rows) + "\n")), "--db", db).exit_code == 0
    assert run_cli("pairs", "import", str(write(tmp_path / "p.csv", PAIRS)), "--db", db).exit_code == 0
    assert (
        run_cli(
            "score",
            "--rubric",
            "preference",
            "--run",
            "lb",
            "--juror",
            "sim/pick,noise=0.8",
            "--juror",
            "sim/other,noise=1.2,seed=5",
            "--no-progress",
            "--db",
            db,
        ).exit_code
        == 0
    )
    done = run_cli(
        "stats",
        "leaderboard",
        "--run",
        "lb",
        "--control",
        "length,markdown",
        "--boot",
        "30",
        "--format",
        "json",
        "--db",
        db,
    )
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    board = result["boards"]["jury"]
    assert result["control"] == ["length", "headers", "lists", "bold"]
    assert set(board["style_coefficients"]) | set(board.get("style_left_out", [])) == {
        "length",
        "headers",
        "lists",
        "bold",
    }
    assert "length" in board["style_coefficients"] and "lists" in board["style_left_out"]  # only m2 writes lists
    assert all("rating_styled" in m and "rating" in m for m in board["models"])
    # the styled win rate against the baseline (the anchor, m1) is the styled ratings' logistic difference
    styled = {m["model"]: m for m in board["models"]}
    for m in styled.values():
        diff = (m["rating_styled"] - styled[board["baseline"]]["rating_styled"]) * math.log(10) / 400
        assert m["win_rate_styled"] == pytest.approx(1 / (1 + math.exp(-diff)), abs=1e-9)
        assert (
            m["win_rate_styled_low"] <= m["win_rate_styled"] <= m["win_rate_styled_high"]
            or m["model"] == board["baseline"]
        )
    assert styled[board["baseline"]]["win_rate_styled"] == pytest.approx(0.5)
    bad = run_cli("stats", "leaderboard", "--run", "lb", "--control", "emoji", "--db", db)
    assert bad.exit_code == 2 and "--control 'emoji' is not a style" in bad.stderr
    plain = tmp_path / "plain.duckdb"
    for args in (
        ("items", "import", str(write(tmp_path / "i2.csv", ITEMS))),
        ("pairs", "import", str(tmp_path / "p.csv")),
        ("score", "--rubric", "preference", "--run", "lb", "--juror", "sim/pick,noise=0.8", "--no-progress"),
    ):
        assert run_cli(*args, "--db", str(plain)).exit_code == 0
    same = json.loads(
        run_cli(
            "stats",
            "leaderboard",
            "--run",
            "lb",
            "--control",
            "length",
            "--boot",
            "20",
            "--format",
            "json",
            "--db",
            str(plain),
        ).stdout
    )["result"]["boards"]["jury"]
    assert same["style_left_out"] == ["length"] and "style_coefficients" not in same
