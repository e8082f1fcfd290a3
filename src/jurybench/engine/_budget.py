"""Cost as a run spends it: the tally, the plan's prices and the --max-cost budget."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jurybench.jurors import (
    JurorSpec,
    Price,
    batch_price,
    count_tokens,
    is_local,
    is_offline,
    output_limit,
    price_of,
    usd,
)

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection

    from jurybench.rubric import AnyRubric


def expected_output_tokens(con: Connection, spec: JurorSpec, rubric: AnyRubric) -> tuple[float, str]:
    """Output tokens a call of this juror is expected to use, and where the figure comes from:
    the mean of its earlier answers in the store, else 12 tokens per criterion or category
    (a JSON key and its score), plus 120 when the rubric asks for a rationale, plus 10; for a
    generation, its ``max_tokens`` (400 when none is set)."""
    from jurybench.store import first_row

    row = first_row(
        con,
        "SELECT avg(completion_tokens), count(completion_tokens) FROM calls WHERE juror_key = ? AND status <> 'error'",
        [spec.key],
    )
    if row and row[1]:
        return float(row[0]), f"mean of {row[1]} earlier answers"
    if getattr(rubric, "kind", None) == "generation":  # a response, as long as it may be
        limit = spec.params.get("max_tokens") or getattr(rubric, "max_tokens", None)
        if limit:
            return float(limit), "its max_tokens"
        return 400.0, "no max_tokens: 400 assumed"
    dims = len(getattr(rubric, "dimensions", []) or [])
    rationale = 120 if getattr(rubric, "rationale", False) else 0
    return float(12 * max(dims, 1) + rationale + 10), "from the rubric's answer format"


def checked_max_cost(value: object) -> float:
    """A budget in dollars: a finite number >= 0, or one line saying what was given."""
    import math

    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        from jurybench.errors import JurybenchError

        raise JurybenchError(f"max_cost must be a number of dollars >= 0 (got {value!r}).")
    return float(value)


@dataclass
class CostTally:
    """What a run paid, the same for the CLI, the progress bar, the service and the store: the
    sum of the calls whose cost is known (offline jurors cost 0), and how many answered calls
    have no known price. The total is unknown (None) only when no answered call had a price;
    otherwise it is the known part and says how many calls it leaves out."""

    known: float = 0.0
    n_priced: int = 0
    n_unpriced: int = 0
    by_juror: dict[str, float] = field(default_factory=dict)

    def add(self, juror: str, cost: float | None, status: str) -> None:
        if cost is None:
            if status != "error":  # a failed request without an answer cost nothing
                self.n_unpriced += 1
            return
        self.known += cost
        self.n_priced += 1
        self.by_juror[juror] = self.by_juror.get(juror, 0.0) + cost

    @property
    def usd(self) -> float | None:
        if self.n_priced == 0 and self.n_unpriced:
            return None
        return self.known

    def text(self) -> str:
        if self.usd is None:
            return "cost unknown"
        extra = f" (+ {self.n_unpriced} calls of unknown price)" if self.n_unpriced else ""
        return f"{usd(self.known)}{extra}"

    def as_dict(self) -> dict[str, Any]:
        return {"cost_usd": self.usd, "n_cost_unknown": self.n_unpriced,
                "cost_by_juror": {k: round(v, 10) for k, v in self.by_juror.items()}}  # fmt: skip


@dataclass
class JurorPlan:
    juror: str
    model: str
    calls: int  # to make, after the cache
    cached: int
    input_tokens: int
    output_tokens: float
    output_basis: str
    cost_usd: float | None  # synchronously; None: price unknown
    cost_batch_usd: float | None  # through a batch API; None: unknown
    local: bool = False  # served from this machine (api_base on loopback): priced at 0
    # Prompt caching: the tokens every call of the juror starts with (byte-identical), and what the
    # provider's cached rate saves on them after the first call (None: no cached rate is known).
    shared_prefix_tokens: int = 0
    cache_saving_usd: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def plan_costs(con: Connection, rubric: AnyRubric, chunks: Iterable[tuple[Sequence[Any], set[str]]]) -> list[JurorPlan]:
    """Per juror (in jury order): calls, tokens and cost of the tasks not already answered, over
    the run's chunks of (tasks, keys already answered)."""
    plans: dict[str, JurorPlan] = {}
    prices: dict[str, Price | None] = {}
    per_call: dict[str, float] = {}  # expected output tokens of one call
    prefixes: dict[str, str] = {}  # the text every call of the juror starts with, so far
    for tasks, cached_keys in chunks:
        for task in tasks:
            spec = task.juror
            plan = plans.get(spec.key)
            if plan is None:
                per_call[spec.key], basis = expected_output_tokens(con, spec, rubric)
                plan = plans[spec.key] = JurorPlan(spec.display_name, spec.model, 0, 0, 0, 0.0, basis, 0.0, 0.0,
                                                   local=is_local(spec) and not is_offline(spec.model))  # fmt: skip
                prices[spec.key] = price_of(spec)
            if task.call_key in cached_keys:
                plan.cached += 1
                continue
            plan.calls += 1
            plan.input_tokens += count_tokens(spec, task.messages)
            text = "".join(f"\x1e{m['role']}\x1f{m['content']}" for m in task.messages)
            prefixes[spec.key] = _common_prefix(prefixes.get(spec.key, text), text)
    for key, plan in plans.items():
        plan.output_tokens = per_call[key] * plan.calls
        price = prices[key]
        if price is None:
            plan.cost_usd = plan.cost_batch_usd = None
            continue
        plan.cost_usd = plan.input_tokens * price.input + plan.output_tokens * price.output
        batch = batch_price(price)
        assert batch is not None
        plan.cost_batch_usd = plan.input_tokens * batch.input + plan.output_tokens * batch.output
    for key, plan in plans.items():
        shared = prefixes.get(key, "")
        plan.shared_prefix_tokens = max(0, round(len(shared) / 4)) if plan.calls > 1 else 0
        price = prices[key]
        if price is not None and price.input_cached is not None:
            cacheable = plan.shared_prefix_tokens >= CACHE_MIN_TOKENS
            plan.cache_saving_usd = (
                (plan.calls - 1) * plan.shared_prefix_tokens * (price.input - price.input_cached) if cacheable else 0.0
            )
    return list(plans.values())


