"""An open judgment store: imports from data or files, SQL to DataFrames."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from jurybench.api._imports import import_judgments, import_released
from jurybench.api._labelling import add_anchors, import_annotations, sample_labels, simulate_annotations
from jurybench.api._rows import expect, rows_of
from jurybench.declare import python_signature
from jurybench.errors import JurybenchError, user_facing
from jurybench.store import Holder

if TYPE_CHECKING:
    import pandas as pd
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.api._specs import Data
    from jurybench.store import ImportResult


# What the Python face takes as a store: an open one, a path (a new file is created), or a
# DuckDB connection.
StoreLike: TypeAlias = "Store | str | Path | Connection"


class Store(Holder):
    """An open judgment store (``jurybench.open(path)``): a context manager that closes the
    file on exit. Writable by default; ``read_only=True`` opens it for reading alongside a
    running ``jurybench score``. It holds the file as the viewer and the service do
    (:class:`jurybench.store.Holder`: a cursor per use, one writer at a time), and lets it go
    while a run judges."""

    def __init__(
        self, path: str | Path | None = None, *, read_only: bool = False, memory_limit: str | None = None
    ) -> None:
        """``memory_limit`` (e.g. ``"256MB"``) caps DuckDB's memory on a writable store (what the
        CLI's importers do); by default DuckDB takes up to 80 % of RAM."""
        import threading

        from jurybench.config import db_path

        if path is not None and not isinstance(path, str | Path):
            raise JurybenchError(f"path: expected a file path, got {type(path).__name__}.")
        self._running = threading.Lock()  # one run (score, generate) at a time on this store
        # Hardened like the CLI's readers: user SQL (store.sql, where=, by=) reaches no file, URL or extension.
        super().__init__(db_path(path), read_only=read_only, memory_limit=memory_limit)

    @contextlib.contextmanager
    def lent_for_a_run(self) -> Iterator[Path | Connection]:
        """The file let go while a run judges (the engine opens it by path and lends it to other
        processes between flushes, as the CLI's score does), taken back after; the store's
        connection for an in-memory store. One run at a time: a second is refused at once."""
        from jurybench.store import connect

        if self.read_only:
            raise JurybenchError(f"{self.path} is open read-only.", hint="Open it with jurybench.open(path) to judge.")
        if not self._running.acquire(blocking=False):
            raise JurybenchError(
                f"{self.path}: another run (score or generate) is running on this store.",
                hint="Await it first: DuckDB lets one process write a file, and runs on one store take turns.",
            )
        try:
            connection = self._con()
            if str(self.path) == ":memory:":
                yield connection
                return
            connection.close()
            self.connection = None
            try:
                yield self.path
            finally:
                self.connection = connect(self.path, hardened=True, memory_limit=self.memory_limit)
        finally:
            self._running.release()

    # -- the connection --------------------------------------------------------------------
    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.connection is None else ("read-only" if self.read_only else "open")
        return f"<jurybench.Store {self.path} ({state})>"

    def _con(self) -> Connection:
        if self.connection is None and self._running.locked():
            raise JurybenchError(
                f"{self.path}: a run (score or generate) is using this store's file now.",
                hint="Await the run first, or read it from another jurybench.open(path, read_only=True).",
            )
        return super()._con()

    # -- reading ---------------------------------------------------------------------------
    @user_facing
    def sql(self, query: str) -> pd.DataFrame:
        """One SELECT over the store's tables and views as a DataFrame, under the rules of
        'jurybench sql': exactly one read-only statement; no files, URLs or extensions."""
        from jurybench.store import check_query, execute_user_sql, read_only_transaction

        con = self._con()
        check_query(con, query)
        with read_only_transaction(con):
            return execute_user_sql(con, query, what="SQL").df()

    @user_facing
    def runs(self) -> pd.DataFrame:
        """Every run with its counts and cost (the ``run_summary`` view) as a DataFrame."""
        return self._con().execute("SELECT * FROM run_summary ORDER BY started_at").df()

    # -- imports ---------------------------------------------------------------------------
    @user_facing
    def import_items(
        self,
        data: Data,
        *,
        dataset: str | None = None,
        treatment: Sequence[str] = (),
        fmt: str | None = None,
        map: Sequence[str] | Mapping[str, str] | None = None,
    ) -> ImportResult:
        """Generations to judge: columns item_id and response (prompt, model, language, dataset
        optional; others kept as metadata; ``treatment`` names columns that hold treatment arms).
        All rows are checked before any is written. Ids are text: a whole-number id is stored as
        its decimal text (7 as '7'); any other non-text id is refused. With ``fmt`` a
        conversation format (openai-chat, tau-bench, ...: docs/formats.md) the file's
        conversations are imported, each an item with its messages and tool calls; ``map``
        (KEY=FIELD entries) says where its records keep what the format reads."""
        from jurybench.store import import_item_rows, import_items

        expect("dataset", dataset, str)
        if fmt is not None and fmt not in ("csv", "jsonl", "parquet"):
            return self._import_conversations(data, fmt, map, dataset)
        if map:
            raise JurybenchError(
                "--map goes with a conversation format.", hint="e.g. --format openai-chat --map id=FIELD."
            )
        with self.writing() as con:
            given = rows_of(data, "item")
            if isinstance(given, str | Path):
                return import_items(con, given, fmt=fmt, treatment_columns=treatment, dataset=dataset)
            rows, source = given
            return import_item_rows(con, rows, source=source, treatment_columns=treatment, dataset=dataset)

    def _import_conversations(
        self, data: Data, fmt: str, entries: Sequence[str] | Mapping[str, str] | None, dataset: str | None
    ) -> ImportResult:
        from jurybench.imports import read_conversations
        from jurybench.store import write_conversations

        if not isinstance(data, str | Path):
            raise JurybenchError(f"--format {fmt}: give the file its reader reads.")
        found = read_conversations(Path(data), fmt, entries)  # a stream: read as it is written
        with self.writing() as con:
            return write_conversations(con, found, source=str(data), fmt=fmt, dataset=dataset or fmt)

    @user_facing
    def import_pairs(self, data: Data, *, dataset: str | None = None, fmt: str | None = None) -> ImportResult:
        """Pairs of stored items for pairwise rubrics: columns pair_id, item_a, item_b."""
        from jurybench.store import import_pair_rows, import_pairs

        expect("dataset", dataset, str)
        with self.writing() as con:
            given = rows_of(data, "pair")
            if isinstance(given, str | Path):
                return import_pairs(con, given, fmt=fmt, dataset=dataset)
            rows, source = given
            return import_pair_rows(con, rows, source=source, dataset=dataset)

    # store.simulate_annotations(rubric=...), store.sample_labels(run, n=...) and
    # store.add_anchors(run, n=...): the declared functions, this store as their store
    simulate_annotations = user_facing(simulate_annotations)
    import_annotations = user_facing(import_annotations)
    import_judgments = user_facing(import_judgments)
    import_published = user_facing(import_released)
    sample_labels = user_facing(sample_labels)
    add_anchors = user_facing(add_anchors)

    @user_facing
    def import_baselines(self, data: Data, *, name: str, statistic: str | None = None) -> ImportResult:
        """Human reference values under a name (columns target, value[, cell][, statistic]),
        for ``stats.cohens_d(..., baselines=name)`` and ``stats.ttest(..., baselines=name)``."""
        from jurybench.store import import_baseline_rows, import_baselines

        with self.writing() as con:
            given = rows_of(data, "baseline")
            if isinstance(given, str | Path):
                return import_baselines(con, given, name=name, statistic=statistic)
            rows, source = given
            return import_baseline_rows(con, rows, source=source, name=name, statistic=statistic)


Store.sample_labels.__signature__ = python_signature(Store.sample_labels)  # type: ignore[attr-defined]
Store.simulate_annotations.__signature__ = python_signature(Store.simulate_annotations)  # type: ignore[attr-defined]
Store.add_anchors.__signature__ = python_signature(Store.add_anchors)  # type: ignore[attr-defined]
Store.import_annotations.__signature__ = python_signature(Store.import_annotations)  # type: ignore[attr-defined]
Store.import_judgments.__signature__ = python_signature(Store.import_judgments)  # type: ignore[attr-defined]


def open(path: str | Path | None = None, *, read_only: bool = False) -> Store:
    """Open (and create or migrate) the judgment store at ``path`` (default: $JURYBENCH_DB or
    ./jurybench.duckdb)."""
    return Store(path, read_only=read_only)
