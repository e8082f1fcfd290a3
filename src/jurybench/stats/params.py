"""The parameters most statistics share, annotated once for every face (CLI, HTTP, Python).

A statistic's compute function uses them as types: ``run: params.Run``, ``where: params.Where =
None``. Their help, choices and HTTP bounds come with them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeAlias

from jurybench.declare import NAME_HTTP, param

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

#: The store's connection a statistic's compute function is given (read-only): ``con: params.Connection``.
#: Named as a string, so reading a statistic's declaration does not import duckdb.
Connection: TypeAlias = "DuckDBPyConnection"

EXPR = {"max_length": 2000}
LEVELS = ("jury", "juror")

Run = Annotated[str, param("Run id.", http=NAME_HTTP)]
OtherRun = Annotated[str, param("The run to compare with.", http=NAME_HTTP)]
Where = Annotated[str | None, param("SQL predicate over the statistic's columns (docs/statistics.md).", http=EXPR)]
By = Annotated[
    str | None, param("SQL expression to group by, e.g. model_a, language, treatment_a->>'gender'.", http=EXPR)
]
Groups = Annotated[str, param("Groups (SQL expression).", http=EXPR)]
Level = Annotated[
    str,
    param(
        "jury: the run's jury score (its rule; subjects below quorum left out); juror: each juror alone.",
        choices=LEVELS,
    ),
]
Boot = Annotated[int, param("Bootstrap resamples.", number="count", at_least=10, http_only={"le": 10_000})]
Seed = Annotated[int, param("Random seed.", number="seed")]
Arm = Annotated[str, param("SQL expression naming the arm of an item, e.g. treatment->>'gender'.", http=EXPR)]
Arms = Annotated[
    str | tuple[str, str],
    param(
        "The two arms compared: first,second (d = first - second).",
        pair=True,
        cli_type=str,
        http_type=str,
        http={"max_length": 600},
    ),
]
Name = Annotated[str | None, param("A name (a model, group or category).", http={"max_length": 256})]
File = Annotated[Path | None, param("A file.", faces="cli python")]

__all__ = ["LEVELS", "Arm", "Arms", "Boot", "By", "File", "Groups", "Level", "Name", "OtherRun", "Run", "Seed", "Where"]
