"""Statistics over HTTP: the CLI's parameters as request bodies, the same library functions.

Options that name files on the CLI take the values inline here (a server reads no client
paths): ``reference`` for kendall (group -> value), ``factors`` for cohens-d (criterion ->
factor), ``keys`` for item-spearman (criterion -> +1/-1); human baselines by the name they
were imported under (``baselines``) for cohens-d and ttest. Every result is recorded in ``stats_results``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from jurybench.errors import JurybenchError

Expr = Annotated[str, Field(max_length=2000)]
RunId = Annotated[str, Field(min_length=1, max_length=256)]
Level = Literal["jury", "juror"]
Boot = Annotated[int, Field(ge=10, le=10_000)]


class _P(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Directional(_P):
    run: RunId
    where: Expr | None = None
    by: Expr | None = None
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox"
    level: Level = "jury"


class Gap(_P):
    run: RunId
    where: Expr | None = None
    by: Expr | None = None
    boot: Boot = 2000
    seed: int = 0
    level: Level = "jury"


class Consistency(_P):
    run: RunId
    where: Expr | None = None
    by: Expr | None = None


class Robustness(_P):
    run: RunId
    other_run: RunId
    where: Expr | None = None


class Friedman(_P):
    run: RunId
    where: Expr | None = None
    by: Expr | None = None
    block: Expr = "prompt"
    level: Level = "jury"


class Ttest(_P):
    run: RunId
    where: Expr | None = None
    by: Expr = "model"
    baseline: float | None = None
    baselines: Annotated[str, Field(max_length=128)] | None = None
    level: Level = "jury"


class Compare(_P):
    run: RunId
    groups: Annotated[str, Field(max_length=512, description="first,second")]
    where: Expr | None = None
    by: Expr = "model"
    level: Level = "jury"


class Kendall(_P):
    run: RunId
    reference: dict[Annotated[str, Field(max_length=256)], float] = Field(min_length=3, max_length=1000)
    where: Expr | None = None
    by: Expr | None = None
    level: Level = "jury"


class CohensD(_P):
    run: RunId
    arm: Expr
    arms: Annotated[str, Field(max_length=512, description="first,second")]
    where: Expr | None = None
    by: Expr | None = None
    baselines: Annotated[str, Field(max_length=128)] | None = None
    factors: dict[Annotated[str, Field(max_length=128)], Annotated[str, Field(max_length=128)]] | None = Field(
        default=None, max_length=1000, description="criterion -> factor (the CLI's --factor-file)"
    )
    min_gap: Annotated[float, Field(ge=0)] = 0.0
    reorganization_gap: Annotated[float, Field(ge=0)] = 0.2
    boot: Boot = 2000
    seed: int = 0
    level: Level = "jury"


class ItemSpearman(_P):
    run: RunId
    arm: Expr
    arms: Annotated[str, Field(max_length=512)]
    by: Expr
    where: Expr | None = None
    keys: dict[Annotated[str, Field(max_length=128)], Literal[1, -1]] | None = Field(
        default=None, max_length=1000, description="criterion -> +1/-1 (the CLI's --key-file)"
    )
    level: Level = "jury"


class Disparity(_P):
    sql: Annotated[str, Field(min_length=1, max_length=20_000)]
    max_invalid_rate: Annotated[float, Field(ge=0, le=1)] | None = 0.10
    reference: Annotated[str, Field(max_length=256)] | None = None
    boot: Boot = 2000
    seed: int = 0


def _two(text: str, field: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) != 2:
        raise JurybenchError(f"{field} needs two comma-separated values, got {text!r}.")
    return parts[0], parts[1]


def _run(con: Any, name: str, p: Any) -> dict[str, Any]:
    from jurybench.stats import AnchorThresholds
    from jurybench.stats import _store as s

    if name == "directional":
        return s.stat_directional(con, p.run, where=p.where, by=p.by, zero_method=p.zero_method, level=p.level)
    if name == "gap":
        return s.stat_gap(con, p.run, where=p.where, by=p.by, n_boot=p.boot, seed=p.seed, level=p.level)
    if name == "consistency":
        return s.stat_consistency(con, p.run, where=p.where, by=p.by)
    if name == "robustness":
        return s.stat_robustness(con, p.run, other_run=p.other_run, where=p.where)
    if name == "friedman":
        return s.stat_friedman(con, p.run, where=p.where, by=p.by, block=p.block, level=p.level)
    if name == "ttest":
        stored = s.stored_baselines(con, p.baselines, "mean") if p.baselines else None
        return s.stat_ttest(con, p.run, where=p.where, by=p.by, baseline=p.baseline, stored=stored, level=p.level)
    if name in ("welch", "mannwhitney"):
        return s.stat_compare(con, p.run, test=name, groups=_two(p.groups, "groups"), where=p.where, by=p.by,
                              level=p.level)  # fmt: skip
    if name == "kendall":
        return s.stat_kendall(con, p.run, reference=p.reference, where=p.where, by=p.by, level=p.level)
    if name == "cohens-d":
        stored = s.stored_baselines(con, p.baselines, "d") if p.baselines else None
        return s.stat_cohens_d(
            con, p.run, arm=p.arm, arms=_two(p.arms, "arms"), where=p.where, by=p.by, baselines=stored, factors=p.factors,
            n_boot=p.boot, seed=p.seed, thresholds=AnchorThresholds(p.min_gap, p.reorganization_gap), level=p.level,
        )  # fmt: skip
    if name == "item-spearman":
        return s.stat_item_spearman(con, p.run, arm=p.arm, arms=_two(p.arms, "arms"), by=p.by, where=p.where,
                                    keys={k: float(v) for k, v in (p.keys or {}).items()}, level=p.level)  # fmt: skip
    assert name == "disparity"
    return s.stat_disparity(con, sql=p.sql, max_invalid_rate=p.max_invalid_rate, reference=p.reference,
                            n_boot=p.boot, seed=p.seed)  # fmt: skip


STATS: dict[str, type[_P]] = {
    "directional": Directional, "gap": Gap, "consistency": Consistency, "robustness": Robustness,
    "friedman": Friedman, "ttest": Ttest, "welch": Compare, "mannwhitney": Compare, "kendall": Kendall,
    "cohens-d": CohensD, "item-spearman": ItemSpearman, "disparity": Disparity,
}  # fmt: skip


def run_statistic(store: Any, name: str, params: _P) -> dict[str, Any]:
    """Compute on a read-only (rolled back) cursor, then record the result; returns id and result."""
    from jurybench.stats._store import _jsonable, record_result

    with store.reading() as cur:
        # disparity runs user SQL: the server's time and memory limits apply
        limits = store.limited(cur, timeout_s=store.sql_timeout_s, what="sql") if name == "disparity" else nullcontext()
        with limits:
            result = _run(cur, name, params)
    dumped = params.model_dump()
    with store.writing() as cur:
        result_id = record_result(cur, name, dumped.get("run"), dumped, dumped.get("seed"), result)
    return {"result_id": result_id, "name": name, "params": dumped, "result": _jsonable(result)}


Runner = Callable[[Any, str, _P], dict[str, Any]]
