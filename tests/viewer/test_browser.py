"""The viewer in a real headless Chromium (Debian's package, driven by Playwright): a user opens
the runs page, clicks into a run, an item, the disagreements and a statistic, and reads what the
store holds. Screenshots go to the test's folder (and to $JURYBENCH_SCREENSHOTS when set: the
README's picture is made this way)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

if not Path(CHROMIUM).exists() and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium; .ci/run does it)", allow_module_level=True
    )


@contextlib.contextmanager
def serving(db: Path, *options: str) -> Iterator[str]:
    """``jurybench view`` as a user starts it, on a free loopback port; its address."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "jurybench.cli", "view", "--db", str(db), "--port", "0", "--no-browser", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        yield match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def viewer_url(viewer_store: Path) -> Iterator[str]:
    with serving(viewer_store) as url:
        yield url


@pytest.fixture(scope="module")
def page(viewer_url: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        yield tab
        browser.close()


def _shot(page: Any, tmp_path: Path, name: str) -> Path:
    out = tmp_path / f"{name}.png"
    page.screenshot(path=str(out), full_page=True)
    if os.environ.get("JURYBENCH_SCREENSHOTS"):
        folder = Path(os.environ["JURYBENCH_SCREENSHOTS"])
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(out, folder / f"viewer-{name}.png")
    assert out.stat().st_size > 10_000
    return out


def test_a_user_walks_from_runs_to_an_item(page: Any, viewer_url: str, tmp_path: Path) -> None:
    page.goto(viewer_url)
    assert page.title() == "Runs · jurybench"
    rows = page.locator("#runs tbody tr")
    assert rows.count() == 2
    assert "fake/kind, fake/strict, fake/shy" in page.locator("#runs").inner_text()
    _shot(page, tmp_path, "runs")

    page.get_by_role("link", name="quality", exact=True).click()
    page.wait_for_url(re.compile(r"/runs/quality$"))
    assert page.locator("h1").first.inner_text() == "Run quality"
    figures = page.locator("#figures tbody tr")
    assert figures.count() >= 3  # story-quality's criteria, each with a mean and a CI
    first = figures.first.locator("td").all_inner_texts()
    low, high = (float(x) for x in first[3].strip("[]").split(","))
    assert low <= float(first[2]) <= high
    assert page.locator("#jurors tbody tr").count() == 3
    _shot(page, tmp_path, "run")

    page.get_by_role("link", name="xss-1").click()
    page.wait_for_url(re.compile(r"/subjects/xss-1$"))
    # The item's HTML is shown as text: the script did not run, the tags are visible characters.
    assert page.title() == "xss-1 in quality · jurybench"
    assert page.get_by_text('<script>document.title="pwned"</script>', exact=False).count() >= 1
    assert page.locator("main img").count() == 0 and page.locator("main b").count() == 0
    calls = page.locator("section.call")
    assert calls.count() == 4
    calls.first.locator("summary", has_text="Raw answer").click()
    assert calls.first.locator("pre.raw").is_visible()
    _shot(page, tmp_path, "item")


def test_disagreements_and_a_statistic(page: Any, viewer_url: str, tmp_path: Path) -> None:
    page.goto(viewer_url + "runs/persuasion")
    page.get_by_role("link", name="Disagreements →").click()
    page.wait_for_url(re.compile(r"/disagreements$"))
    page.get_by_role("link", name="flips", exact=True).click()
    page.wait_for_url(re.compile(r"sort=flips"))
    flips = [int(t) for t in page.locator("#disagreements tbody tr td:nth-child(6)").all_inner_texts()]
    assert flips and flips == sorted(flips, reverse=True) and flips[0] > 0
    _shot(page, tmp_path, "disagreements")

    page.get_by_role("link", name="Statistics", exact=True).click()
    page.wait_for_url(re.compile(r"/stats$"))
    page.locator("#results a.mono").first.click()
    page.wait_for_url(re.compile(r"/stats/[0-9a-f]{32}$"))
    plot = page.locator("figure.plot svg")
    assert plot.count() == 1
    box = plot.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 150  # drawn, not an empty box
    assert "run persuasion" in page.locator("figure.plot").inner_text()
    # Drawn as matplotlib drew it (a page style policy that blocked the SVG's own styles painted it black).
    import numpy as np
    from PIL import Image

    shot = tmp_path / "plot.png"
    plot.screenshot(path=str(shot))
    pixels = np.asarray(Image.open(shot).convert("L"))
    assert float(np.mean(pixels > 240)) > 0.6
    _shot(page, tmp_path, "statistic")


def test_a_pair_shows_both_orders_of_every_juror_side_by_side(page: Any, viewer_url: str, tmp_path: Path) -> None:
    """Issue 32: per category, each juror's AB and BA scores in adjacent columns, its ε = (AB - BA) / 2,
    the flips marked, and the jury's ε; the pair with the most flips has at least one."""
    page.goto(viewer_url + "runs/persuasion/disagreements?sort=flips")
    page.locator("#disagreements tbody tr td a").first.click()
    page.wait_for_url(re.compile(r"/subjects/"))
    grid = page.locator("#orders")
    assert grid.count() == 1
    jurors = grid.locator("thead th.juror").all_inner_texts()
    assert jurors == ["fake/biased", "fake/fair"]
    rows = grid.locator("tbody tr")
    assert rows.count() == 19  # persuasion's categories
    checked = 0
    for k in range(rows.count()):
        cells = rows.nth(k).locator("td").all_inner_texts()
        for j in range(len(jurors)):
            ab, ba, eps = (cells[1 + 3 * j + m].replace("⇄", "").strip() for m in range(3))
            if "–" not in (ab, ba, eps):
                assert float(eps) == pytest.approx((float(ab) - float(ba)) / 2, abs=0.01)
                checked += 1
    assert checked >= 19 and grid.locator("span.flip").count() >= 1
    _shot(page, tmp_path, "pair-orders")


def test_find_then_step_with_j_and_k(page: Any, viewer_url: str, viewer_store: Path, tmp_path: Path) -> None:
    """A user filters the run's items (coherence at least 2, highest first), opens the first,
    and steps with the keyboard; the steps follow the filter's order."""
    page.goto(viewer_url + "runs/quality")
    form = page.locator("form.find")
    form.locator("select[name=criterion]").select_option("coherence")
    form.locator("input[name=min]").fill("2")
    form.locator("select[name=sort]").select_option("-score")
    form.get_by_role("button", name="Find").click()
    page.wait_for_url(re.compile(r"criterion=coherence"))
    found = [r.split("\t")[1] for r in page.locator("#subjects tbody tr").all_inner_texts()]
    assert len(found) >= 3 and page.locator("p.found").inner_text().startswith(f"{len(found)} found")
    _shot(page, tmp_path, "find")

    page.get_by_role("link", name=found[0], exact=True).click()
    page.wait_for_url(re.compile(rf"/subjects/{re.escape(found[0])}\?"))
    assert page.locator("nav.step").inner_text().count(f"1 of {len(found)} found") == 1
    page.keyboard.press("j")
    page.wait_for_url(re.compile(rf"/subjects/{re.escape(found[1])}\?"))
    page.keyboard.press("j")
    page.wait_for_url(re.compile(rf"/subjects/{re.escape(found[2])}\?"))
    page.keyboard.press("k")
    page.wait_for_url(re.compile(rf"/subjects/{re.escape(found[1])}\?"))
    _shot(page, tmp_path, "step")


def test_without_script_the_pages_still_step(page: Any, viewer_url: str) -> None:
    context = page.context.browser.new_context(java_script_enabled=False)
    try:
        tab = context.new_page()
        tab.goto(viewer_url + "runs/quality?criterion=coherence&sort=score")
        tab.locator("#subjects tbody tr").first.locator("a").click()
        tab.wait_for_url(re.compile(r"/subjects/"))
        step = tab.locator('a[rel="next"]')
        assert step.get_attribute("accesskey") == "j"
        target = step.get_attribute("href")
        step.click()
        tab.wait_for_url(re.compile(re.escape(target.split("?")[0]) + r"\?"))
    finally:
        context.close()


def test_a_user_labels_items_from_the_queue(page: Any, viewer_store: Path, tmp_path: Path) -> None:
    """``view --annotate``: the run's label queue opens the unlabelled item, blind (issue 43,
    item 5: no jury score, no juror's answer, no other label in the page's text before saving;
    fails before, when the jury's table and every juror's answer sat above the form); the user
    picks values with the keyboard from the criteria's anchors and saves with Enter, the queue is
    then empty, the item's page is whole again, and ``agreement`` counts the new, blind label."""
    db = tmp_path / "label.duckdb"
    shutil.copy(viewer_store, db)
    with serving(db, "--annotate") as url:
        page.goto(url + "runs/quality")
        page.get_by_role("link", name="Label queue →").click()
        page.wait_for_url(re.compile(r"/subjects/xss-1\?.*queue=spread"))
        text = page.locator("main").inner_text()
        assert page.locator("#blind").is_visible() and "Blind labelling" in text
        assert page.locator("#jury").count() == 0 and page.locator("section.call").count() == 0
        assert "jury score" not in text and "fake/kind" not in text and "Raw answer" not in text
        form = page.locator("section.label-form form")
        assert "Ignores the premise" in form.inner_text()  # the criterion's anchors are on the form
        form.locator("input[name=annotator]").fill("ana")
        form.locator("legend", has_text="relevance").click()  # out of the text field, onto the first criterion
        page.keyboard.press("2")  # relevance = 2, then the next criterion is marked
        page.keyboard.press("5")  # coherence = 5
        assert form.locator('input[name="value:relevance"][value="2"]').is_checked()
        assert form.locator('input[name="value:coherence"][value="5"]').is_checked()
        form.locator("textarea[name=note]").fill("the prompt leaks markup")
        _shot(page, tmp_path, "label")
        form.locator("legend", has_text="empathy").click()
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/queue"))
        assert page.locator("h1").inner_text() == "The label queue is empty"
        page.goto(url + "runs/quality/subjects/xss-1?annotator=ana")
        assert page.locator("#jury").is_visible() and page.locator("#blind").count() == 0
        humans = page.locator("#humans tbody tr").all_inner_texts()
        assert sorted(h.split("\t")[:3] for h in humans) == [["coherence", "ana", "5"], ["relevance", "ana", "2"]]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "jurybench.cli",
            "agreement",
            "--run",
            "quality",
            "--criterion",
            "relevance",
            "--boot",
            "20",
            "--format",
            "json",
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"n_items": 13' in result.stdout
    provenance = json.loads(result.stdout)[0]["label_provenance"]
    assert provenance["blind"] == 1 and provenance["saw_jury"] == 0  # the new label was made blind


WRAPPED_INSIDE = (Path(__file__).parent / "js" / "words_wrapped_inside.js").read_text(encoding="utf-8")


def _example_store(db: Path) -> Path:
    """A store holding the offline example's items and pairs, not yet judged."""
    from tests.viewer.conftest import cli_ok

    cli_ok("datasets", "example", "--out", str(db.parent / "example"))
    cli_ok("items", "import", str(db.parent / "example" / "items.csv"), "--db", str(db))
    cli_ok("pairs", "import", str(db.parent / "example" / "pairs.csv"), "--db", str(db))
    return db


def test_the_runs_list_fits_and_wraps_no_word_inside(page: Any, tmp_path: Path) -> None:
    """Issue 40, item 8: at 1,400 px the runs list broke words anywhere (the jury column fell to
    three characters: `overflow-wrap: anywhere`). At 1,280 and 1,400 px it fits the window and
    no cell wraps inside a word (only after a hyphen or at the name's own parts)."""
    from tests.viewer.conftest import cli_ok

    db = _example_store(tmp_path / "runs.duckdb")
    cli_ok(
        "score",
        "--rubric",
        "story-quality",
        "--run",
        "quality-with-a-rather-long-run-name-2026",
        "--no-progress",
        "-j",
        "fake/kind,samples=2",
        "-j",
        "fake/strict,invalid_rate=0.2",
        "-j",
        "fake/shy,refusal_rate=0.15",
        "-j",
        "sim/lenient,leniency=1,noise=0.3",
        "--aggregate",
        "median",
        "--db",
        str(db),
    )
    cli_ok(
        "score",
        "--rubric",
        "persuasion",
        "--run",
        "persuasion_run_with_underscores",
        "--no-progress",
        "-j",
        "fake/biased,position_bias=1",
        "-j",
        "fake/fair",
        "--db",
        str(db),
    )
    with serving(db) as url:
        for width in (1280, 1400):
            tab = page.context.browser.new_page(viewport={"width": width, "height": 900})  # the module's Chromium
            try:
                tab.goto(url)
                _shot(tab, tmp_path, f"runs-{width}")
                assert tab.evaluate(WRAPPED_INSIDE) == [], width
                right = tab.evaluate("() => document.querySelector('#runs').getBoundingClientRect().right")
                assert right <= width and tab.evaluate("() => document.documentElement.scrollWidth") <= width
            finally:
                tab.close()


def test_a_statistic_names_a_juror_that_gave_no_valid_answer(page: Any, tmp_path: Path) -> None:
    """A juror whose every answer was invalid is in no figure; the result's page says so above
    its table, where it is seen (issue 45)."""
    from tests.viewer.conftest import cli_ok

    db = _example_store(tmp_path / "silent.duckdb")
    cli_ok(
        "score",
        "--rubric",
        "persuasion",
        "--run",
        "p",
        "--no-progress",
        "-j",
        "fake/fair",
        "-j",
        "fake/broken,invalid_rate=1.0",
        "--db",
        str(db),
    )
    cli_ok("stats", "consistency", "--run", "p", "--db", str(db))
    with serving(db) as url:
        tab = page.context.browser.new_page(viewport={"width": 1200, "height": 800})
        try:
            tab.goto(url + "stats")
            tab.locator("#results a.mono").first.click()
            tab.wait_for_url(re.compile(r"/stats/[0-9a-f]{32}$"))
            note = tab.locator("p.silent")
            assert note.is_visible()
            assert note.inner_text().startswith("no valid answers from fake/broken in run p (")
            assert "fake/broken" not in tab.locator("table").inner_text()  # in no row: said above instead
            _shot(tab, tmp_path, "statistic-silent-juror")
        finally:
            tab.close()


def test_no_link_of_the_labelling_flow_shows_the_jury(page: Any, tmp_path: Path) -> None:
    """Issue 57, item 2: under ``view --annotate`` a user labels one drawn item from the sample
    queue, then follows every link from the run page and the queues (and the red team's URLs:
    another annotator's name in ?annotator=, a find by text and score, disagreements, compare,
    statistics). No page shows a juror, a jury score or another annotator's label of an item
    this user has not labelled: fails before, when the run page listed every item's jury score
    and its Disagreements button listed every juror's."""
    from urllib.parse import unquote, urlparse

    import jurybench as jb

    source = tmp_path / "source"
    source.mkdir()
    db = tmp_path / "walk.duckdb"
    from tests.viewer.conftest import viewer_store_at

    viewer_store_at(source, db)
    with jb.open(db) as store:
        store.sample_labels("quality", n=4, seed=3)
        jurors = sorted(set(store.sql("SELECT DISTINCT name FROM run_jurors")["name"]) - {None})
        others = sorted(set(store.sql("SELECT DISTINCT annotator FROM human_labels")["annotator"]))
        other_label = store.sql("SELECT subject_id, annotator FROM human_labels ORDER BY ALL LIMIT 1")
    assert jurors and others
    markers = ['id="jury"', 'id="orders"', 'id="humans"', 'id="figures"', 'id="jurors"', "jury score", *jurors]
    markers += [f"<td>{a}</td>" for a in others]
    tab = page.context.browser.new_context(viewport={"width": 1280, "height": 900})  # its own cookies
    page = tab.new_page()
    with serving(db, "--annotate") as url:
        page.goto(url + "runs/quality")
        page.get_by_role("link", name="Sample queue →").click()
        page.wait_for_url(re.compile(r"/subjects/.*queue=sample"))
        mine = unquote(urlparse(page.url).path.rsplit("/", 1)[1])
        form = page.locator("section.label-form form")
        form.locator("input[name=annotator]").fill("walker")
        form.locator('input[name="value:relevance"][value="3"]').check()
        form.locator("button[type=submit]").click()
        page.wait_for_load_state()
        start = [
            "runs/quality",
            "runs/quality/queue",
            "runs/quality/queue?by=sample",
            f"runs/quality/subjects/{other_label['subject_id'][0]}?annotator={other_label['annotator'][0]}",
            f"runs/quality?q={other_label['subject_id'][0]}&criterion=relevance&min=1&sort=spread",
            "runs/quality/disagreements",
            "compare?run=quality&run=persuasion",
            "stats",
            "calibrations",
            "",
        ]
        todo, seen, leaks = [url + s for s in start], set(), []
        while todo and len(seen) < 250:
            address = todo.pop(0)
            if address in seen:
                continue
            seen.add(address)
            page.goto(address)
            path = unquote(urlparse(page.url).path)
            html = page.content()
            if not (path.endswith("/subjects/" + mine)):  # the item this user labelled may show whole
                leaks += [(page.url, m) for m in markers if m in html]
            for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
                if href.startswith(url) and "/assets/" not in href and href.split("#")[0] not in seen:
                    todo.append(href.split("#")[0])
        page.goto(url + "runs/quality")
        _shot(page, tmp_path, "blind-run")
        page.goto(url + f"runs/quality/subjects/{mine}")
        whole = page.locator("#jury").count()
        tab.close()
    assert len(seen) >= 15, seen  # the walk reached the run's items, the queues and the other pages
    assert leaks == [], leaks[:10]
    assert whole == 1  # the item this user labelled is shown whole to them (their signed cookie)


def test_what_the_judge_leans_on_and_whether_it_moved(page: Any, tmp_path: Path) -> None:
    """Issue 53, item 3: the run page says what the judge leans on (sim/b's planted length bias,
    in words and figures) and the compare page whether the judge moved between two runs (sim/a
    made half a point more lenient, judged on the same items); both fit 1,280 px."""
    from jurybench.engine import EngineOptions, score
    from jurybench.jurors import parse_juror
    from jurybench.rubric import load_rubric
    from jurybench.store import connect
    from tests.stats.test_bias import _store

    db = _store(tmp_path)
    con = connect(db)
    try:
        later = [parse_juror("sim/a,noise=0.5,leniency=0.5,seed=4"), parse_juror("sim/b,noise=0.5,verbosity_bias=1.5")]
        score(con, load_rubric("story-quality"), later, run_id="later", options=EngineOptions(progress=False))
    finally:
        con.close()
    with serving(db) as url:
        page.set_viewport_size({"width": 1280, "height": 900})
        try:
            page.goto(url + "runs/r")
            leaning = page.locator("#leaning ~ ul.readings li").all_inner_texts()
            assert (
                leaning
                and leaning[0].startswith("sim/b scores 0.")
                and "per 100 tokens, with the humans' verdict held fixed" in leaning[0]
            )
            raters = set(page.locator("#leaning-effects tbody td:nth-child(1)").all_inner_texts())
            assert raters <= {"sim/b", "jury"} and "sim/b" in raters  # sim/a leans on nothing
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            _shot(page, tmp_path, "run-leaning")
            page.goto(url + "compare?run=r&run=later")
            said = page.locator("#drift ~ ul.readings li").all_inner_texts()
            assert len(said) == 6 and all(s.startswith("jury, ") and "the judge moved +0." in s for s in said)
            rows = page.locator("#compare-drift tbody tr").all_inner_texts()
            shifts = [float(r.split("\t")[3].split()[0]) for r in rows if r.startswith("sim/a")]
            assert len(shifts) == 6 and all(0.3 < s < 0.7 for s in shifts), rows
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            _shot(page, tmp_path, "compare-drift")
        finally:
            page.set_viewport_size({"width": 1400, "height": 1000})


def test_an_alignment_shows_its_variants_side_by_side(page: Any, tmp_path: Path) -> None:
    """Issue 54, item 4: the alignments list, and an alignment's page with each variant's held-out
    error and gain with their intervals, the kept one marked, and what it changed as a diff."""
    from tests.alignment.test_align import _store
    from tests.conftest import run_cli

    db, run = _store(tmp_path, "sim/lenient,leniency=1.5,teachable=1,noise=0.4")
    done = run_cli(
        "align",
        "--db",
        str(db),
        "--run",
        run,
        "--juror",
        "sim/lenient",
        "--criterion",
        "coherence",
        "--demos",
        "2,4",
        "--no-progress",
    )
    assert done.exit_code == 0, done.stderr
    with serving(db) as url:
        page.set_viewport_size({"width": 1280, "height": 900})
        try:
            page.goto(url + "alignments")
            page.locator("#alignments a.mono").first.click()
            assert "Kept demos-4" in page.locator("#verdict").inner_text()
            rows = page.locator("#variants tbody tr").all_inner_texts()
            assert [r.split("\t")[0] for r in rows] == ["original", "demos-2", "demos-4"]
            assert rows[2].rstrip().endswith("yes") and rows[1].rstrip().endswith("no")
            diff = page.locator("details[open] pre.diff").inner_text()
            assert "+demonstrations:" in diff and "+version: 2.a1" in diff
            assert page.locator("#variants .ci-range").count() == 3
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            _shot(page, tmp_path, "alignment")
        finally:
            page.set_viewport_size({"width": 1400, "height": 1000})


def test_a_report_bundle_opens_offline(page: Any, tmp_path: Path) -> None:
    """Issue 56, item 4: report bundle is one folder that opens from disk (file://, no server):
    the index, the report, and each run's subjects with the jury's and each juror's answers."""
    from tests.alignment.test_align import _store
    from tests.conftest import run_cli

    db, run = _store(tmp_path, "sim/lenient,leniency=1.5,noise=0.4")
    done = run_cli("report", "bundle", "--run", run, "--out", str(tmp_path / "bundle"), "--db", str(db))
    assert done.exit_code == 0, done.stderr
    page.set_viewport_size({"width": 1280, "height": 900})
    try:
        page.goto((tmp_path / "bundle" / "index.html").as_uri())
        page.locator("a", has_text="subjects and answers").click()
        rows = page.locator("tbody tr")
        assert rows.count() == 60
        first = rows.first.inner_text()
        assert "sim/lenient · coherence:" in first and first.split("\t")[0] == "p0-m0"
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        _shot(page, tmp_path, "bundle-subjects")
        page.goto((tmp_path / "bundle" / "report.html").as_uri())
        assert run in page.locator("h1, h2").first.inner_text() or run in page.content()
    finally:
        page.set_viewport_size({"width": 1400, "height": 1000})


def test_a_calibration_fitted_but_not_applied_says_how_to_get_second_opinions(
    page: Any, viewer_store: Path, tmp_path: Path
) -> None:
    """Issue 86, item 4: the run page offered "Second opinions" for a calibration fitted on the run
    but not applied, and the queue answered 400. The page now says what to run."""
    from tests.conftest import run_cli

    db = tmp_path / "second.duckdb"
    shutil.copy(viewer_store, db)
    done = run_cli("calibrate", "--run", "quality", "--name", "fitted", "--folds", "3", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    with serving(db, "--annotate") as url:
        page.goto(url + "runs/quality")
        note = page.locator("#second-opinions-off")
        assert note.is_visible()
        assert "jurybench calibrate apply fitted --run quality" in note.inner_text()
        assert page.get_by_role("link", name="Second opinions →").count() == 0
        _shot(page, tmp_path, "second-opinions-off")
