"""Statistics over HTTP: the CLI's parameters as request bodies, the same library functions.

Options that name files on the CLI take the values inline here (a server reads no client
paths): ``reference`` for kendall (group -> value), ``factors`` for cohens-d (criterion ->
factor), ``keys`` for item-spearman (criterion -> +1/-1); human baselines by the name they
were imported under (``baselines``) for cohens-d and ttest. Every result is recorded in ``stats_results``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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
    resample: Annotated[str, Field(min_length=1, max_length=500, description="pairs, or clusters:<expression>")] = (
        "pairs"
    )


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
    resample: Annotated[str, Field(min_length=1, max_length=500, description="instances, or clusters:<expression>")] = (
        "instances"
    )


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
    resample: Annotated[str, Field(pattern=r"^(instances|groups|clusters:\w+)$")] = "instances"


class Leaderboard(_P):
    run: RunId
    category: Annotated[str, Field(max_length=256)] | None = None
    anchor: Annotated[str, Field(max_length=256)] | None = None
    baseline: Annotated[str, Field(max_length=256)] | None = None
    level: Level = "jury"
    boot: Boot = 1000
    seed: int = 0
    resample: Annotated[str, Field(min_length=1, max_length=500,
                                   description="prompts, pairs, battles or clusters:<expression>")] = "prompts"  # fmt: skip
    strong: (
        Annotated[str, Field(max_length=50, description="T:W: a verdict with |score| >= T counts as W battles")] | None
    ) = None
    control: Annotated[str, Field(max_length=50, description="style control: length, markdown")] | None = None
    weighted: bool = Field(default=False, description="battle outcomes are probabilities, not signs")


class Power(_P):
    run: RunId
    arm: Expr
    arms: Annotated[str, Field(max_length=600, description="first,second")]
    pair_on: Expr = "prompt"
    where: Expr | None = None
    d: float | None = None
    shift: float | None = None
    power: Annotated[float, Field(gt=0, lt=1)] = 0.8
    alpha: Annotated[float, Field(gt=0, lt=1)] = 0.05


class Winrate(_P):
    run: RunId
    reference: Annotated[str, Field(min_length=1, max_length=256, description="the reference model")]
    category: Annotated[str, Field(max_length=256)] | None = None
    level: Level = "jury"
    length_controlled: bool = False


def _run(store: Any, name: str, p: Any) -> Any:
    """The library's statistic for a request (it records the result and returns it framed)."""
    from jurybench import stats

    if name == "directional":
        return stats.directional(store, p.run, where=p.where, by=p.by, zero_method=p.zero_method, level=p.level)
    if name == "gap":
        return stats.gap(store, p.run, where=p.where, by=p.by, boot=p.boot, seed=p.seed, level=p.level,
                         resample=p.resample)  # fmt: skip
    if name == "consistency":
        return stats.consistency(store, p.run, where=p.where, by=p.by)
    if name == "robustness":
        return stats.robustness(store, p.run, other_run=p.other_run, where=p.where)
    if name == "friedman":
        return stats.friedman(store, p.run, where=p.where, by=p.by, block=p.block, level=p.level)
    if name == "ttest":
        return stats.ttest(store, p.run, where=p.where, by=p.by, baseline=p.baseline, baselines=p.baselines,
                           level=p.level)  # fmt: skip
    if name in ("welch", "mannwhitney"):
        test = stats.welch if name == "welch" else stats.mannwhitney
        return test(store, p.run, groups=p.groups, where=p.where, by=p.by, level=p.level)
    if name == "kendall":
        return stats.kendall(store, p.run, reference=p.reference, where=p.where, by=p.by, level=p.level)
    if name == "cohens-d":
        return stats.cohens_d(
            store, p.run, arm=p.arm, arms=p.arms, where=p.where, by=p.by, baselines=p.baselines, factors=p.factors,
            min_gap=p.min_gap, reorganization_gap=p.reorganization_gap, boot=p.boot, seed=p.seed, level=p.level,
            resample=p.resample,
        )  # fmt: skip
    if name == "item-spearman":
        return stats.item_spearman(store, p.run, arm=p.arm, arms=p.arms, by=p.by, where=p.where,
                                   keys={k: float(v) for k, v in (p.keys or {}).items()}, level=p.level)  # fmt: skip
    if name == "leaderboard":
        return stats.leaderboard(store, p.run, category=p.category, anchor=p.anchor, baseline=p.baseline,
                                 level=p.level, boot=p.boot, seed=p.seed, resample=p.resample,
                                 strong=p.strong, control=p.control, weighted=p.weighted)  # fmt: skip
    if name == "winrate":
        return stats.winrate(store, p.run, reference=p.reference, category=p.category, level=p.level,
                             length_controlled=p.length_controlled)  # fmt: skip
    if name == "power":
        return stats.power(store, p.run, arm=p.arm, arms=p.arms, pair_on=p.pair_on, where=p.where, d=p.d,
                           shift=p.shift, power=p.power, alpha=p.alpha)  # fmt: skip
    assert name == "disparity"
    return stats.disparity(store, sql=p.sql, max_invalid_rate=p.max_invalid_rate, reference=p.reference,
                           boot=p.boot, seed=p.seed, resample=p.resample)  # fmt: skip


STATS: dict[str, type[_P]] = {
    "directional": Directional, "gap": Gap, "consistency": Consistency, "robustness": Robustness,
    "friedman": Friedman, "ttest": Ttest, "welch": Compare, "mannwhitney": Compare, "kendall": Kendall,
    "cohens-d": CohensD, "item-spearman": ItemSpearman, "disparity": Disparity, "leaderboard": Leaderboard,
    "power": Power, "winrate": Winrate,
}  # fmt: skip


class _Limited:
    """The server's store, reading under the server's limits (disparity runs user SQL)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    @contextmanager
    def reading(self) -> Iterator[Any]:
        with self.store.reading() as cur, self.store.limited(cur, timeout_s=self.store.sql_timeout_s, what="sql"):
            yield cur

    def writing(self) -> Any:
        return self.store.writing()


def run_statistic(store: Any, name: str, params: _P) -> dict[str, Any]:
    """Compute on a read-only (rolled back) cursor, then record the result; returns id and result."""
    frame = _run(_Limited(store) if name == "disparity" else store, name, params)
    attrs = frame.attrs
    return {"result_id": attrs["result_id"], "name": name, "params": params.model_dump(), "result": attrs["result"]}


Runner = Callable[[Any, str, _P], dict[str, Any]]
