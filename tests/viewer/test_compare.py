"""Compare two runs (issue 32): reached from the runs list by ticking two runs, per criterion the
difference of the jury means with a paired interval (checked against the store), the subjects
that moved most, and a juror both runs share agreeing with itself exactly."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import jurybench as jb
from tests.viewer.conftest import cli_ok
from tests.viewer.test_browser import CHROMIUM, FLAGS, _shot, serving


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("compare")
    db = str(folder / "compare.duckdb")
    for args in (
        ("datasets", "example", "--out", str(folder / "example")),
        ("items", "import", str(folder / "example" / "items.csv"), "--db", db),
        ("pairs", "import", str(folder / "example" / "pairs.csv"), "--db", db),
        (
            "score",
            "-r",
            "story-quality",
            "--run",
            "first",
            "-j",
            "fake/kind",
            "-j",
            "fake/strict",
            "--no-progress",
            "--db",
            db,
        ),
        (
            "score",
            "-r",
            "story-quality",
            "--run",
            "second",
            "-j",
            "fake/kind",
            "-j",
            "fake/other",
            "--no-progress",
            "--db",
            db,
        ),
        ("score", "-r", "persuasion", "--run", "pairs", "-j", "fake/fair", "--no-progress", "--db", db),
    ):
        cli_ok(*args)
    return Path(db)


@pytest.fixture(scope="module")
def compare_url(two_runs: Path) -> Iterator[str]:
    with serving(two_runs) as url:
        yield url


def test_two_runs_ticked_on_the_runs_list_are_compared(compare_url: str, two_runs: Path, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with jb.open(two_runs, read_only=True) as store:  # the figures the page must show, from the store itself
        expected = store.sql(
            "SELECT a.criterion, count(*) AS n, avg(b.jury_score - a.jury_score) AS diff, "
            "stddev_samp(b.jury_score - a.jury_score) AS sd FROM jury_pointwise a JOIN jury_pointwise b "
            "USING (item_id, criterion) WHERE a.run_id = 'first' AND b.run_id = 'second' "
            "AND a.jury_score IS NOT NULL AND b.jury_score IS NOT NULL GROUP BY 1 ORDER BY 1"
        )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page: Any = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(compare_url)
        page.get_by_label("compare first").check()
        page.get_by_label("compare second").check()
        page.get_by_role("button", name="Compare the two ticked runs").click()
        page.wait_for_url(re.compile(r"/compare\?run=second&run=first|/compare\?run=first&run=second"))
        criteria = [row.locator("td").all_inner_texts() for row in page.locator("#compare-criteria tbody tr").all()]
        jurors = [row.locator("td").all_inner_texts() for row in page.locator("#compare-jurors tbody tr").all()]
        moved = page.locator("#compare-moved tbody tr").count()
        heading = page.locator("h1").inner_text()
        _shot(page, tmp_path, "compare")
        page.goto(compare_url + "compare?run=first&run=pairs")
        mixed = page.locator("main").inner_text()
        browser.close()
    flip = heading.startswith("first")  # the newer run is listed first, so it is the baseline
    sign = -1.0 if flip else 1.0
    assert [c[0] for c in criteria] == list(expected["criterion"])
    for shown, (_, row) in zip(criteria, expected.iterrows(), strict=True):
        n, diff = int(row["n"]), sign * float(row["diff"])
        assert int(shown[1]) == n and float(shown[4]) == pytest.approx(diff, abs=0.01)
        low, high = (float(x) for x in shown[5].strip("[]").split(","))
        from scipy.stats import t

        half = float(t.ppf(0.975, n - 1)) * float(row["sd"]) / math.sqrt(n)
        assert low == pytest.approx(diff - half, abs=0.01) and high == pytest.approx(diff + half, abs=0.01)
    assert moved >= 1
    assert [j[0] for j in jurors] == ["fake/kind"]  # the one juror both runs share: its answers are the stored ones
    assert float(jurors[0][2]) == 0 and jurors[0][3].startswith("100")
    assert "pointwise" in mixed and "pairwise" in mixed  # two kinds of run: one line saying so


def test_two_preference_runs_are_compared_by_verdict_and_accuracy_against_gold(tmp_path: Path) -> None:
    """Issue 40, item 8: comparing two preference runs showed the difference in mean preference
    and listed pairs that had not changed. With human labels it now scores each run's accuracy
    (McNemar's exact test on the pairs one run got right and the other wrong) and lists only the
    pairs whose verdict changed."""
    from fastapi.testclient import TestClient
    from scipy.stats import binomtest

    from jurybench.viewer import create_viewer_app
    from jurybench.viewer._web import _pct
    from tests.conftest import write

    db = str(tmp_path / "pref.duckdb")
    cli_ok("datasets", "example", "--out", str(tmp_path / "example"))
    cli_ok("items", "import", str(tmp_path / "example" / "items.csv"), "--db", db)
    cli_ok("pairs", "import", str(tmp_path / "example" / "pairs.csv"), "--db", db)
    for run, juror in (("old", "sim/a,noise=1.5,seed=1"), ("new", "sim/b,noise=1.5,seed=2")):
        cli_ok("score", "-r", "preference", "--run", run, "-j", juror, "--no-progress", "--db", db)
    with jb.open(db, read_only=True) as store:
        verdicts = store.sql(
            "SELECT a.pair_id, sign(a.jury_score) AS x, sign(b.jury_score) AS y FROM jury_pairwise a "
            "JOIN jury_pairwise b USING (pair_id) WHERE a.run_id = 'old' AND b.run_id = 'new' "
            "ORDER BY 1"
        )
    pairs = list(verdicts["pair_id"])
    gold = {pid: ("A" if k % 3 else "B") for k, pid in enumerate(pairs)}  # made-up human labels
    labels = "".join(f"{pid},h1,preference,{gold[pid]}\n" for pid in pairs)
    cli_ok(
        "annotations",
        "import",
        str(write(tmp_path / "gold.csv", "pair_id,annotator,criterion,value\n" + labels)),
        "--rubric",
        "preference",
        "--db",
        db,
    )
    word = {1.0: "A", -1.0: "B", 0.0: "tie"}
    by_pair = {pid: (word[float(x)], word[float(y)]) for pid, x, y in verdicts.itertuples(index=False)}
    changed = sorted(pid for pid, (x, y) in by_pair.items() if x != y)
    only_old = sum(x == gold[p] != y for p, (x, y) in by_pair.items())
    only_new = sum(y == gold[p] != x for p, (x, y) in by_pair.items())
    acc_old = sum(x == gold[p] for p, (x, _) in by_pair.items()) / len(pairs)
    acc_new = sum(y == gold[p] for p, (_, y) in by_pair.items()) / len(pairs)
    with TestClient(create_viewer_app(Path(db), warm_up=False)) as c:
        page = c.get("/compare?run=old&run=new").text
    assert f"{len(changed)} of {len(pairs)} pairs judged by both juries changed verdict" in page
    listed = (
        re.findall(r'<tr><td><a href="/runs/new/subjects/([^"]+)">', page.split('id="compare-changed"')[1])
        if changed
        else []
    )
    assert sorted(listed) == changed  # the changed pairs, and no unchanged one
    assert 'id="compare-moved"' not in page
    row = re.search(r'id="compare-accuracy".*?<tbody><tr>(.*?)</tr>', page, re.S)
    assert row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
    assert cells[1] == str(len(pairs)) and cells[5] == f"{only_old} / {only_new}"
    assert cells[2] == _pct(acc_old) and cells[3] == _pct(acc_new)
    p = binomtest(only_new, only_old + only_new, 0.5).pvalue if only_old + only_new else 1.0
    assert float(cells[6]) == pytest.approx(p, abs=0.01)
