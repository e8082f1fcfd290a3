"""Statistics as objects: one :class:`Statistic` per statistic, and a registry of them.

A statistic is a function ``compute(con, run, **parameters) -> dict`` whose parameters are
annotated with :class:`Param` (help text, the faces that offer it, choices, the HTTP body's
bounds), a ``table`` that flattens its result into columns and rows, and the plots drawn from
it. Everything a user meets is derived from that one object:

- the Python call ``jurybench.stats.<name>(store, run, ...)`` (the statistic itself, typed by
  its compute function's signature), which records the result in ``stats_results`` and
  returns a tidy DataFrame;
- the CLI command ``jurybench stats <name>`` (options, help, required flags);
- the HTTP body and endpoint ``POST /v1/stats/<name>``;
- the study step ``stats <name>``;
- the recorded row's ``params`` and the tables of the CLI, the viewer and ``report``.

Built-in statistics register with :func:`register_statistic`, as a third party's do: from
code, or from a package's entry point in the group ``jurybench.statistics`` (a callable that
registers its statistics), loaded the first time the registry is read. This module imports
nothing heavy: the CLI builds its commands from it before any statistic runs.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec

from jurybench.config import Registry
from jurybench.declare import Parameter, check_bounds, on, parameters_of
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    import pandas as pd
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store import StoreRef

ENTRY_POINT_GROUP = "jurybench.statistics"
NAME = re.compile(r"^[a-z][a-z0-9-]{0,40}$")

P = ParamSpec("P")
Table = Callable[[dict[str, Any], bool], tuple[list[str], list[list[object]]]]


def two_values(value: str | tuple[str, str] | list[str], option: str) -> tuple[str, str]:
    """Two values from 'a,b' (or a pair), or one line naming ``option``."""
    parts = [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) else [str(v) for v in value]
    if len(parts) != 2:
        raise JurybenchError(f"{option} needs two comma-separated values, got {value!r}.")
    return parts[0], parts[1]


class Statistic(Generic[P]):
    """One statistic: call it as ``stat(store, run, **parameters)`` to compute, record and frame it.

    ``compute(con, ...)`` reads over a DuckDB connection and returns the result as a dict;
    ``table(result, summary)`` gives its columns and rows (``summary``: lines of text for people
    beside the data); ``plots`` names the plots drawn from its recorded results. ``capped``: it
    reads a big run a slice at a time, so a store given by path is read with DuckDB held to the
    engine's memory cap. ``runs_sql``: it runs user SQL, so the service reads it under its SQL
    limits. ``prepare(store, values)``: run before reading (e.g. create a store a statistic over
    a file records into)."""

    def __init__(
        self,
        name: str,
        compute: Callable[Concatenate[Connection, P], dict[str, object]],
        table: Table,
        *,
        help: str | None = None,
        plots: tuple[str, ...] = (),
        capped: bool = False,
        runs_sql: bool = False,
        prepare: Callable[[StoreRef, dict[str, object]], None] | None = None,
    ) -> None:
        if not NAME.match(name):
            raise JurybenchError(f"statistic name {name!r}: use lower-case letters, digits and '-'.")
        self.name = name
        self.compute = compute
        self.table = table
        doc = help or inspect.getdoc(compute) or ""
        self.help = doc
        self.plots = plots
        self.capped = capped
        self.runs_sql = runs_sql
        self.prepare = prepare
        self.parameters = self._parameters()
        self.__doc__ = doc
        self.__name__ = name.replace("-", "_")
        own = list(inspect.signature(compute).parameters.values())[1:]
        self.__signature__ = inspect.Signature(
            [inspect.Parameter("store", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
            + [q.replace(annotation=p.annotation) for q, p in zip(own, self.parameters, strict=True)]
        )

    def _parameters(self) -> tuple[Parameter, ...]:
        return parameters_of(self.compute, skip=1, owner=f"statistic {self.name}")  # the first is the connection

    def on(self, face: str) -> list[Parameter]:
        """The parameters ``face`` ('cli', 'http' or 'python') offers, in order."""
        return on(self.parameters, face)

    @property
    def per_run(self) -> bool:
        """Whether it reads one run (its first parameter is ``run``)."""
        return bool(self.parameters) and self.parameters[0].name == "run"

    def check(self, values: dict[str, Any], face: str) -> dict[str, Any]:
        """``values`` with choices and pairs checked, named as ``face`` names them; one line on error."""
        out = dict(values)
        for p in self.parameters:
            value = out.get(p.name)
            if value is None:
                if face in p.meaning.required_in:
                    raise JurybenchError(f"{self.name} needs {p.label(face)}.")
                continue
            check_bounds(p, value, face)
            choices = p.meaning.choices
            if choices is not None and value not in choices:
                raise JurybenchError(f"{p.label(face)} {value!r} is not valid.", hint=f"Valid: {', '.join(choices)}.")
            if p.meaning.pair:
                out[p.name] = ",".join(two_values(value, p.label(face)))
        return out

    def recorded(self, values: dict[str, object]) -> tuple[dict[str, object], int | None]:
        """The ``params`` and ``seed`` written to ``stats_results`` for these values."""
        params: dict[str, Any] = {}
        for p in self.parameters:
            if p.name == "seed":
                continue
            value = values.get(p.name, None if p.required else p.default)
            if p.meaning.record is not None:
                value = p.meaning.record(value)
            elif isinstance(value, tuple | list) and p.meaning.pair:
                value = ",".join(str(v) for v in value)
            params[p.name] = value
        seed = values.get("seed")
        return params, seed if isinstance(seed, int) else None

    def __call__(self, store: StoreRef, *args: P.args, **kwargs: P.kwargs) -> pd.DataFrame:
        """Compute on a reading connection (closed before writing), record, and frame the result."""
        bound = inspect.signature(self).bind(store, *args, **kwargs)
        values = {k: v for k, v in bound.arguments.items() if k != "store"}
        values = self.check(values, "python")
        for p in self.parameters:  # pairs stay pairs for the compute function, as given
            if p.meaning.pair and p.name in values and values[p.name] is not None:
                values[p.name] = two_values(values[p.name], p.name)
        return _recorded(self, store, values)

    def rows(
        self, result: dict[str, object], *, digits: int | None = 6, summary: bool = True
    ) -> tuple[list[str], list[list[object]]]:
        """Column names and rows of a result (floats rounded to ``digits``; None keeps them whole)."""
        columns, rows = self.table(result, summary)
        if digits is None:
            return columns, rows
        return columns, [[round(v, digits) if isinstance(v, float) else v for v in row] for row in rows]

    def __repr__(self) -> str:
        return f"<statistic {self.name}>"


def _recorded(stat: Statistic[...], store: StoreRef, values: dict[str, Any]) -> pd.DataFrame:
    """Compute on a reading connection (closed before writing), record, and frame the result.

    A ``capped`` statistic (one that reads a big run a slice at a time) over a store given by
    path is read with DuckDB held to the engine's cap (``JURYBENCH_DUCKDB_MEMORY``) on one
    thread (two threads' buffers did not fit 64MB at 3 M rows), so memory does not grow with the
    run; should DuckDB still run out, it is computed again under DuckDB's own limit: more
    memory, never a failed statistic."""
    import duckdb
    import pandas as pd

    from jurybench.config import duckdb_memory
    from jurybench.stats._store import jsonable, record_result
    from jurybench.store import reading, writing

    if stat.prepare is not None:
        stat.prepare(store, values)
    run = values.get("run") if stat.per_run else None
    by_path = store is None or isinstance(store, str | Path)
    limit = duckdb_memory() if stat.capped and by_path else None

    def described(con: Connection) -> dict[str, object]:
        """The result, with what its figures rest on: the jury's discrete or expected scores, and
        the run's design (both orders or one) and, for a run judged with --until, its stopping
        rule, read on the same connection."""
        import json

        from jurybench.stats._silent import jurors_without_valid_answers

        runs = [r for r in (run, values.get("other_run") if stat.per_run else None) if isinstance(r, str)]
        result = stat.compute(con, **values)
        if runs and isinstance(result, dict):
            silent = [entry for r in runs for entry in jurors_without_valid_answers(con, r)]
            if silent:
                result.setdefault("without_valid_answers", silent)
        if run is not None and isinstance(result, dict):
            found = con.execute(
                "SELECT ju.scores, r.orders, r.stopping FROM runs r LEFT JOIN juries ju ON ju.jury_id = r.jury_id "
                "WHERE r.run_id = ?",
                [run],
            ).fetchall()
            if found:
                result.setdefault("scores", found[0][0] or "discrete")
                result.setdefault("orders", found[0][1] or "both")
                if found[0][2]:
                    stopping = json.loads(found[0][2])
                    result.setdefault(
                        "stopping",
                        {
                            "rule": stopping["rule"],
                            "stopped": stopping["stopped"],
                            "judged": stopping["judged"],
                            "note": "the run stopped on what it saw: fixed-n p-values here do not correct for that; "
                            "'stats sequential' gives the anytime-valid figures",
                        },
                    )
        return result

    try:
        with reading(store, memory_limit=limit, threads=1 if limit else None) as con:
            result = described(con)
    except duckdb.OutOfMemoryException:
        if limit is None:
            raise
        with reading(store) as con:
            result = described(con)
    params, seed = stat.recorded(values)
    with writing(store) as con:
        result_id = record_result(con, stat.name, run, params, seed, result)
    # Tidy: no summary line of text (gini, gaps and premium are in attrs["result"]).
    columns, rows = stat.rows(result, digits=None, summary=False)
    frame = pd.DataFrame(rows, columns=columns)
    frame.attrs.update(
        {"result_id": result_id, "statistic": stat.name, "run": run, "params": params, "result": jsonable(result)}
    )
    return frame


def statistic(
    name: str,
    *,
    table: Table,
    plots: tuple[str, ...] = (),
    capped: bool = False,
    runs_sql: bool = False,
    prepare: Callable[[StoreRef, dict[str, Any]], None] | None = None,
) -> Callable[[Callable[Concatenate[Connection, P], dict[str, object]]], Statistic[P]]:
    """Decorate a compute function ``(con, run, **parameters) -> dict`` to make it a
    :class:`Statistic` (register it with :func:`register_statistic`)."""

    def make(compute: Callable[Concatenate[Connection, P], dict[str, object]]) -> Statistic[P]:
        return Statistic(name, compute, table, plots=plots, capped=capped, runs_sql=runs_sql, prepare=prepare)

    return make


REGISTRY: Registry[Statistic[...]] = Registry(
    ENTRY_POINT_GROUP,
    "statistics",
    "jurybench.stats.builtin:register",
    label="statistic '{}'",
    function="register_statistic",
)
PLUGINS = REGISTRY.plugins


def register_statistic(stat: Statistic[...], *, replace: bool = False) -> None:
    """Offer ``stat`` on every face. Registering a name twice is refused unless ``replace``."""
    REGISTRY.register(stat.name, stat, replace=replace)


def unregister_statistic(name: str) -> None:
    REGISTRY.unregister(name)


def statistics() -> dict[str, Statistic[...]]:
    """Every registered statistic by name, built-ins first."""
    return REGISTRY.items()


def get_statistic(name: str) -> Statistic[...]:
    """The statistic called ``name``, or one line naming the known ones."""
    known = statistics()
    if name not in known:
        raise JurybenchError(f"unknown statistic {name!r}.", hint=f"Known: {', '.join(known)}.")
    return known[name]


def flatten(
    name: str, result: dict[str, Any], *, digits: int | None = 6, summary: bool = True
) -> tuple[list[str], list[list[object]]]:
    """Column names and rows for a recorded result of statistic ``name``."""
    known = statistics()
    if name not in known:
        raise ValueError(name)
    return known[name].rows(result, digits=digits, summary=summary)
