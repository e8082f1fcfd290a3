"""Agreement statistics against published hand-worked values and scipy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr

from jurybench.annotations import (
    bootstrap,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    leave_one_annotator_out,
    mean_pairwise_spearman,
    score_agreement,
)

nan = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders x 12 units.
RELIABILITY = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
).T


def test_krippendorff_alpha_matches_the_published_example() -> None:
    # Published: nominal 0.743, ordinal 0.815, interval 0.849 (unit 12 has one value: unpairable).
    # Nominal by hand: D_o = 10/40 * ... gives 1 - (4/40)/(... ) = 0.7434 (paper's coincidence matrix).
    assert krippendorff_alpha(RELIABILITY, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(RELIABILITY, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(RELIABILITY, "interval") == pytest.approx(0.849, abs=5e-4)


def test_interval_alpha_by_hand_on_a_tiny_matrix() -> None:
    # Units (1,2) and (3,3): n = 4 pairable values {1,2,3,3}.
    # D_o = (1/n) * sum_u 1/(m_u-1) * sum_{i!=j} d^2 = (1/4) * (2*1 + 0) = 0.5
    # D_e = 1/(n(n-1)) * sum over ordered pairs of distinct positions d^2:
    #       pairs (1,2):1 (1,3):4 (1,3):4 (2,3):1 (2,3):1 (3,3):0 -> 11, doubled 22 -> 22/12
    # alpha = 1 - 0.5 / (22/12) = 1 - 6/22 = 8/11
    matrix = np.array([[1.0, 2.0], [3.0, 3.0]])
    assert krippendorff_alpha(matrix, "interval") == pytest.approx(8 / 11, abs=1e-12)


def test_fleiss_kappa_matches_the_standard_worked_example() -> None:
    # Fleiss (1971) style example: 10 subjects, 14 raters, 5 categories; P-bar 0.378,
    # P-e 0.213, kappa = (0.378 - 0.213) / (1 - 0.213) = 0.210.
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    ratings = np.array([[c for c, k in enumerate(row, 1) for _ in range(k)] for row in counts], float)
    assert fleiss_kappa(ratings) == pytest.approx(0.20993, abs=1e-5)


def test_cohen_kappa_by_hand() -> None:
    # a = [A A B B], b = [A B B B]: p_o = 3/4; p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2; kappa = 0.5
    assert cohen_kappa(np.array([1, 1, 0, 0]), np.array([1, 0, 0, 0])) == pytest.approx(0.5)


def test_pairwise_spearman_and_scores_match_scipy() -> None:
    rng = np.random.default_rng(3)
    truth = rng.normal(size=60)
    m = np.column_stack([truth + rng.normal(scale=s, size=60) for s in (0.5, 1.0, 2.0)])
    expected = np.mean([spearmanr(m[:, i], m[:, j]).statistic for i, j in ((0, 1), (0, 2), (1, 2))])
    assert mean_pairwise_spearman(m) == pytest.approx(expected, abs=1e-12)
    got = score_agreement(m[:, 0], truth)
    assert got["pearson"] == pytest.approx(pearsonr(m[:, 0], truth).statistic)
    assert got["spearman"] == pytest.approx(spearmanr(m[:, 0], truth).statistic)
    assert got["kendall"] == pytest.approx(kendalltau(m[:, 0], truth).statistic)


def test_exact_and_within_one_round_both_sides() -> None:
    # rounded pred [1, 3, 5, 2], rounded truth [1, 2, 3, 2]: diffs 0, 1, 2, 0
    got = score_agreement(np.array([1.2, 3.4, 4.6, 2.0]), np.array([1.0, 2.4, 3.3, 2.2]))
    assert got["exact"] == pytest.approx(2 / 4) and got["within_one"] == pytest.approx(3 / 4)
    assert got["mae"] == pytest.approx((0.2 + 1.0 + 1.3 + 0.2) / 4)


def test_leave_one_annotator_out() -> None:
    m = np.array([[1, 2, 3], [2, 2, 2], [3, 4, 5], [5, 4, 3.0]])
    ceiling = leave_one_annotator_out(m)
    # annotator 0 vs mean of 1 and 2: [2.5, 2, 4.5, 3.5]
    assert ceiling[0]["pearson"] == pytest.approx(pearsonr([1, 2, 3, 5], [2.5, 2, 4.5, 3.5]).statistic)


def test_bootstrap_is_seeded_and_covers_the_truth() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(loc=1.0, size=400)
    first = bootstrap(lambda idx: float(np.mean(x[idx])), len(x), n_boot=500, seed=7)
    again = bootstrap(lambda idx: float(np.mean(x[idx])), len(x), n_boot=500, seed=7)
    assert first == again
    assert first.low < 1.0 < first.high
    # Width near 2 * 1.96 * sd / sqrt(n) = 0.196.
    assert first.high - first.low == pytest.approx(0.196, abs=0.04)


TIE_RUBRIC = """
name: pref-tie
kind: preference
allow_tie: true
templates:
  en: {user: "Which is better, {response_a} or {response_b}?"}
