"""make docs (issue 56, item 1): the README and docs/ build as one site offline, strictly (a broken
link or anchor fails the build), every relative link in the built pages leads to a file, and no
page loads anything from the network."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import build_docs


def _links(site: Path) -> list[tuple[str, str]]:
    found = []
    for page in site.rglob("*.html"):
        if page.name == "404.html":  # served by a web server at any path: its links are absolute
            continue
        for target in re.findall(r'(?:href|src)="([^"]+)"', page.read_text(encoding="utf-8")):
            found.append((str(page.relative_to(site)), target))
    return found


def test_the_docs_build_as_a_site_with_no_broken_link(tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert build_docs.build(site) == 0
    pages = {p.name for p in site.glob("*.html")}
    assert {"index.html", "judging.html", "labels.html", "workflow.html", "schema.html"} <= pages
    links = _links(site)
    assert len(links) > 500
    broken = []
    for page, target in links:
        if target.startswith(("http://", "https://", "mailto:")):
            assert "fonts.googleapis" not in target and "cdn" not in target, (page, target)  # offline
            continue
        path = target.split("#", 1)[0].split("?", 1)[0]
        if path and not ((site / page).parent / path).exists():
            broken.append((page, target))
    assert broken == []
    home = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="judging.html"' in home and 'href="labels.html"' in home  # the README's docs/ links, made site links


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    shutil.copytree(REPO / "docs", clone / "docs")
    shutil.copy(REPO / "README.md", clone / "README.md")
    with (clone / "docs" / "viewer.md").open("a", encoding="utf-8") as fh:
        fh.write("\nSee [the rest](store.md#no-such-section).\n")
    assert build_docs.build(tmp_path / "site", clone) == 1
