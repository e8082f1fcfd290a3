"""The judgment store: one DuckDB file, migrated schema, imports, views."""

from jurybench.store._db import (
    connect,
    execute_user_sql,
    first_row,
    migrate,
    pending_migrations,
    reading,
    registered,
    scalar,
    transaction,
    writing,
)
from jurybench.store._holder import holder_of, server_file
from jurybench.store._imports import (
    ImportResult,
    import_baseline_rows,
    import_baselines,
    import_item_rows,
    import_items,
    import_pair_rows,
    import_pairs,
    write_items,
    write_pairs,
)
from jurybench.store._migrations import MIGRATIONS, VIEW_DOCS
from jurybench.store._query import rich_table, run_query, to_csv, to_json, to_parquet
from jurybench.store._read import Row, read_rows, require_columns, text_field
from jurybench.store._safe import (
    HARDENED,
    StoreBusy,
    check_query,
    expression,
    open_with_retry,
    release_request,
    select_table,
)
from jurybench.store._schema_doc import schema_json, schema_markdown

__all__ = [
    "HARDENED",
    "MIGRATIONS",
    "VIEW_DOCS",
    "ImportResult",
    "Row",
    "StoreBusy",
    "check_query",
    "connect",
    "execute_user_sql",
    "expression",
    "first_row",
    "holder_of",
    "import_baseline_rows",
    "import_baselines",
    "import_item_rows",
    "import_items",
    "import_pair_rows",
    "import_pairs",
    "migrate",
    "open_with_retry",
    "pending_migrations",
    "read_rows",
    "reading",
    "registered",
    "release_request",
    "require_columns",
    "rich_table",
    "run_query",
    "scalar",
    "schema_json",
    "schema_markdown",
    "select_table",
    "server_file",
    "text_field",
    "to_csv",
    "to_json",
    "to_parquet",
    "transaction",
    "write_items",
    "write_pairs",
    "writing",
]
