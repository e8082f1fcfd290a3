"""Assemble calibration data from a run: juror scores, human targets, groups, covariates."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from jurybench.annotations import PointwiseData, pointwise_data
from jurybench.errors import JurybenchError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

Array = NDArray[np.float64]
Index = NDArray[np.int_]  # positions of rows (a training or test split, a fold)
COVARIATES = ("language", "length")


@dataclass
class CalibrationData:
    criterion: str
    items: list[str]
    jurors: list[str]
    juror_keys: list[str]
    scores: Array  # items x jurors, NaN where a juror has no valid score
    target: Array  # mean human label per item
    groups: list[str]
    covariates: dict[str, Array] = field(default_factory=dict)
    jury: Array | None = None  # the run's jury score (its rule), a baseline
    rule: str = "mean"

    def digest(self) -> str:
        payload = json.dumps(
            [
                self.criterion,
                self.items,
                self.juror_keys,
                np.round(np.nan_to_num(self.scores, nan=-999), 6).tolist(),
                np.round(self.target, 6).tolist(),
                self.groups,
            ],
        )
        return hashlib.sha256(payload.encode()).hexdigest()


def item_attributes(con: Connection, items: list[str]) -> dict[str, dict[str, object]]:
    import pyarrow as pa

    from jurybench.store import registered

    with registered(con, "wanted_items", pa.table({"item_id": items})):
        rows = con.execute(
            "SELECT i.item_id, i.prompt, i.language, length(i.response), i.metadata FROM items i "
            "JOIN wanted_items USING (item_id)"
        ).fetchall()
    return {
        r[0]: {"prompt": r[1], "language": r[2], "length": r[3], "metadata": json.loads(r[4]) if r[4] else {}}
        for r in rows
    }


def group_of(attrs: dict[str, Any], group_by: str, item: str) -> str:
    if group_by == "prompt":
        return str(attrs.get("prompt") or item)
    if group_by == "item":
        return item
    if group_by.startswith("meta."):
        value = attrs["metadata"].get(group_by[5:])
        if value is None:
            raise JurybenchError(
                f"item {item!r} has no metadata field {group_by[5:]!r} to group by.",
                hint="Use --group-by prompt, item or meta.<field present on every item>.",
            )
        return str(value)
    raise JurybenchError(f"--group-by {group_by!r} is not valid.", hint="Use prompt, item or meta.<field>.")


def covariate_columns(
    attrs: dict[str, dict[str, Any]],
    items: list[str],
    covariates: list[str],
    levels: dict[str, list[str]] | None = None,
) -> tuple[dict[str, Array], dict[str, list[str]]]:
    """Numeric covariate columns: language as indicators (first level is the baseline), length in 1,000 chars."""
    columns: dict[str, Array] = {}
    levels = dict(levels or {})
    for name in covariates:
        if name == "language":
            langs = levels.get("language") or sorted({str(attrs[i]["language"]) for i in items})
            levels["language"] = langs
            for lang in langs[1:]:
                columns[f"language={lang}"] = np.array([float(str(attrs[i]["language"]) == lang) for i in items])
        elif name == "length":
            columns["length_kchars"] = np.array([float(attrs[i]["length"] or 0) / 1000 for i in items])
        elif name.startswith("meta."):
            key = name[5:]
            try:
                columns[name] = np.array([float(attrs[i]["metadata"][key]) for i in items])
            except (KeyError, TypeError, ValueError):
                raise JurybenchError(
                    f"covariate {name!r}: every item needs a numeric metadata field {key!r}."
                ) from None
        else:
            raise JurybenchError(
                f"covariate {name!r} is not known.", hint="Use language, length or meta.<numeric field>."
            )
    return columns, levels


def calibration_data(
    con: Connection, run_id: str, *, criteria: list[str] | None, group_by: str, covariates: list[str]
) -> tuple[list[CalibrationData], dict[str, list[str]]]:
    blocks: list[PointwiseData] = pointwise_data(con, run_id, criteria)
    out = []
    levels: dict[str, list[str]] = {}
    for block in blocks:
        attrs = item_attributes(con, block.items)
        cov, levels = covariate_columns(attrs, block.items, covariates, levels)
        groups = [group_of(attrs[i], group_by, i) for i in block.items]
        out.append(
            CalibrationData(
                block.criterion,
                block.items,
                block.jurors,
                block.juror_keys,
                block.juror_scores,
                block.human_mean,
                groups,
                cov,
                block.jury,
                str(block.rule["aggregation"]),
            )
        )
    return out, levels
