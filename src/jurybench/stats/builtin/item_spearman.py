"""item-spearman: do the conditions (languages) agree on which items the arms differ on?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic, two_values
from jurybench.stats.params import Connection


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
) -> dict[str, object]:
    """Spearman correlation between conditions of per-item keyed differences between the arms
    (reverse-keyed items from ``key_file``, CSV criterion,key, or ``keys``, criterion -> +1/-1)."""
    # Per condition (--by), each item's keyed difference mean(first arm) - mean(second arm)
    # (times its key, +1 or -1, from criterion,key or given); Spearman between conditions over items.
    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats import _effects
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import item_frame
    from jurybench.store import as_float

    arm_values = two_values(arms, "arms")
    frame = item_frame(con, run, where=where, by=by, extra=arm, level=level)
    keys = {k: float(v) for k, v in (keys or {}).items()}
    if key_file is not None:
        from jurybench.store import read_rows

        for number, row in read_rows(key_file):
            try:
                keys[str(row["criterion"])] = as_float(row["key"])
            except (KeyError, TypeError, ValueError):
                raise JurybenchError(f"{key_file} row {number}: needs criterion and a numeric key (1 or -1).") from None
    means = (
        frame[frame["extra"].isin(arm_values)].groupby(["grp", "criterion", "extra"])["score"].mean().unstack("extra")
    )
    missing = [a for a in arm_values if a not in means.columns]
    if missing:
        raise JurybenchError(
            f"no items in arm {missing[0]!r}.", hint=f"Arms present: {', '.join(sorted(frame['extra'].unique()))}."
        )
    diff = (means[arm_values[0]] - means[arm_values[1]]).unstack("grp")
    if diff.shape[1] < 2:
        raise JurybenchError(f"item-level Spearman needs at least 2 conditions from --by; found {diff.shape[1]}.")
    factor = np.array([keys.get(c, 1.0) for c in diff.index])
    keyed = {str(g): diff[g].to_numpy(dtype=float) * factor for g in diff.columns}
    return {
        "level": level,
        "jury": jury_coverage(con, run, "jury_pointwise"),
        "conditions": list(keyed),
        "items": [str(i) for i in diff.index],
        "keyed_differences": keyed,
        "correlations": _effects.item_level_spearman(keyed),
    }
