"""The viewer's pages over HTTP: what they show equals the store, texts are escaped, pages
page by key, and the service serves them behind its token."""

from __future__ import annotations

import math
import re
import shutil
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.viewer.conftest import HOSTILE


@pytest.fixture(scope="module")
def client(viewer_store: Path) -> Any:
    from fastapi.testclient import TestClient

    from jurybench.viewer import create_viewer_app

    with TestClient(create_viewer_app(viewer_store)) as c:
        yield c


def _sql(client: Any, query: str) -> list[tuple[Any, ...]]:
    """The store as the viewer holds it (one process may not open it twice with other settings)."""
    cur = client.app.state.store.connection.cursor()
    try:
        return list(cur.execute(query).fetchall())
    finally:
        cur.close()


def _cells(html: str, table_id: str) -> list[list[str]]:
    body = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, flags=re.S)
    return [
        [unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
        for r in rows
        if "<td" in r
    ]


def test_runs_page_lists_every_run_with_its_counts(client: Any, viewer_store: Path) -> None:
    page = client.get("/")
    assert page.status_code == 200
    rows = {r[1]: r for r in _cells(page.text, "runs")}  # the first cell ticks a run to compare
    assert set(rows) == {"quality", "persuasion"}
    ok, invalid, refusal = _sql(
        client, "SELECT sum(n_ok), sum(n_invalid), sum(n_refusal) FROM run_summary WHERE run_id = 'quality'"
    )[0]
    assert rows["quality"][7:10] == [f"{ok:,}", f"{invalid:,}", f"{refusal:,}"]  # the mode sits under the rubric
    assert "fake/kind, fake/strict, fake/shy" in rows["quality"][3]
    mean = _sql(
        client, "SELECT avg(jury_score) FROM jury_pointwise WHERE run_id = 'quality' AND criterion = 'relevance'"
    )
    assert rows["quality"][5].replace(" ", "") == f"relevance{mean[0][0]:.2f}"  # the first criterion's jury mean
    # Filters are applied by the server.
    only = _cells(client.get("/?status=finished&rubric=persuasion").text, "runs")
    assert [r[1] for r in only] == ["persuasion"]
    assert "No run matches" in client.get("/?dataset=nothing-here").text


def test_run_page_figures_equal_the_jury_view(client: Any, viewer_store: Path) -> None:
    page = client.get("/runs/quality")
    assert page.status_code == 200
    expected = _sql(
        client,
        "SELECT criterion, count(jury_score), avg(jury_score), stddev_samp(jury_score) "
        "FROM jury_pointwise WHERE run_id = 'quality' GROUP BY 1",
    )
    shown = {r[0]: r for r in _cells(page.text, "figures")}
    for criterion, n, mean, sd in expected:
        from scipy.stats import t

        half = t.ppf(0.975, n - 1) * sd / math.sqrt(n)
        assert shown[criterion][1] == str(n)
        assert float(shown[criterion][2]) == pytest.approx(mean, rel=1e-3)
        low, high = (float(x) for x in shown[criterion][3].strip("[]").split(","))
        assert (low, high) == (pytest.approx(mean - half, rel=1e-3), pytest.approx(mean + half, rel=1e-3))
    jurors = [r[0] for r in _cells(page.text, "jurors")]
    assert jurors == ["fake/kind", "fake/strict", "fake/shy"]
    assert "Agreement with human labels" in page.text and 'id="agreement"' in page.text


def test_item_page_shows_every_call_and_escapes_text(client: Any) -> None:
    page = client.get("/runs/quality/subjects/xss-1")
    assert page.status_code == 200
    assert "<script>document.title" not in page.text  # never markup
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;" in page.text
    assert "<img src=x" not in page.text and "m&lt;x&gt;" in page.text
    assert page.text.count('class="call ') == 4  # kind x2 samples, strict, shy
    assert "Raw answer" in page.text


def test_pair_page_shows_both_orders(client: Any) -> None:
    runs = client.get("/runs/persuasion").text
    first = re.search(r'/runs/persuasion/subjects/([^"]+)"', runs).group(1)
    page = client.get(f"/runs/persuasion/subjects/{first}")
    assert page.status_code == 200
    assert "order AB" in page.text and "order BA" in page.text


def test_disagreements_sorted_by_spread(client: Any, viewer_store: Path) -> None:
    rows = _cells(client.get("/runs/quality/disagreements").text, "disagreements")
    spreads = [float(r[3]) for r in rows]
    assert spreads == sorted(spreads, reverse=True) and spreads
    top = _sql(
        client,
        "SELECT max(s) FROM (SELECT max(juror_score) - min(juror_score) AS s FROM juror_pointwise "
        "WHERE run_id = 'quality' GROUP BY item_id, criterion)",
    )[0][0]
    assert spreads[0] == pytest.approx(top, abs=1e-3)
    flips = _cells(client.get("/runs/persuasion/disagreements?sort=flips").text, "disagreements")
    counts = [int(r[5]) for r in flips]
    assert counts == sorted(counts, reverse=True) and counts[0] > 0  # the biased juror flips


def test_statistic_page_has_table_and_plot(client: Any) -> None:
    listing = client.get("/stats").text
    ids = re.findall(r'href="/stats/([0-9a-f]{32})"', listing)
    assert len(ids) == 2
    pages = [client.get(f"/stats/{i}").text for i in ids]
    assert all("<svg" in p for p in pages)  # directional and gap are drawn inline
    # The plot's caption names the run and the rubric (where it wraps depends on the parameters' length)
    assert any(
        "run persuasion;" in p and re.search(r"rubric\s*(</tspan>\s*<tspan[^>]*>)?\s*persuasion", p) for p in pages
    )


def test_subject_pages_page_by_key(client: Any) -> None:
    first = client.get("/runs/quality").text
    assert "Next page" not in first  # 13 items fit one page
    page = client.get("/runs/quality?after=ex-p1-m1")
    ids = [r[0] for r in _cells(page.text, "subjects")]
    assert ids and all(i > "ex-p1-m1" for i in ids)


def test_unknown_pages_say_so(client: Any) -> None:
    page = client.get("/runs/nope")
    assert page.status_code == 404 and "no run &#39;nope&#39;" in page.text
    assert client.get("/stats/nope").status_code == 404
    assert client.get("/calibrations/nope").status_code == 404


def test_report_html_is_one_self_contained_file(viewer_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = run_cli(
        "report", "html", "--run", "persuasion", "--run", "quality", "-o", str(out), "--db", str(viewer_store)
    )
    assert result.exit_code == 0, result.stderr
    html = out.read_text()
    assert "<link" not in html and "<style>" in html and "http://" not in html.split("<svg", 1)[0]
    assert html.count("<svg") == 2 and "Run persuasion" in html and "Run quality" in html
    missing = run_cli("report", "html", "--run", "nope", "-o", str(tmp_path / "n.html"), "--db", str(viewer_store))
    assert missing.exit_code == 2 and "no run 'nope'" in missing.stderr and not (tmp_path / "n.html").exists()


def test_service_serves_the_pages_behind_its_token(viewer_store: Path, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from jurybench.service import ServiceConfig, create_app

    db = tmp_path / "s.duckdb"
    shutil.copy(viewer_store, db)
    app = create_app(ServiceConfig(db=db, token="tok-1234567890abcdef"), start_jobs=False)
    with TestClient(app) as c:
        gate = c.get("/runs/quality", follow_redirects=False)
        assert gate.status_code == 303 and gate.headers["location"] == "/login?next=%2Fruns%2Fquality"
        assert c.get("/v1/rubrics").status_code == 401  # the API still wants its bearer token
        wrong = c.post(
            "/login", content="token=nope&next=%2F", headers={"content-type": "application/x-www-form-urlencoded"}
        )
        assert wrong.status_code == 401
        signed = c.post(
            "/login",
            content="token=tok-1234567890abcdef&next=%2Fruns%2Fquality",
            headers={"content-type": "application/x-www-form-urlencoded"},
            follow_redirects=False,
        )
        assert signed.status_code == 303 and signed.headers["location"] == "/runs/quality"
        assert "tok-1234567890abcdef" not in signed.headers.get(
            "set-cookie", ""
        )  # the cookie is derived, not the token
        page = c.get("/runs/quality")
        # the service's viewer takes labels, blind: no jury figure (issue 57, item 2)
        assert page.status_code == 200 and 'id="figures"' not in page.text and 'id="blind"' in page.text
        # and the cookie opens no /v1 answer (GET /v1/annotations held every annotator's labels)
        assert c.get("/v1/annotations").status_code == 401 and c.get("/v1/rubrics").status_code == 401
        evil = c.post(
            "/login",
            content="token=tok-1234567890abcdef&next=%2F%2Fevil.example",
            headers={"content-type": "application/x-www-form-urlencoded"},
            follow_redirects=False,
        )
        assert evil.headers["location"] == "/"  # no open redirect
        assert c.get("/v1/rubrics", headers={"Authorization": "Bearer tok-1234567890abcdef"}).status_code == 200
    shown = create_app(ServiceConfig(db=db, token="tok-1234567890abcdef", show_jury=True), start_jobs=False)
    with TestClient(shown) as c:  # serve --show-jury: the figures are back
        c.post(
            "/login",
            content="token=tok-1234567890abcdef&next=%2F",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert 'id="figures"' in c.get("/runs/quality").text


def test_hostile_text_constant_is_what_the_store_holds(client: Any) -> None:
    assert _sql(client, "SELECT response FROM items WHERE item_id = 'xss-1'") == [(HOSTILE,)]


def test_view_usage_mistakes_are_one_line(tmp_path: Path, viewer_store: Path) -> None:
    import socket

    missing = run_cli("view", "--db", str(tmp_path / "none.duckdb"), "--no-browser")
    assert missing.exit_code == 2 and "no such store" in missing.stderr and "Traceback" not in missing.stderr
    public = run_cli("view", "--db", str(viewer_store), "--host", "0.0.0.0", "--no-browser")
    assert public.exit_code == 2 and "loopback only" in public.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = run_cli("view", "--db", str(viewer_store), "--port", str(busy.getsockname()[1]), "--no-browser")
    assert taken.exit_code == 2 and "cannot listen" in taken.stderr and not (tmp_path / "none.duckdb").exists()


def test_preference_run_shows_accuracy_against_human_labels(con: Any, data_dir: Path, tmp_path: Path) -> None:
    """LLMBar MT-Bench judged by its four replayed jurors: the run page's accuracy table equals
    the preference report's figures (each juror and the majority jury, in both orders)."""
    from fastapi.testclient import TestClient

    from jurybench.annotations import preference_accuracy
    from jurybench.datasets import import_llmbar
    from jurybench.engine import EngineOptions, score
    from jurybench.jury import load_jury_file
    from jurybench.rubric import load_rubric
    from jurybench.viewer import create_viewer_app
    from tests.conftest import REPO

    import_llmbar(con, data_dir)
    score(
        con,
        load_rubric("preference"),
        load_jury_file(REPO / "juries" / "llmbar-mtbench-vanilla-norules.yaml"),
        where="dataset = 'llmbar-MT-Bench'",
        run_id="mt",
        options=EngineOptions(progress=False),
    )
    report = preference_accuracy(con, "mt").as_dict()
    db = Path(con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()[0])
    con.close()
    with TestClient(create_viewer_app(db, warm_up=False)) as client:
        rows = {r[0]: r for r in _cells(client.get("/runs/mt").text, "preference-agreement")}
    for row in [*report["jurors"], report["jury"]]:
        assert rows[row["juror"]][1] == f"{100 * row['correct_ab_rate']:.1f} %"
        assert rows[row["juror"]][3] == f"{100 * row['both_correct_rate']:.1f} %"


def test_a_run_named_with_a_slash_opens(tmp_path: Path) -> None:
    # "/runs/a%2Fb" was decoded to /runs/a/b before routing: a 404 (issue 27).
    from fastapi.testclient import TestClient

    from jurybench.viewer import create_viewer_app
    from tests.conftest import write

    db = tmp_path / "slash.duckdb"
    assert (
        run_cli(
            "items", "import", str(write(tmp_path / "i.csv", "item_id,response\na/1,x\nb,y\n")), "--db", str(db)
        ).exit_code
        == 0
    )
    for run in ("study/one", "100%/sure"):
        assert (
            run_cli(
                "score",
                "--rubric",
                "story-quality",
                "--juror",
                "fake/a",
                "--run",
                run,
                "--no-progress",
                "--db",
                str(db),
            ).exit_code
            == 0
        )
    with TestClient(create_viewer_app(db, warm_up=False)) as c:
        home = c.get("/").text
        for run in ("study/one", "100%/sure"):
            shown = re.escape(run).replace("/", "/<wbr>")  # a name wraps after its slash, not inside a word
            href = re.search(r'href="(/runs/[^"]+)">' + shown + "<", home)
            assert href, run
            page = c.get(unescape(href.group(1)))
            assert page.status_code == 200 and run in unescape(page.text)
            sub = re.search(r'href="(/runs/[^"]+/subjects/[^"]+)"', page.text)
            assert sub and c.get(unescape(sub.group(1))).status_code == 200
            assert c.get(unescape(href.group(1)) + "/disagreements").status_code == 200


def test_report_html_keeps_its_style_sheet_whole_and_shows_the_calibration_fitted_on_the_run(tmp_path: Path) -> None:
    """The inline CSS was HTML-escaped ("DejaVu Sans Mono" became &#34;DejaVu...), so the report
    fell back to the browser's serif font; and a calibration fitted on the run was left out."""
    from tests.conftest import ITEMS_CSV, write

    db = str(tmp_path / "cal.duckdb")
    rows = "".join(f"i{k},Write about thing {k % 4},Text number {k}.,m{k % 2},en,f\n" for k in range(4, 24))
    items = write(tmp_path / "items.csv", ITEMS_CSV + rows)
    assert run_cli("items", "import", str(items), "--db", db).exit_code == 0
    done = run_cli(
        "score",
        "-r",
        "story-quality",
        "-j",
        "sim/a,seed=1",
        "-j",
        "sim/b,seed=2,noise=1",
        "--run",
        "both",
        "--no-progress",
        "--db",
        db,
    )
    assert done.exit_code == 0, done.stderr
    assert run_cli("annotations", "simulate", "-r", "story-quality", "--db", db).exit_code == 0
    fitted = run_cli(
        "calibrate",
        "--run",
        "both",
        "--name",
        "fitted",
        "--folds",
        "2",
        "--boot",
        "10",
        "--out",
        str(tmp_path / "calibration"),
        "--db",
        db,
    )
    assert fitted.exit_code == 0, fitted.stderr
    out = tmp_path / "r.html"
    assert run_cli("report", "html", "--run", "both", "-o", str(out), "--db", db).exit_code == 0
    html = out.read_text(encoding="utf-8")
    from jurybench.viewer import _web

    css = (_web.HERE / "static" / "viewer.css").read_text(encoding="utf-8")
    assert f"<style>{css}</style>" in html and "&#34;" not in html.split("</style>")[0]
    assert "Calibration fitted" in html
    assert "to report: least squares, 95 % intervals by the leave-one-group-out jackknife" in html  # issue 43


def test_a_run_page_and_its_report_count_invalid_judgments_not_only_calls(tmp_path: Path) -> None:
    """Issue 40, item 8: HANNA's run page and report showed 0 invalid (calls) where its import
    stored 1,051 invalid judgments (in ok calls). Both now count judgments by status too."""
    from fastapi.testclient import TestClient

    from jurybench.viewer import create_viewer_app
    from tests.conftest import ITEMS_CSV, write

    db = tmp_path / "inv.duckdb"
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db)).exit_code == 0
    rows = "item_id,criterion,score,status\ni1,relevance,4,ok\ni1,coherence,,invalid\ni2,relevance,3,ok\n"
    assert (
        run_cli(
            "judgments",
            "import",
            str(write(tmp_path / "j.csv", rows)),
            "--run",
            "imp",
            "-r",
            "story-quality",
            "-j",
            "panel",
            "--db",
            str(db),
        ).exit_code
        == 0
    )
    expected = "<dt>judgments</dt><dd>3: 2 valid, 1 invalid, 0 refusal"
    with TestClient(create_viewer_app(db, warm_up=False)) as c:
        page = c.get("/runs/imp").text
    assert expected in page and "2 ok, 0 invalid" in page  # the calls: both ok, one holding an invalid judgment
    out = tmp_path / "r.html"
    assert run_cli("report", "html", "--run", "imp", "-o", str(out), "--db", str(db)).exit_code == 0
    assert expected in out.read_text(encoding="utf-8")
