"""The viewer: the store's runs, jurors, items, disagreements, statistics and calibrations as
pages in a browser (``jurybench view``, and ``jurybench serve`` at ``/``), and a run as one
self-contained HTML file (``jurybench report html``).

Internal: the names below are this stage's interface to the other stages (the order in
docs/architecture.md), not a public API; see "What is public" there."""

from jurybench.viewer._bundle import report_bundle
from jurybench.viewer._label import Annotating
from jurybench.viewer._report import report_html
from jurybench.viewer._web import WarmUp, create_viewer_app, router, warm

__all__ = ["Annotating", "WarmUp", "create_viewer_app", "report_bundle", "report_html", "router", "warm"]
