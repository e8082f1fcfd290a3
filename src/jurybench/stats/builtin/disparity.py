"""disparity: classification accuracy by group and category, and how unequal it is (Gini)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats._silent import silent_label
from jurybench.stats.params import Connection

if TYPE_CHECKING:
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
                    silent_label(model, bool(r.get("no_valid_answers"))),
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


def _store_exists(store: StoreRef, values: dict[str, object]) -> None:
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
            "Leave out groups above this invalid rate (-1, or any negative: keep all).",
            cli_type=float,
            number="value",
            http={"le": 1},
            special=(-1.0,),
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
) -> dict[str, object]:
    """Accuracy by group x category (invalid = wrong), Gini inequity with CI, max-min gaps, reference premium.
    ``max_invalid_rate=None`` (or a negative value) keeps every group."""
    # Classification disparity from a query or file with columns grp, category, correct, invalid
    # (and optionally model: then one result per model).
    from collections import defaultdict

    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats import _disparity
    from jurybench.store import check_query, execute_user_sql, read_only_transaction

    if (sql is None) == (file is None):
        raise JurybenchError(
            "disparity needs exactly one of --sql QUERY or --file FILE (columns grp, category, correct, invalid)."
        )
    if sql is not None:
        check_query(con, sql, what="--sql")
        with read_only_transaction(con):
            cursor = execute_user_sql(con, sql, what="--sql")
            names = [d[0] for d in cursor.description]
            records = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    else:
        from jurybench.store import read_rows

        assert file is not None
        records = [r for _, r in read_rows(file)]
    # a defined order, whatever order the query or the file gives: resamples draw rows by position
    records.sort(key=lambda r: tuple(str(r[k]) for k in sorted(r)))
    required = {"grp", "category", "correct", "invalid"}
    if not records or not required <= set(records[0]):
        raise JurybenchError(f"disparity input needs columns {', '.join(sorted(required))}.")

    def truthy(v: object) -> bool:
        return str(v).strip().lower() in ("1", "true", "t", "yes")

    column = resample.partition(":")[2] if resample.startswith("clusters:") else None
    if column is not None and column not in records[0]:
        raise JurybenchError(
            f"--resample {resample}: the input has no column {column!r}.", hint=f"Columns: {', '.join(records[0])}."
        )

    def one(rows: list[dict[str, object]]) -> dict[str, object]:
        return _disparity.disparity(
            [str(r["grp"]) for r in rows],
            [str(r["category"]) for r in rows],
            np.array([truthy(r["correct"]) for r in rows]),
            np.array([truthy(r["invalid"]) for r in rows]),
            max_invalid_rate=_kept(max_invalid_rate),
            reference=reference,
            n_boot=boot,
            seed=seed,
            resample=resample,
            clusters=[str(r[column]) for r in rows] if column else None,
        )

    if "model" not in records[0]:
        return one(records)
    by_model: dict[str, list[dict[str, object]]] = defaultdict(list)
    for r in records:
        by_model[str(r["model"])].append(r)
    return {"models": {m: one(rows) for m, rows in sorted(by_model.items())}}
