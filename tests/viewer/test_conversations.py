"""Conversations in the viewer (issue 84, item 4): shown as a conversation (turns in order, roles
distinct, tool calls and results as blocks, long results folded, cuts to a juror's context marked,
the verified outcome and reference actions beside it), found by a word in a message or a tool's
name, labelled blind (nothing of the jury, the outcome or the cuts shown), in headless Chromium
at 1,280 px with a 200-message trace; screenshots kept."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import run_cli, write

TAU = Path(__file__).resolve().parents[1] / "fixtures" / "released" / "tau_bench" / "gpt-4o-airline.json"
GOAL = (Path(__file__).resolve().parents[1] / "fixtures" / "rubrics" / "goal-met.yaml").read_text(encoding="utf-8")
LONG = "long-trace"


def _long_trace(path: Path) -> Path:
    """200 messages: a task, 66 rounds of an assistant's call, its result and a note, the answer."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Find every open ticket about the printer."}]
    for k in range(66):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{k}", "function": {"name": "search_tickets", "arguments": json.dumps({"page": k})}}
                ],
            }
        )
        result = json.dumps([{"id": k * 10 + j, "title": f"printer jam {j}"} for j in range(40 if k == 3 else 2)])
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": result})
        messages.append({"role": "assistant", "content": f"Page {k} read."})
    messages.append({"role": "assistant", "content": "There are 132 open printer tickets."})
    assert len(messages) == 200
    record = {"id": LONG, "messages": messages, "outcome": 1, "reference_actions": [{"tool": "search_tickets"}]}
    return write(path, json.dumps(record) + "\n")


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("agents")
    db = folder / "agents.duckdb"
    for args in (
        ("items", "import", str(TAU), "--format", "tau-bench"),
        ("items", "import", str(_long_trace(folder / "long.jsonl")), "--format", "openai-chat"),
        (
            "score",
            "--rubric",
            str(write(folder / "goal.yaml", GOAL)),
            "--juror",
            "sim/a",
            "--juror",
            "sim/b,context=3000",
            "--run",
            "goal",
        ),
    ):
        done = run_cli(*args, "--db", str(db))
        assert done.exit_code == 0, done.stderr
    return db


def _client(db: Path, annotate: bool = False) -> Any:
    from fastapi.testclient import TestClient

    from jurybench.viewer import create_viewer_app

    return TestClient(create_viewer_app(db, warm_up=False, annotate=annotate), follow_redirects=False)


def test_a_conversation_page_shows_the_turns_and_the_tools(agents: Path) -> None:
    item = "gpt-4o-airline/task0/trial0"
    with _client(agents) as client:
        page = client.get(f"/runs/goal/subjects/{quote(item, safe='')}")
    assert page.status_code == 200
    html = page.text
    assert html.count('<li class="msg role-') == 32  # the trial's 32 messages, in order
    roles = re.findall(r'<li class="msg role-(\w+)" id="m(\d+)"', html)
    assert [int(n) for _, n in roles] == list(range(1, 33))
    assert [r for r, _ in roles][:4] == ["system", "user", "assistant", "user"]
    assert html.count('<details class="tool-call" open>') == 8  # 8 tool calls, each with its arguments
    assert "→ call <code>get_user_details</code>" in html and "&#34;user_id&#34;: &#34;mia_li_3668&#34;" in html
    assert "answers the call in #17" in html  # message 18 (position 17) answers the call in message 17
    assert "verified outcome: <b>failed</b>" in html and "tau-bench reward" in html
    assert "Reference actions (1)" in html and "book_reservation" in html
    assert "elided for sim/b" in html  # sim/b's context (3,000 tokens) cut the middle turns
    assert "elided for sim/a" not in html
    # the system prompt (6,155 characters) is folded; short results are open
    assert re.search(r'<details class="tool-result"><summary>text \(6,155 characters, folded\)', html)
    assert '<details class="tool-result" open><summary>result (5 characters)' in html


