"""ttest: each group's mean score against a human baseline (one-sample t-test)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from jurybench.declare import param
from jurybench.stats import params
from jurybench.stats._registry import statistic
from jurybench.stats.builtin._groups import by_criterion_and_group
from jurybench.stats.params import Connection


@statistic("ttest", table=by_criterion_and_group)
def ttest(
    con: Connection,
    run: params.Run,
    *,
    where: params.Where = None,
    by: params.Groups = "model",
    baseline: Annotated[float | None, param("Human baseline value for every group.", number="value")] = None,
    baseline_file: Annotated[
        Path | None, param("CSV group,value[,criterion] of per-group baselines.", faces="cli python")
    ] = None,
    baselines: Annotated[
        str | None,
        param("Stored human mean baselines (cell = group, target = criterion or '').", http={"max_length": 128}),
    ] = None,
    level: params.Level = "jury",
) -> dict[str, object]:
    """One-sample t-test of each group's mean score against a human baseline."""
    from jurybench.errors import JurybenchError
    from jurybench.stats import _pointwise
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import group_values, item_scores, read_baselines, stored_baselines

    stored = stored_baselines(con, baselines, "mean") if baselines else {}
    values = group_values(item_scores(con, run, where=where, by=by, level=level))
    # one value for every group, or per group (and criterion) from a file and the store
    against = read_baselines(baseline_file) if baseline_file else {}
    for (cell, target), value in stored.items():
        against[f"{cell}|{target}" if target else cell] = value
    if baseline is None and not against:
        raise JurybenchError("ttest needs --baseline VALUE or --baseline-file FILE (group,value).")
    out: dict[str, Any] = {}
    for crit, groups in sorted(values.items()):
        out[crit] = {}
        for grp, x in sorted(groups.items()):
            b = against.get(grp, against.get(f"{grp}|{crit}", baseline))
            if b is not None:
                out[crit][grp] = _pointwise.one_sample_t(x, float(b))
    return {"level": level, "jury": jury_coverage(con, run, "jury_pointwise"), "criteria": out}
