"""Find and step (issue 32): a run's items filtered by text, criterion score, disagreement,
outcome, human labels and metadata, in a chosen order; an item's previous and next follow the
filter. Each list is checked against the store's own views."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest

from tests.viewer.test_pages import _cells, _sql, client  # noqa: F401 (the module's fixture)


def _found(client: Any, query: str, run: str = "quality") -> list[str]:  # noqa: F811
    """Every id the run page lists under the filter, following its pages."""
    ids: list[str] = []
    url: str | None = f"/runs/{run}?{query}"
    while url:
        page = client.get(url)
        assert page.status_code == 200, page.text
        rows = _cells(page.text, "subjects") if 'id="subjects"' in page.text else []
        ids += [r[1] for r in rows]
        more = re.search(r'<p class="pager"><a rel="next" href="([^"]+)"', page.text)
        url = unescape(more.group(1)).split("#")[0] if more else None
    return ids


def _ids(client: Any, sql: str) -> list[str]:  # noqa: F811
    return [r[0] for r in _sql(client, sql)]


def test_a_score_range_on_a_criterion_finds_what_the_jury_view_holds(client: Any) -> None:  # noqa: F811
    found = _found(client, "criterion=coherence&min=3&max=4")
    want = _ids(
        client,
        "SELECT item_id FROM jury_pointwise WHERE run_id = 'quality' AND criterion = 'coherence' "
        "AND jury_score BETWEEN 3 AND 4 ORDER BY item_id",
    )
    assert found == want and 0 < len(found) < 30
    # highest first, ties by id
    by_score = _found(client, "criterion=coherence&sort=-score")
    scores = dict(
        _sql(
            client,
            "SELECT item_id, jury_score FROM jury_pointwise WHERE run_id = 'quality' AND criterion = 'coherence'",
        )
    )
    assert by_score == sorted(scores, key=lambda i: (-(scores[i] if scores[i] is not None else -1e9), i))


def test_disagreement_outcome_labels_and_text_filter_like_sql(client: Any) -> None:  # noqa: F811
    spread = _found(client, "criterion=relevance&spread=2&sort=spread")
    want = _sql(
        client,
        "SELECT item_id, max(juror_score) - min(juror_score) AS s FROM juror_pointwise "
        "WHERE run_id = 'quality' AND criterion = 'relevance' GROUP BY item_id HAVING s >= 2 "
        "ORDER BY s DESC, item_id",
    )
    assert spread == [r[0] for r in want] and spread
    for status in ("invalid", "refusal", "error"):
        assert _found(client, f"status={status}") == _ids(
            client,
            f"""
            SELECT DISTINCT c.subject_id FROM run_calls rc JOIN calls c USING (call_key)
            LEFT JOIN pointwise_judgments j USING (call_key)
            WHERE rc.run_id = 'quality' AND (c.status = '{status}' OR j.status = '{status}') ORDER BY 1""",
        )
    assert _found(client, "status=refusal")  # fake/shy refuses 15 %
    labelled = _ids(client, "SELECT DISTINCT subject_id FROM human_labels WHERE subject_kind = 'item' ORDER BY 1")
    everything = _ids(client, "SELECT subject_id FROM run_subjects WHERE run_id = 'quality' ORDER BY 1")
    assert _found(client, "human=with") == [i for i in everything if i in labelled] and labelled
    assert _found(client, "human=without") == [i for i in everything if i not in labelled] == ["xss-1"]
    assert _found(client, "q=%3Cscript") == ["xss-1"]  # the prompt's text, case-insensitive
    assert _found(client, "q=zzz-nothing") == []
    assert "Nothing matches" in client.get("/runs/quality?q=zzz-nothing").text
    assert _found(client, "model=m%3Cx%3E") == ["xss-1"]


def test_a_bad_filter_value_is_one_line_naming_the_field(client: Any) -> None:  # noqa: F811
    for query, field in (
        ("min=abc&criterion=coherence", "min='abc' is not a number"),
        ("status=lost", "status='lost'"),
        ("min=3", "needs a criterion"),
        ("sort=random", "sort='random'"),
    ):
        page = client.get(f"/runs/quality?{query}")
        assert page.status_code == 400 and field in unescape(page.text), query


def test_previous_and_next_follow_the_filter_and_its_order(client: Any) -> None:  # noqa: F811
    query = "criterion=coherence&min=2&sort=-score"  # in the order the page writes it
    found = _found(client, query)
    assert len(found) >= 3
    walked, url = [], f"/runs/quality/subjects/{found[0]}?{query}"
    while url:
        page = client.get(url).text
        walked.append(unescape(re.search(r"<h1>Item (.*?)</h1>", page).group(1)))  # type: ignore[union-attr]
        assert f"{len(walked)} of {len(found)} found" in page
        following = re.search(r'<a rel="next" accesskey="j" href="([^"]+)"', page)
        url = unescape(following.group(1)) if following else None
    assert walked == found
    back = re.search(
        r'<a rel="prev" accesskey="k" href="([^"]+)"', client.get(f"/runs/quality/subjects/{found[1]}?{query}").text
    )
    assert back and unescape(back.group(1)) == f"/runs/quality/subjects/{found[0]}?{query}"
    # Without a filter the run's own order: by id.
    everything = _ids(client, "SELECT subject_id FROM run_subjects WHERE run_id = 'quality' ORDER BY 1")
    middle = client.get(f"/runs/quality/subjects/{everything[1]}").text
    assert (
        f'href="/runs/quality/subjects/{everything[2]}"' in middle
        and f'href="/runs/quality/subjects/{everything[0]}"' in middle
    )


def test_pairs_are_found_by_category_flip_spread_too(client: Any) -> None:  # noqa: F811
    found = _found(client, "criterion=logos&spread=0.5", run="persuasion")
    want = _ids(
        client,
        "SELECT pair_id FROM juror_pairwise WHERE run_id = 'persuasion' AND category = 'logos' "
        "GROUP BY pair_id HAVING max(juror_epsilon) - min(juror_epsilon) >= 0.5 ORDER BY 1",
    )
    assert found == want


@pytest.mark.parametrize("path", ["/runs/quality", "/runs/quality/subjects/xss-1"])
def test_the_only_script_is_the_viewers_own_file(client: Any, path: str) -> None:  # noqa: F811
    page = client.get(path)
    assert page.headers["Content-Security-Policy"].endswith("script-src 'self'")
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    assert re.findall(r"<script[^>]*>", page.text) == ['<script src="/assets/keys.js" defer>']
    script = client.get("/assets/keys.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
