"""The judgment store: one DuckDB file, migrated schema, imports, views.

Internal: the names below are this stage's interface to the other stages (the order in
docs/architecture.md), not a public API; see "What is public" there."""

from jurybench.store._db import (
    OpenStore,
    Params,
    StoreRef,
    connect,
    connection_config,
    file_of,
    first_row,
    migrate,
    pending_migrations,
    reading,
    registered,
    scalar,
    transaction,
    writing,
)
from jurybench.store._holder import Holder
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
from jurybench.store._label_uses import refuse_all_used, used_labels
from jurybench.store._migrations import MIGRATIONS
from jurybench.store._query import rich_table, run_query, to_csv, to_json, to_parquet
from jurybench.store._read import Row, as_float, is_blank, plain_number, read_rows, require_columns, text_field
from jurybench.store._safe import (
    HARDENED,
    DuckConfig,
    StoreBusy,
    check_query,
    execute_user_sql,
    expression,
    open_with_retry,
    read_only_transaction,
    release_request,
    select_table,
)
from jurybench.store._schema_doc import schema_json, schema_markdown
from jurybench.store._server_file import holder_of, server_file

__all__ = [
    "HARDENED",
    "MIGRATIONS",
    "DuckConfig",
    "Holder",
    "ImportResult",
    "OpenStore",
    "Params",
    "Row",
    "StoreBusy",
    "StoreRef",
    "as_float",
    "check_query",
    "connect",
    "connection_config",
    "execute_user_sql",
    "expression",
    "file_of",
    "first_row",
    "holder_of",
    "import_baseline_rows",
    "import_baselines",
    "import_item_rows",
    "import_items",
    "import_pair_rows",
    "import_pairs",
    "is_blank",
    "migrate",
    "open_with_retry",
    "pending_migrations",
    "plain_number",
    "read_only_transaction",
    "read_rows",
    "reading",
    "refuse_all_used",
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
    "used_labels",
    "write_items",
    "write_pairs",
    "writing",
]
