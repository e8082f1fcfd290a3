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
    for args in (("datasets", "example", "--out", str(folder / "example")),
                 ("items", "import", str(folder / "example" / "items.csv"), "--db", db),
                 ("pairs", "import", str(folder / "example" / "pairs.csv"), "--db", db),
                 ("score", "-r", "story-quality", "--run", "first", "-j", "fake/kind", "-j", "fake/strict",
                  "--no-progress", "--db", db),
                 ("score", "-r", "story-quality", "--run", "second", "-j", "fake/kind", "-j", "fake/other",
                  "--no-progress", "--db", db),
                 ("score", "-r", "persuasion", "--run", "pairs", "-j", "fake/fair", "--no-progress", "--db", db)):  # fmt: skip
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
            "AND a.jury_score IS NOT NULL AND b.jury_score IS NOT NULL GROUP BY 1 ORDER BY 1")  # fmt: skip
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
