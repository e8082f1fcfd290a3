"""Statistics over HTTP: each registered statistic's parameters as a request body, the same
library call (``jurybench.stats``).

Options that name files on the CLI take the values inline here (a server reads no client
paths): ``reference`` for kendall (group -> value), ``factors`` for cohens-d (criterion ->
factor), ``keys`` for item-spearman (criterion -> +1/-1); human baselines by the name they
were imported under (``baselines``) for cohens-d and ttest. Every result is recorded in ``stats_results``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, create_model

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from duckdb import DuckDBPyConnection as Connection

    from jurybench.service._store import Store


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def body_model(stat: Any) -> type[BaseModel]:
    """The HTTP request body of a registered statistic: its HTTP parameters, nothing else."""
    from jurybench.declare import http_fields

    fields: dict[str, Any] = http_fields(stat.parameters)
    model: type[BaseModel] = create_model(_camel(stat.name), __config__=ConfigDict(extra="forbid"), **fields)
    model.__doc__ = stat.help.split("\n\n")[0]
    return model


def stat_bodies() -> dict[str, type[BaseModel]]:
    """Every registered statistic's HTTP body, by name."""
    from jurybench.stats import statistics

    return {name: body_model(stat) for name, stat in statistics().items()}


class _Limited:
    """The server's store, reading under the server's limits (disparity runs user SQL)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        with self.store.reading() as cur, self.store.limited(cur, timeout_s=self.store.sql_timeout_s, what="sql"):
            yield cur

    def writing(self) -> AbstractContextManager[Connection]:
        return self.store.writing()


def run_statistic(store: Store, name: str, params: BaseModel) -> dict[str, Any]:
    """Compute on a read-only (rolled back) cursor, then record the result; returns id and result.
    A statistic that runs user SQL reads under the server's SQL limits."""
    from jurybench.stats import get_statistic

    stat = get_statistic(name)
    frame = stat(_Limited(store) if stat.runs_sql else store, **params.model_dump())
    attrs = frame.attrs
    return {"result_id": attrs["result_id"], "name": name, "params": params.model_dump(), "result": attrs["result"]}
