"""Ordered, named migrations, one module each. Never change what a shipped one does to tables:
add the next.

Each is a function taking a DuckDB connection; ``migrate`` applies the ones not yet recorded
in the ``migrations`` table, in this order, each in its own transaction. A migration carries no
view SQL: it names the views it changed (its module's ``VIEWS``, listed in ``NAMED_VIEWS``),
and once the pending migrations are applied every view is made from its one current
definition in store/_views.py. To change a view: change it there and add a migration naming it.
"""

from __future__ import annotations

from jurybench.store._migrations._base import Migration
from jurybench.store._migrations._view_docs import VIEW_DOCS
from jurybench.store._migrations.m001_initial import m001_initial
from jurybench.store._migrations.m002_calibration import m002_calibration
from jurybench.store._migrations.m003_stats_results import m003_stats_results
from jurybench.store._migrations.m004_jury import m004_jury
from jurybench.store._migrations.m005_studies import m005_studies
from jurybench.store._migrations.m006_service import m006_service
from jurybench.store._migrations.m007_calibrated_join import m007_calibrated_join
from jurybench.store._migrations.m008_batches import m008_batches
from jurybench.store._migrations.m009_juror_views_by_run import m009_juror_views_by_run
from jurybench.store._migrations.m010_unindexed_growing_tables import m010_unindexed_growing_tables
from jurybench.store._migrations.m011_judgments_from_anywhere import m011_judgments_from_anywhere
from jurybench.store._migrations.m012_sequential_runs import m012_sequential_runs
from jurybench.store._migrations.m013_label_notes import m013_label_notes
from jurybench.store._migrations.m014_label_blindness import m014_label_blindness
from jurybench.store._migrations.m015_label_samples import m015_label_samples
from jurybench.store._migrations.m016_saw_jury_by_cookie import m016_saw_jury_by_cookie
from jurybench.store._migrations.m017_anchor_sets import m017_anchor_sets
from jurybench.store._migrations.m018_alignments import m018_alignments
from jurybench.store._migrations.m019_run_executor import m019_run_executor
from jurybench.store._migrations.m020_conversations import m020_conversations

MIGRATIONS: list[tuple[str, Migration]] = [
    ("m001_initial", m001_initial),
    ("m002_calibration", m002_calibration),
    ("m003_stats_results", m003_stats_results),
    ("m004_jury", m004_jury),
    ("m005_studies", m005_studies),
    ("m006_service", m006_service),
    ("m007_calibrated_join", m007_calibrated_join),
    ("m008_batches", m008_batches),
    ("m009_juror_views_by_run", m009_juror_views_by_run),
    ("m010_unindexed_growing_tables", m010_unindexed_growing_tables),
    ("m011_judgments_from_anywhere", m011_judgments_from_anywhere),
    ("m012_sequential_runs", m012_sequential_runs),
    ("m013_label_notes", m013_label_notes),
    ("m014_label_blindness", m014_label_blindness),
    ("m015_label_samples", m015_label_samples),
    ("m016_saw_jury_by_cookie", m016_saw_jury_by_cookie),
    ("m017_anchor_sets", m017_anchor_sets),
    ("m018_alignments", m018_alignments),
    ("m019_run_executor", m019_run_executor),
    ("m020_conversations", m020_conversations),
]


def _named_views() -> dict[str, tuple[str, ...]]:
    import importlib

    modules = {name: importlib.import_module(f"{__name__}.{name}") for name, _ in MIGRATIONS}
    return {name: tuple(module.VIEWS) for name, module in modules.items() if hasattr(module, "VIEWS")}


# The views each migration changed (the definitions are store/_views.py's).
NAMED_VIEWS: dict[str, tuple[str, ...]] = _named_views()

__all__ = ["MIGRATIONS", "NAMED_VIEWS", "VIEW_DOCS", "Migration"]