# Providers cache a prompt prefix only from this many tokens on (OpenAI: 1,024; Anthropic: 1,024
# or 2,048 by model): a shorter shared prefix saves nothing.
CACHE_MIN_TOKENS = 1024


def _common_prefix(a: str, b: str) -> str:
    """The longest common prefix of two texts."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return a[:n]
    low, high = 0, n  # the prefix of length low is common, that of length high is not
    while high - low > 1:
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return a[:low]


class Budget:
    """``--max-cost``: a call starts only if what the run has spent, plus what calls in flight
    are expected to cost, plus this call's expected cost stays within the budget. A call's
    expected cost is its prompt (about four characters a token, with a fifth more for safety)
    and its expected output at the juror's prices; once answered, its real cost counts."""

    SAFETY = 1.2
    # Output tokens reserved for a call whose juror states no max_tokens and whose model's
    # output limit litellm does not know, until the run's own answers say more.
    UNKNOWN_OUTPUT_TOKENS = 4096.0

    def __init__(self, max_cost: float, spent: float, prices: dict[str, Price], output: dict[str, float],
                 worst: dict[str, float | None] | None = None) -> None:  # fmt: skip
        self.max_cost = checked_max_cost(max_cost)
        self.spent = spent  # paid by the run so far (earlier invocations included)
        self.reserved = 0.0
        self.prices = prices
        self.output = output  # expected output tokens (what --plan shows)
        self.worst = dict(worst or {})  # the most a call can answer: max_tokens or the model's limit
        self.longest: dict[str, float] = {}  # the longest answer seen in this run, per juror
        self.reached = False

    def output_reserve(self, key: str) -> float:
        """Output tokens a call is reserved at: its worst case where it is bounded (the juror's
        max_tokens, else the model's output limit); else the run's longest answer so far with a
        quarter more, and UNKNOWN_OUTPUT_TOKENS before any answer."""
        worst = self.worst.get(key)
        if worst:
            return float(worst)
        longest = self.longest.get(key)
        return max(self.output.get(key, 0.0), 1.25 * longest if longest else self.UNKNOWN_OUTPUT_TOKENS)

    def learn(self, key: str, completion_tokens: int | None) -> None:
        """An answer's length, for the reserve of later calls of the juror."""
        if completion_tokens:
            self.longest[key] = max(self.longest.get(key, 0.0), float(completion_tokens))

    def expected(self, task: Any, *, batch: bool = False) -> float:
        from jurybench.jurors import estimate_tokens

        price = self.prices[task.juror.key]
        if batch:
            price = batch_price(price) or price
        return (
            self.SAFETY * estimate_tokens(task.messages) * price.input
            + self.output_reserve(task.juror.key) * price.output
        )

    def reserve(self, cost: float) -> bool:
        if self.reached or self.spent + self.reserved + cost > self.max_cost:
            self.reached = True
            return False
        self.reserved += cost
        return True

    def reserve_anyway(self, cost: float) -> None:
        """A call already on its way (an open batch from an earlier invocation): counted, not refused."""
        self.reserved += cost

    def settle(self, reserved: float, cost: float | None) -> None:
        self.reserved -= reserved
        self.spent += cost if cost is not None else reserved  # no reported cost: the estimate counts


def make_budget(
    con: Connection, max_cost: float, run_id: str, rubric: AnyRubric, jurors: Sequence[JurorSpec]
) -> Budget:
    """A budget for a run, or a user error naming the juror whose price is unknown."""
    from jurybench.errors import JurybenchError

    prices: dict[str, Price] = {}
    output: dict[str, float] = {}
    worst: dict[str, float | None] = {}
    for spec in jurors:
        price = price_of(spec)
        if price is None:
            raise JurybenchError(
                f"--max-cost: no price is known for juror '{spec.display_name}' ({spec.model}), so a budget "
                "cannot be kept.",
                hint="Use a model litellm's price map lists, or run without --max-cost (see --plan).",
            )
        prices[spec.key] = price
        output[spec.key] = expected_output_tokens(con, spec, rubric)[0]
        worst[spec.key] = output_limit(spec)
    from jurybench.store import first_row

    row = first_row(
        con,
        "SELECT coalesce(sum(c.cost_usd), 0) FROM run_calls rc JOIN calls c USING (call_key) WHERE rc.run_id = ?",
        [run_id],
    )
    return Budget(max_cost, float(row[0]) if row else 0.0, prices, output, worst)