"""


def test_categorical_agreement_for_preferences_hand_worked(tmp_path: Path) -> None:
    """Humans (3 annotators) on five pairs: p1 A,A,B -> A; p2 B,B,tie -> B; p3 A,B,tie -> tie (a
    shared top count is a tie); p4 tie,tie,A -> tie; p5 A,B (two annotators) -> tie.
    The juror's verdicts: A, A, tie, tie, B. Right on p1, p3, p4: accuracy 3/5 = 0.6.
    Per class: A precision 1/2, recall 1/1, F1 2/3; B precision 0/1, recall 0/1, F1 0;
    tie precision 2/2, recall 2/3, F1 0.8; macro F1 (2/3 + 0 + 0.8)/3 = 0.488889.
    Cohen's kappa: p_o 0.6, p_e = .4*.2 + .2*.2 + .4*.6 = 0.36, kappa = 0.24/0.64 = 0.375.
    Fleiss' kappa over p1-p4 (all three annotators): P_i = 1/3, 1/3, 0, 1/3 -> 0.25; every
    category 4 of 12 -> P_e = 1/3; kappa = (0.25 - 1/3)/(2/3) = -0.125."""
    from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support

    from tests.conftest import run_cli

    db = _preference_store(tmp_path, unusable_p6=False)
    out = run_cli("agreement", "--run", "cat", "--boot", "50", "--format", "json", "--db", db)
    assert out.exit_code == 0, out.stderr
    (block,) = json.loads(out.stdout)
    assert block["human_labels"] == {"A": 1, "B": 1, "tie": 3}
    assert block["humans"]["fleiss_kappa"]["value"] == pytest.approx(-0.125, abs=1e-12)
    judge = block["jurors"][0]
    assert judge["accuracy"] == pytest.approx(0.6) and judge["cohen_kappa"]["value"] == pytest.approx(0.375)
    assert judge["per_class"]["A"]["f1"] == pytest.approx(2 / 3) and judge["per_class"]["B"]["f1"] == 0.0
    assert judge["per_class"]["tie"]["f1"] == pytest.approx(0.8)
    assert judge["macro_f1"] == pytest.approx((2 / 3 + 0 + 0.8) / 3)
    # the reference implementation agrees
    gold, pred = ["A", "B", "tie", "tie", "tie"], ["A", "A", "tie", "tie", "B"]
    assert judge["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(pred, gold), abs=1e-12)
    _, _, f1, _ = precision_recall_fscore_support(gold, pred, labels=["A", "B", "tie"], zero_division=0)
    assert [judge["per_class"][k]["f1"] for k in ("A", "B", "tie")] == pytest.approx(list(f1))
    table = run_cli("agreement", "--run", "cat", "--boot", "50", "--db", db)
    assert table.exit_code == 0 and "Fleiss kappa" in table.stdout and "F1 tie" in table.stdout


def test_categorical_agreement_for_classification_runs(tmp_path: Path) -> None:
    """Two annotators on four texts: t1 joy/joy -> joy; t2 anger/fear -> a shared top count goes to
    the first of them in the rubric's order (anger comes before fear): anger; t3 fear/fear; t4
    sadness/joy -> joy (joy is listed first). The juror's answers are queued: joy, fear, fear, joy:
    right on t1, t3, t4 -> accuracy 0.75; Cohen's kappa and F1 as scikit-learn computes them."""
    from sklearn.metrics import cohen_kappa_score

    from tests.annotations.conftest import classify_queued
    from tests.conftest import run_cli, write

    db = str(tmp_path / "cls.duckdb")
    items = write(tmp_path / "i.csv", "item_id,response\nt1,so happy\nt2,so cross\nt3,so scared\nt4,so-so\n")
    labels = write(
        tmp_path / "h.csv",
        "item_id,annotator,criterion,value\nt1,h1,label,joy\nt1,h2,label,joy\n"
        "t2,h1,label,anger\nt2,h2,label,fear\nt3,h1,label,fear\nt3,h2,label,fear\n"
        "t4,h1,label,sadness\nt4,h2,label,joy\n",
    )
    assert run_cli("items", "import", str(items), "--db", db).exit_code == 0
    assert run_cli("annotations", "import", str(labels), "-r", "emotion-label", "--db", db).exit_code == 0
    classify_queued(db, "cls", "joy", "fear", "fear", "joy")
    out = run_cli("agreement", "--run", "c", "--boot", "50", "--format", "json", "--db", db)
    assert out.exit_code == 0, out.stderr
    (block,) = json.loads(out.stdout)
    assert block["criterion"] == "label" and block["human_labels"] == {"joy": 2, "anger": 1, "fear": 1}
    juror = block["jurors"][0]
    from jurybench.store import connect

    con = connect(Path(db), read_only=True)
    said = dict(con.execute("SELECT item_id, label FROM pointwise_judgments").fetchall())
    con.close()
    gold = {"t1": "joy", "t2": "anger", "t3": "fear", "t4": "joy"}
    pred = [said[k] for k in sorted(gold)]
    truth = [gold[k] for k in sorted(gold)]
    assert juror["accuracy"] == pytest.approx(sum(p == t for p, t in zip(pred, truth, strict=True)) / 4)
    assert juror["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(pred, truth), abs=1e-12)
    assert pred == ["joy", "fear", "fear", "joy"] and juror["accuracy"] == 0.75  # the queued answers, in order


def _preference_store(tmp_path: Path, *, unusable_p6: bool = True) -> str:
    """The five pairs of the hand-worked case, and (``unusable_p6``) p6: humans h1, h2 say A; the
    judge's answer is unusable (stored invalid)."""
    from tests.conftest import run_cli, write

    db = str(tmp_path / "cat.duckdb")
    rubric = write(tmp_path / "pref-tie.yaml", TIE_RUBRIC)
    last = 7 if unusable_p6 else 6
    items = "item_id,response\n" + "".join(f"a{k},x{k}\nb{k},y{k}\n" for k in range(1, last))
    pairs = "pair_id,item_a,item_b\n" + "".join(f"p{k},a{k},b{k}\n" for k in range(1, last))
    labels = (
        "pair_id,annotator,criterion,value\np1,h1,preference,A\np1,h2,preference,A\np1,h3,preference,B\n"
        "p2,h1,preference,B\np2,h2,preference,B\np2,h3,preference,tie\np3,h1,preference,A\n"
        "p3,h2,preference,B\np3,h3,preference,tie\np4,h1,preference,tie\np4,h2,preference,tie\n"
        "p4,h3,preference,A\np5,h1,preference,A\np5,h2,preference,B\n"
        + ("p6,h1,preference,A\np6,h2,preference,A\n" if unusable_p6 else "")
    )
    verdicts = "pair_id,verdict,shown,status\np1,A,AB,ok\np2,A,AB,ok\np3,tie,AB,ok\np4,tie,AB,ok\np5,B,AB,ok\n" + (
        "p6,,AB,invalid\n" if unusable_p6 else ""
    )
    for args in (
        ("items", "import", str(write(tmp_path / "i.csv", items))),
        ("pairs", "import", str(write(tmp_path / "p.csv", pairs))),
        ("annotations", "import", str(write(tmp_path / "h.csv", labels)), "-r", str(rubric)),
        (
            "judgments",
            "import",
            str(write(tmp_path / "v.csv", verdicts)),
            "--run",
            "cat",
            "-r",
            str(rubric),
            "-j",
            "judge",
        ),
    ):
        done = run_cli(*args, "--db", db)
        assert done.exit_code == 0, (args, done.stderr)
    return db


def _block(db: str, *options: str) -> dict:  # type: ignore[type-arg]
    from tests.conftest import run_cli

    out = run_cli("agreement", "--run", "cat", "--boot", "20", "--format", "json", *options, "--db", db)
    assert out.exit_code == 0, out.stderr
    (block,) = json.loads(out.stdout)
    return block  # type: ignore[no-any-return]


def test_unusable_answers_follow_the_policy_named_in_the_output(tmp_path: Path) -> None:
    """Issue 44, item 3. p6's unusable answer: drop leaves it out (accuracy 3/5 as before, one
    unusable counted); tie counts it a tie and wrong a verdict never right (3/6 = 0.5 both; recall
    of A 1/2). Macro precision with drop: (1/2 + 0 + 2/2)/3 = 0.5; macro recall (1 + 0 + 2/3)/3."""
    from sklearn.metrics import cohen_kappa_score

    from tests.conftest import run_cli

    db = _preference_store(tmp_path)
    drop = _block(db)
    judge = drop["jurors"][0]
    assert drop["invalid_policy"] == "drop" and judge["n_unusable"] == 1 and judge["n"] == 5
    assert judge["accuracy"] == pytest.approx(0.6)
    assert judge["macro_precision"] == pytest.approx(0.5) and judge["macro_recall"] == pytest.approx((1 + 2 / 3) / 3)
    for policy, p6 in (("tie", "tie"), ("wrong", "(no verdict)")):
        block = _block(db, "--invalid", policy)
        judge = block["jurors"][0]
        assert block["invalid_policy"] == policy and judge["n"] == 6 and judge["accuracy"] == pytest.approx(0.5)
        assert judge["per_class"]["A"]["recall"] == pytest.approx(0.5)
        gold, pred = ["A", "B", "tie", "tie", "tie", "A"], ["A", "A", "tie", "tie", "B", p6]
        assert judge["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(pred, gold), abs=1e-12)
    table = run_cli("agreement", "--run", "cat", "--boot", "20", "--invalid", "tie", "--db", db)
    assert "counted as ties (--invalid tie)" in table.stdout and "macro P" in table.stdout
    bad = run_cli("agreement", "--run", "cat", "--invalid", "maybe", "--db", db)
    assert bad.exit_code == 2 and "--invalid 'maybe' is not a policy" in bad.stderr


def test_each_pair_of_annotators_gwet_ac1_and_the_annotators_filter(tmp_path: Path) -> None:
    """Gwet's AC1 of the humans, by hand (q = 3 labels): p_a over units rated twice or more =
    (1/3 + 1/3 + 0 + 1/3 + 0 + 1)/6 = 1/3; pi_A = (2/3 + 0 + 1/3 + 1/3 + 1/2 + 1)/6,
    pi_B = (1/3 + 2/3 + 1/3 + 0 + 1/2 + 0)/6, pi_tie = (0 + 1/3 + 1/3 + 2/3 + 0 + 0)/6;
    p_e = sum pi (1 - pi) / 2; AC1 = (p_a - p_e)/(1 - p_e) = 0.023729. Each pair's kappa is
    scikit-learn's on the units both labelled. --annotators h1,h2: p4 tie,tie stays a tie, p6 A."""
    from sklearn.metrics import cohen_kappa_score

    from tests.conftest import run_cli

    db = _preference_store(tmp_path)
    block = _block(db)
    pi = np.array([2 / 3 + 1 / 3 + 1 / 3 + 1 / 2 + 1, 1 / 3 + 2 / 3 + 1 / 3 + 1 / 2, 1 / 3 + 1 / 3 + 2 / 3]) / 6
    p_e = float(np.sum(pi * (1 - pi)) / 2)
    assert block["humans"]["gwet_ac1"]["value"] == pytest.approx((1 / 3 - p_e) / (1 - p_e), abs=1e-12)
    assert block["humans"]["gwet_ac1"]["value"] == pytest.approx(0.023729, abs=1e-6)
    h = {
        "h1": ["A", "B", "A", "tie", "A", "A"],
        "h2": ["A", "B", "B", "tie", "B", "A"],
        "h3": ["B", "tie", "tie", "A"],
    }
    pairs = {tuple(p["annotators"]): p for p in block["humans"]["pairs"]}
    assert set(pairs) == {("h1", "h2"), ("h1", "h3"), ("h2", "h3")}
    assert pairs[("h1", "h2")]["n"] == 6 and pairs[("h1", "h3")]["n"] == 4
    assert pairs[("h1", "h2")]["cohen_kappa"] == pytest.approx(cohen_kappa_score(h["h1"], h["h2"]), abs=1e-12)
    assert pairs[("h2", "h3")]["cohen_kappa"] == pytest.approx(cohen_kappa_score(h["h2"][:4], h["h3"]), abs=1e-12)
    assert block["humans"]["pairwise_cohen_kappa"]["value"] == pytest.approx(
        np.mean([p["cohen_kappa"] for p in pairs.values()])
    )
    two = _block(db, "--annotators", "h1,h2")
    assert two["annotators"] == ["h1", "h2"] and two["human_labels"] == {"A": 2, "B": 1, "tie": 3}
    table = run_cli("agreement", "--run", "cat", "--boot", "20", "--db", db)
    assert "Gwet AC1" in table.stdout and "h1 & h2" in table.stdout
    unknown = run_cli("agreement", "--run", "cat", "--annotators", "h9", "--db", db)
    assert unknown.exit_code == 2 and "'h9' has no labels" in unknown.stderr and "h1" in unknown.stderr


def test_report_preference_and_agreement_use_one_majority_rule(tmp_path: Path) -> None:
    """p4 is labelled tie, tie, A: the plurality is a tie. report preference used the sign of the
    mean sign ((0 + 0 + 1)/3 > 0: A), so the two reports disagreed on the humans' ties (2 vs 3)."""
    from tests.conftest import run_cli

    db = _preference_store(tmp_path)
    block = _block(db)
    out = run_cli("report", "preference", "--run", "cat", "--format", "json", "--db", db)
    assert out.exit_code == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["n_reference_ties"] == block["human_labels"]["tie"] == 3
    assert report["majority_rule"] == block["majority_rule"]
    assert report["n_pairs"] == 3  # p1 A, p2 B, p6 A


def test_gwet_ac1_and_quadratic_kappa_by_hand() -> None:
    """Two raters, two categories, 10 units: agree on 8 (6 both 0, 2 both 1), differ on 2.
    p_a = 0.8; pi_0 = (7 + 7)/20 = 0.7, pi_1 = 0.3; p_e = 2 (0.7)(0.3)/1 = 0.42;
    AC1 = (0.8 - 0.42)/0.58 = 0.655172. Quadratic kappa equals scikit-learn's, and rounds halves
    to the even point like exact (2.5 -> 2)."""
    from sklearn.metrics import cohen_kappa_score

    from jurybench.annotations import gwet_ac1, quadratic_kappa

    a = [0, 0, 0, 0, 0, 0, 1, 1, 0, 1]
    b = [0, 0, 0, 0, 0, 0, 1, 1, 1, 0]
    assert gwet_ac1(np.array([a, b], dtype=float).T) == pytest.approx(0.38 / 0.58, abs=1e-12)
    x, y = [1, 2, 3, 4, 5, 3, 2], [1, 3, 3, 5, 4, 2, 2]
    assert quadratic_kappa(x, y) == pytest.approx(cohen_kappa_score(x, y, weights="quadratic"), abs=1e-12)
    assert quadratic_kappa([2.5, 3.4, 1], [2, 3, 1]) == pytest.approx(1.0)


def test_the_python_face_takes_the_policy_and_the_annotators(tmp_path: Path) -> None:
    import jurybench as jb

    db = _preference_store(tmp_path)
    frame = jb.agreement(db, "cat", boot=20, invalid="wrong", annotators=["h1", "h2"])
    judge = frame[frame["rater"] == "judge"].iloc[0]
    assert judge["n"] == 6 and {"gwet_ac1", "macro_precision", "macro_recall"} <= set(frame.columns)
    assert frame.attrs["report"][0]["invalid_policy"] == "wrong"
    assert frame.attrs["report"][0]["annotators"] == ["h1", "h2"]


def test_vote_agreement_as_mt_bench_counts_it(tmp_path: Path) -> None:
    """The judge's verdicts (A, A, tie, tie, B on p1..p5; p6 unusable, dropped) against every
    human vote: p1 2 of 3, p2 0 of 3, p3 1 of 3, p4 2 of 3, p5 1 of 2: 6 of 14. Without ties
    (a vote where either side is a tie left out): p1 2 of 3, p2 0 of 2, p5 1 of 2: 3 of 7. h1
    alone: p1 and p4 of five: 0.4. The humans' pooled pairs: 1/3, 1/3, 0/3, 1/3, 0/1, 1/1 = 4 of
    14; without ties 1/3, 1/1, 0/1, 0/1, 1/1 = 3 of 7."""
    db = _preference_store(tmp_path)
    block = _block(db)
    judge = block["jurors"][0]
    assert judge["n_votes"] == 14 and judge["vote_agreement"] == pytest.approx(6 / 14)
    assert judge["n_votes_without_ties"] == 7 and judge["vote_agreement_without_ties"] == pytest.approx(3 / 7)
    assert judge["vs_annotators"]["h1"] == {"n": 5, "agreement": 0.4, "agreement_without_ties": pytest.approx(1 / 3)}
    humans = block["humans"]["vote_agreement"]
    assert humans["n"] == 14 and humans["agreement"] == pytest.approx(4 / 14)
    assert humans["n_without_ties"] == 7 and humans["agreement_without_ties"] == pytest.approx(3 / 7)


def test_macro_averages_are_scikit_learns() -> None:
    """'tie' is true once and never predicted: its precision is undefined and counts as 0 in the
    macro average, as scikit-learn (zero_division=0) and PandaLM's tables count it."""
    from sklearn.metrics import precision_recall_fscore_support

    from jurybench.annotations._categorical import class_metrics

    pred, gold = ["A", "A", "B", "B", "A"], ["A", "tie", "B", "A", "A"]
    ours = class_metrics(pred, gold, ("A", "B", "tie"))
    p, r, f, _ = precision_recall_fscore_support(gold, pred, average="macro", zero_division=0)
    assert (ours["macro_precision"], ours["macro_recall"], ours["macro_f1"]) == pytest.approx((p, r, f))


def test_one_annotator_says_inter_rater_figures_need_two(tmp_path: Path) -> None:
    """Issue 57, item 3: with one annotator, no 'nan' and no '1 annotators': the line says
    inter-rater figures need two, and each juror against the labels is still there."""
    import jurybench as jb
    from tests.conftest import run_cli

    db = tmp_path / "one.duckdb"
    with jb.open(db) as store:
        store.import_items([{"item_id": f"i{k}", "response": f"S {k}", "prompt": f"p{k}"} for k in range(20)])
        jb.score(store, rubric="story-quality", jury=["sim/a,noise=0.4", "sim/b,noise=0.8"], run="r")
        store.simulate_annotations(rubric="story-quality", annotators=1)
    shown = run_cli("agreement", "--run", "r", "--db", str(db))
    assert shown.exit_code == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "1 annotator: inter-rater figures" in text and "need two annotators" in text
    assert "nan" not in text and "1 annotators" not in text and "sim/a" in text


def test_invalid_wrong_counts_the_no_verdict_class_as_scikit_learn_does(tmp_path: Path) -> None:
    """Issue 58, item 3. With --invalid wrong, p6's unusable answer is the class '(no verdict)':
    predicted once, never true. Macro P/R/F1 are scikit-learn's over every class predicted or
    true (its default labels, here A, B, tie and no verdict), which the output names; before,
    the no-verdict class was left out of the averages (precision (1/2 + 0 + 1)/3 = 0.5 instead of
    (1/2 + 0 + 1 + 0)/4 = 0.375). AC1 of the judge and the humans' plurality counts q = 4
    categories, by hand: p_a = 3/6 (the units where the two agree); pi, the mean share of each
    category per unit: A (1 + 1/2 + 1/2)/6 = 2/6, B 1/6, tie 2.5/6, no verdict 0.5/6; p_e =
    sum pi (1 - pi) / (q - 1) = (8 + 5 + 8.75 + 2.75)/36/3 = 49/216; AC1 = (1/2 - 49/216) /
    (1 - 49/216) = 59/167 (with q = 3, as before: 0.242)."""
    from sklearn.metrics import precision_recall_fscore_support

    db = _preference_store(tmp_path)
    judge = _block(db, "--invalid", "wrong")["jurors"][0]
    gold = ["A", "B", "tie", "tie", "tie", "A"]
    pred = ["A", "A", "tie", "tie", "B", "(no verdict)"]
    assert judge["classes"] == ["A", "B", "tie", "(no verdict)"]
    for labels in (None, judge["classes"]):
        p, r, f, _ = precision_recall_fscore_support(gold, pred, labels=labels, average="macro", zero_division=0)
        assert (judge["macro_precision"], judge["macro_recall"], judge["macro_f1"]) == pytest.approx((p, r, f))
    assert judge["macro_precision"] == pytest.approx(0.375)
    assert judge["gwet_ac1"] == pytest.approx(59 / 167)
    tie = _block(db, "--invalid", "tie")["jurors"][0]  # no such class when the answer counts as a tie
    assert tie["classes"] == ["A", "B", "tie"]


def test_average_ranks_and_pearson_match_the_reference_implementations() -> None:
    """Hand-worked: [3, 1, 3, 2] ranks to [3.5, 1, 3.5, 2] (the two 3s share ranks 3 and 4)."""
    from scipy.stats import pearsonr, rankdata

    from jurybench.annotations._agreement import average_ranks, pearson

    assert average_ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [3.5, 1.0, 3.5, 2.0]
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.integers(1, 6, 40).astype(float)
        y = x + rng.normal(0, 2, 40)
        assert np.allclose(average_ranks(x), rankdata(x))
        assert pearson(x, y) == pytest.approx(pearsonr(x, y)[0], abs=1e-12)
    # hand-worked: (1,2),(2,4),(3,5) gives r = 3 / sqrt(2 * 14/3) = 0.98198...; NaN pairs drop out
    assert pearson(np.array([1.0, 2.0, 3.0, np.nan]), np.array([2.0, 4.0, 5.0, 9.0])) == pytest.approx(0.9819805)
    assert np.isnan(pearson(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])))  # constant side
    assert np.isnan(pearson(np.array([1.0, 2.0]), np.array([1.0, 2.0])))  # fewer than three units
