"""The judgment store: one DuckDB file, migrated schema, imports, views."""

from jurybench.store._db import connect, migrate, pending_migrations, transaction
from jurybench.store._imports import ImportResult, import_items, import_pairs
from jurybench.store._migrations import MIGRATIONS, VIEW_DOCS

__all__ = [
    "MIGRATIONS",
    "VIEW_DOCS",
    "ImportResult",
    "connect",
    "import_items",
    "import_pairs",
    "migrate",
    "pending_migrations",
    "transaction",
]
