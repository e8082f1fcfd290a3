"""Every statistic's result recorded with its parameters and seed (``stats_results``), as JSON."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, overload

import numpy as np

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def record_result(
    con: Connection, name: str, run_id: str | None, params: dict[str, Any], seed: int | None, result: dict[str, object]
) -> str:
    result_id = uuid.uuid4().hex
    con.execute(
        "INSERT INTO stats_results (result_id, name, run_id, params, seed, result) VALUES (?, ?, ?, ?, ?, ?)",
        [result_id, name, run_id, json.dumps(params, default=str), seed, json.dumps(jsonable(result))],
    )
    return result_id


@overload
def jsonable(value: Mapping[str, object]) -> dict[str, object]: ...
@overload
def jsonable(value: object) -> object: ...
def jsonable(value: object) -> object:
    """``value`` as JSON takes it: numpy arrays and numbers as Python's, NaN and infinities as None."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, float | np.floating):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value
