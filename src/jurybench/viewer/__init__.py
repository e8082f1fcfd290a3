"""The viewer: the store's runs, jurors, items, disagreements, statistics and calibrations as
pages in a browser (``jurybench view``, and ``jurybench serve`` at ``/``), and a run as one
self-contained HTML file (``jurybench report html``).

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from jurybench.viewer._bundle import report_bundle
from jurybench.viewer._label import Annotating
from jurybench.viewer._report import report_html
from jurybench.viewer._web import WarmUp, create_viewer_app, router, warm

__all__ = ["Annotating", "WarmUp", "create_viewer_app", "report_bundle", "report_html", "router", "warm"]
