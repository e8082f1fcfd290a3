"""kendall: do the groups' mean scores rank them as a reference ranking does?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.builtin._groups import by_criterion
from jurybench.stats.params import Connection


@statistic("kendall", table=by_criterion)
def kendall(
    con: Connection,
    run: params.Run,
    *,
    baseline_file: Annotated[
        Path | None, param("CSV group,value: the reference ranking.", faces="cli python", required_in="cli")
    ] = None,
    reference: Annotated[
        dict[str, float] | None,
        param(
            "The reference ranking inline: group -> value (the CLI's --baseline-file).",
            faces="http python",
            required_in="http",
            http={"min_length": 3, "max_length": 1000},
        ),
    ] = None,
    where: params.Where = None,
    by: params.Groups = "model",
    level: params.Level = "jury",
) -> dict[str, object]:
    """Kendall tau between the groups' mean scores and a reference ranking: a CSV group,value
    (``baseline_file``) or the values themselves (``reference``, group -> value)."""
    import numpy as np

    from jurybench.errors import JurybenchError
    from jurybench.stats import _pointwise
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import group_values, item_scores, read_baselines

    baseline_file = Path(baseline_file) if baseline_file is not None else None  # Python may give a str
    if (baseline_file is None) == (reference is None):
        raise JurybenchError("kendall needs a reference ranking: a baseline file or group values, one of them.")
    values = group_values(item_scores(con, run, where=where, by=by, level=level))
    reference = read_baselines(baseline_file) if baseline_file is not None else dict(reference or {})
    source = str(baseline_file) if baseline_file is not None else "the reference"
    out = {}
    for crit, by_group in sorted(values.items()):
        common = sorted(set(by_group) & set(reference))
        if len(common) < 3:
            raise JurybenchError(f"Kendall tau needs at least 3 groups present in {source}; found {len(common)}.")
        out[crit] = {
            **_pointwise.kendall_rankings(
                np.array([by_group[g].mean() for g in common]), np.array([reference[g] for g in common])
            ),
            "groups": common,
        }
    return {"level": level, "jury": jury_coverage(con, run, "jury_pointwise"), "criteria": out}
