"""item-spearman: do the conditions (languages) agree on which items the arms differ on?"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic, two_values

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    cols = ["first", "second", "n_items", "spearman", "p"]
    return cols, [[r[c] for c in cols] for r in result["correlations"]]


@statistic("item-spearman", table=table)
def item_spearman(
    con: Connection,
    run: params.Run,
    *,
    arm: params.Arm,
    arms: params.Arms,
    by: Annotated[str, param("The conditions compared, e.g. language.", http=params.EXPR)],
    key_file: Annotated[
        Path | None, param("CSV criterion,key (+1/-1) for reverse-keyed items.", faces="cli python")
    ] = None,
    keys: Annotated[
        dict[str, float] | None,
        param(
            "criterion -> +1/-1 (the CLI's --key-file).",
            faces="http python",
            http={"max_length": 1000},
            http_type=dict[str, Literal[1, -1]] | None,
        ),
    ] = None,
    where: params.Where = None,
    level: params.Level = "jury",
) -> dict[str, Any]:
    """Spearman correlation between conditions of per-item keyed differences between the arms
    (reverse-keyed items from ``key_file``, CSV criterion,key, or ``keys``, criterion -> +1/-1)."""
    from jurybench.stats._store_effects import stat_item_spearman

    keyed = {k: float(v) for k, v in keys.items()} if keys is not None else None
    return stat_item_spearman(
        con, run, arm=arm, arms=two_values(arms, "arms"), by=by, where=where, key_file=key_file, keys=keyed, level=level
    )
