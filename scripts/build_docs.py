"""make docs: the README (as the home page) and docs/*.md as one site, built offline with MkDocs
and the Material theme (no web fonts, no CDN); --strict turns every broken link or anchor into an
error. The pages are staged in a temporary folder with their links made site-relative: the
README's `docs/X.md` becomes `X.md`, a page's `../README.md` the home page."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The navigation: the home page, the walk-through's continuation in its order, then the reference.
NAV = [
    ("Home", "index.md"),
    ("Judging", "judging.md"),
    ("The viewer", "viewer.md"),
    ("Project, CI and exports", "workflow.md"),
    ("The store", "store.md"),
    ("Human labels", "labels.md"),
    ("Statistics and plots", "analysis.md"),
    ("Audit studies", "studies.md"),
    ("HTTP service", "service.md"),
    ("Conversations and agents", "conversations.md"),
    ("Python API", "python.md"),
    ("Rubrics", "rubrics.md"),
    ("Import formats", "formats.md"),
    ("Schema", "schema.md"),
    ("Statistics: definitions", "statistics.md"),
    ("Extending", "extending.md"),
    ("Architecture", "architecture.md"),
    ("Performance", "performance.md"),
]

CONFIG = """site_name: jurybench
docs_dir: {pages}
site_dir: {site}
use_directory_urls: false
strict: true
theme:
  name: material
  font: false
  features: [navigation.sections, content.code.copy]
markdown_extensions: [tables, toc, admonition, pymdownx.superfences]
plugins: [search]
validation:
  nav:
    omitted_files: warn
    not_found: warn
  links:
    not_found: warn
    anchors: warn
    absolute_links: warn
    unrecognized_links: warn
nav:
{nav}
"""


def stage(pages: Path, root: Path = REPO) -> None:
    """The pages of ``root`` (a clone), with links as the site has them."""
    home = (root / "README.md").read_text(encoding="utf-8")
    home = re.sub(r"\]\(docs/", "](", home)
    (pages / "index.md").write_text(home, encoding="utf-8")
    for page in sorted((root / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8").replace("](../README.md", "](index.md")
        (pages / page.name).write_text(text, encoding="utf-8")
    for picture in (root / "docs").glob("*.png"):
        shutil.copy(picture, pages / picture.name)
    staged = {p.name for p in pages.glob("*.md")}
    missing = [name for _, name in NAV if name not in staged]
    unlisted = sorted(staged - {name for _, name in NAV})
    if missing or unlisted:
        sys.exit(f"make docs: the navigation and docs/ disagree (missing {missing}, not listed {unlisted})")


def build(site: Path, root: Path = REPO) -> int:
    with tempfile.TemporaryDirectory(prefix="jurybench-docs-") as tmp:
        pages = Path(tmp) / "pages"
        pages.mkdir()
        stage(pages, root)
        config = Path(tmp) / "mkdocs.yml"
        nav = "\n".join(f"  - {title!r}: {name}" for title, name in NAV)
        config.write_text(CONFIG.format(pages=pages, site=site.resolve(), nav=nav), encoding="utf-8")
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # the theme's notice of its successor, at every build
        done = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)],
            env=env,
            capture_output=True,
            text=True,
        )
        for line in done.stderr.splitlines():  # --quiet would hide the warnings --strict counts
            if not line.startswith("INFO"):
                print(line, file=sys.stderr)
        return done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=REPO / "site", help="the site's folder (default ./site)")
    args = parser.parse_args()
    code = build(args.out)
    if code == 0:
        print(f"wrote {args.out / 'index.html'}")
    sys.exit(code)


if __name__ == "__main__":
    main()
