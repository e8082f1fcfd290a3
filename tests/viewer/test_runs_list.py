"""The runs list as a person sees it at 1,280 px (issue 32): it fits without scrolling sideways
with five long-named jurors and a long run name, shows the jury's mean of the main criterion,
and says that its outcome columns count calls (a call whose answer is valid on some criteria
counts as ok, which is why an import's invalid judgments need not show there)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.viewer.conftest import cli_ok
from tests.viewer.test_browser import CHROMIUM, FLAGS, _shot, serving

LONG_JURORS = [
    f"fake/openai-gpt-4o-mini-2024-07-18-variant-{k},name=provider-model-with-a-long-name-{k}" for k in range(5)
]


@pytest.fixture(scope="module")
def wide_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wide")
    db = str(folder / "wide.duckdb")
    for args in (
        ("datasets", "example", "--out", str(folder / "example")),
        ("items", "import", str(folder / "example" / "items.csv"), "--dataset", "example", "--db", db),
        (
            "score",
            "--rubric",
            "story-quality",
            "--run",
            "a-rather-long-run-name-for-the-hanna-reproduction",
            "--no-progress",
            "--db",
            db,
            *(x for j in LONG_JURORS for x in ("--juror", j)),
        ),
    ):
        cli_ok(*args)
    import duckdb

    with duckdb.connect(db) as con:  # answers without a known price, as an import of HANNA's leaves them
        con.execute(
            "UPDATE calls SET cost_usd = NULL WHERE call_key IN "
            "(SELECT call_key FROM run_calls WHERE run_id = 'a-rather-long-run-name-for-the-hanna-reproduction')"
        )
    return Path(db)


@pytest.fixture(scope="module")
def wide_url(wide_store: Path) -> Iterator[str]:
    with serving(wide_store) as url:
        yield url


def test_the_runs_list_fits_1280_px_and_shows_the_main_score(wide_url: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page: Any = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(wide_url)
        _shot(page, tmp_path, "runs-1280")
        width = page.evaluate("document.documentElement.scrollWidth")
        headers = page.locator("#runs thead th").all_inner_texts()
        row = page.locator("#runs tbody tr").first.inner_text()
        note = page.locator("#runs-note").inner_text()
        page.goto(wide_url + "runs/a-rather-long-run-name-for-the-hanna-reproduction")  # six criteria, five jurors
        _shot(page, tmp_path, "run-items-1280")
        items_right = page.evaluate("document.querySelector('#subjects').getBoundingClientRect().right")
        run_width = page.evaluate("document.documentElement.scrollWidth")
        browser.close()
    assert width <= 1280, f"the page is {width} px wide at a 1280 px window"
    assert items_right <= 1280 and run_width <= 1280, (items_right, run_width)  # a six-criterion items table
    assert any(h.strip().startswith("score") for h in headers)
    assert re.search(r"relevance\s+\d\.\d\d", row), row  # the first criterion's jury mean
    assert "count calls" in note
    assert re.search(r"unknown\s+\d+ unpriced", row), row  # the demo store's HANNA run: 1,467 px wide before
