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
    baseline: Annotated[float | None, param("Human baseline value for every group.")] = None,
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
    from jurybench.stats.sql import stored_baselines

    stored = stored_baselines(con, baselines, "mean") if baselines else None
    return stat_ttest(
        con, run, where=where, by=by, baseline=baseline, baseline_file=baseline_file, stored=stored, level=level
    )


def stat_ttest(
    con: Connection,
    run_id: str,
    *,
    where: str | None = None,
    by: str | None = None,
    baseline: float | None = None,
    baseline_file: Path | None = None,
    stored: dict[tuple[str, str], float] | None = None,
    level: str = "jury",
) -> dict[str, object]:
    """One-sample t-test of each group's item scores against a baseline (one value, or per group)."""

    from jurybench.errors import JurybenchError
    from jurybench.stats import _pointwise
    from jurybench.stats._slices import jury_coverage
    from jurybench.stats.sql import group_values, item_scores, read_baselines

    values = group_values(item_scores(con, run_id, where=where, by=by, level=level))
    baselines = read_baselines(baseline_file) if baseline_file else {}
    for (cell, target), value in (stored or {}).items():
        baselines[f"{cell}|{target}" if target else cell] = value
    if baseline is None and not baselines:
        raise JurybenchError("ttest needs --baseline VALUE or --baseline-file FILE (group,value).")
    out: dict[str, Any] = {}
    for crit, groups in sorted(values.items()):
        out[crit] = {}
        for grp, x in sorted(groups.items()):
            b = baselines.get(grp, baselines.get(f"{grp}|{crit}", baseline))
            if b is not None:
                out[crit][grp] = _pointwise.one_sample_t(x, float(b))
    return {"level": level, "jury": jury_coverage(con, run_id, "jury_pointwise"), "criteria": out}