def test_search_finds_a_conversation_by_a_word_in_a_message_or_a_tool(agents: Path) -> None:
    with _client(agents) as client:
        by_word = client.get("/runs/goal", params={"q": "printer jam 39"}).text
        by_tool = client.get("/runs/goal", params={"q": "search_onestop_flight"}).text
        none = client.get("/runs/goal", params={"q": "no-such-word-anywhere"}).text
    assert LONG in by_word and "gpt-4o-airline/task0/trial0" not in by_word
    found = set(re.findall(r"gpt-4o-airline/task\d/trial\d", by_tool))
    assert "gpt-4o-airline/task0/trial0" in found  # it called search_onestop_flight (message 13)
    assert LONG not in by_tool and LONG not in none


def test_labelling_a_conversation_is_blind(agents: Path) -> None:
    with _client(agents, annotate=True) as client:
        page = client.get(f"/runs/goal/subjects/{LONG}").text
        assert 'id="blind"' in page and 'id="jury"' not in page
        assert "verified outcome:" not in page and "The verified outcome is hidden while you label blind" in page
        assert "Reference actions" not in page and "elided for" not in page and "Raw answer" not in page
        assert page.count('<li class="msg role-') == 200  # the whole trace, to label from
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        done = client.post(f"/runs/goal/labels/{LONG}", data={"csrf": csrf, "annotator": "ana", "value:goal": "5"})
        assert done.status_code == 303
    got = run_cli(
        "sql",
        "SELECT subject_id, criterion, value, annotator FROM human_labels",
        "--format",
        "csv",
        "--db",
        str(agents),
    )
    assert got.stdout.splitlines()[1:] == [f"{LONG},goal,5.0,ana"]


def test_in_chromium_at_1280_px(agents: Path, tmp_path: Path) -> None:
    from tests.viewer.test_browser import CHROMIUM, FLAGS, _shot, serving

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    with serving(agents) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url + f"runs/goal/subjects/{LONG}")
        assert page.locator("li.msg").count() == 200
        margins = page.evaluate(
            "['user', 'assistant', 'tool'].map(r => getComputedStyle(document.querySelector('li.msg.role-' + r))"
            ".marginLeft)"
        )
        assert margins[0] == "0px" and margins[0] != margins[1] != margins[2]  # the roles read apart
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280, width  # nothing of a 200-message trace runs off the page
        folded = page.locator("#m12 details.tool-result")  # the 40-ticket result of page 3: folded
        assert folded.get_attribute("open") is None
        folded.locator("summary").click()
        assert folded.get_attribute("open") is not None and "printer jam 39" in folded.inner_text()
        _shot(page, tmp_path, "conversation-200")
        page.goto(url + f"runs/goal/subjects/{quote('gpt-4o-airline/task2/trial2', safe='')}")
        assert page.locator(".elided").count() > 0 and page.locator("p.outcome.passed").is_visible()
        _shot(page, tmp_path, "conversation-tau")
        browser.close()
    with serving(agents, "--annotate") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url + f"runs/goal/subjects/{quote('gpt-4o-airline/task1/trial1', safe='')}")
        text = page.locator("main").inner_text()
        assert "jury score" not in text and "verified outcome:" not in text and "elided for" not in text
        form = page.locator("section.label-form form")
        form.locator("input[name=annotator]").fill("bo")
        form.locator("legend", has_text="goal").click()
        page.keyboard.press("4")
        assert form.locator('input[name="value:goal"][value="4"]').is_checked()
        _shot(page, tmp_path, "conversation-label")
        page.keyboard.press("Enter")
        page.wait_for_load_state()
        browser.close()
    got = run_cli(
        "sql",
        "SELECT annotator, value FROM human_labels WHERE annotator = 'bo'",
        "--format",
        "csv",
        "--db",
        str(agents),
    )
    assert got.stdout.splitlines()[1:] == ["bo,4.0"]
    if shutil.which("true"):  # the screenshots are in the test's folder, to be looked at
        assert (tmp_path / "conversation-200.png").stat().st_size > 10_000


def test_a_report_bundle_holds_each_conversation_whole(agents: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    done = run_cli("report", "bundle", "--run", "goal", "--out", str(out), "--db", str(agents))
    assert done.exit_code == 0, done.stderr
    page = (out / "goal" / "subjects.html").read_text(encoding="utf-8")
    assert page.count("<summary>conversation</summary>") == 13  # 12 tau-bench trials and the long trace
    assert "[200] assistant:\nThere are 132 open printer tickets." in page
    assert "-&gt; call search_tickets({&quot;page&quot;: 65}) [c65]" in page
