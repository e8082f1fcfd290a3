"""disparity: classification accuracy by group and category, and how unequal it is (Gini)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.store import StoreRef


def _num(value: object, spec: str = ".4f") -> str:
    return "n/a" if value is None else format(value, spec)


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    rows: list[list[object]] = []
    if "models" in result:
        cols = [
            "model",
            "groups",
            "excluded",
            "gini",
            "gini_low",
            "gini_high",
            "mean_gap",
            "max_gap",
            "reference_premium",
        ]
        for model, r in result["models"].items():
            rows.append(
                [
                    model,
                    " ".join(r["groups"]),
                    " ".join(r["excluded_for_invalid_rate"]),
                    r["gini"],
                    *r["gini_ci"],
                    r["mean_gap"],
                    r["max_gap"],
                    r.get("reference_premium"),
                ]
            )
        return cols, rows
    categories = sorted(result["max_min_gap"])
    cols = ["group", "accuracy", "invalid_rate", *(f"acc_{c}" for c in categories)]
    for g, t in result["accuracy"].items():
        rows.append(
            [
                g + (" (excluded)" if g in result["excluded_for_invalid_rate"] else ""),
                t["*"]["accuracy"],
                t["*"]["invalid_rate"],
                *(t[c]["accuracy"] for c in categories),
            ]
        )
    rows.append(["max-min gap", None, None, *(result["max_min_gap"][c] for c in categories)])
    if summary:  # a line of text for people, not data
        premium = (
            f"; {result['reference']} premium {_num(result['reference_premium'], '+.4f')}"
            if "reference" in result
            else ""
        )
        rows.append(
            [
                f"gini {_num(result['gini'])} [{_num(result['gini_ci'][0])}, {_num(result['gini_ci'][1])}]; "
                f"mean gap {_num(result['mean_gap'])}; max gap {_num(result['max_gap'])}" + premium,
                None,
                None,
                *([None] * len(categories)),
            ]
        )
    return cols, rows


def _store_exists(store: StoreRef, values: dict[str, Any]) -> None:
    """A statistic over a file records into the store, created if need be."""
    from jurybench.store import connect

    if values.get("file") is not None and (store is None or isinstance(store, str | Path)):
        connect(store).close()


def _kept(rate: float | None) -> float | None:
    return None if rate is None or rate < 0 else rate


@statistic("disparity", table=table, plots=("disparity",), runs_sql=True, prepare=_store_exists)
def disparity(
    con: Connection,
    *,
    sql: Annotated[
        str | None,
        param(
            "Query returning grp, category, correct, invalid.",
            required_in="http",
            http={"min_length": 1, "max_length": 20_000},
        ),
    ] = None,
    file: Annotated[
        Path | None, param("CSV/JSONL/Parquet with grp, category, correct, invalid.", faces="cli python")
    ] = None,
    max_invalid_rate: Annotated[
        float | None,
        param(
            "Leave out groups above this invalid rate (negative: keep all).",
            cli_type=float,
            http={"ge": 0, "le": 1},
            record=lambda v: -1.0 if _kept(v) is None else v,
        ),
    ] = 0.10,
    reference: Annotated[
        str | None, param("Reference group for the premium (e.g. en).", http={"max_length": 256})
    ] = None,
    boot: params.Boot = 2000,
    seed: params.Seed = 0,
    resample: Annotated[
        str,
        param(
            "Bootstrap unit for the Gini CI: instances (rows within each group), groups, or clusters:<column> "
            "(e.g. the source item).",
            http={"pattern": r"^(instances|groups|clusters:\w+)$"},
        ),
    ] = "instances",
) -> dict[str, Any]:
    """Accuracy by group x category (invalid = wrong), Gini inequity with CI, max-min gaps, reference premium.
    ``max_invalid_rate=None`` (or a negative value) keeps every group."""
    from jurybench.stats._store_effects import stat_disparity

    return stat_disparity(
        con,
        sql=sql,
        file=file,
        max_invalid_rate=_kept(max_invalid_rate),
        reference=reference,
        n_boot=boot,
        seed=seed,
        resample=resample,
    )
