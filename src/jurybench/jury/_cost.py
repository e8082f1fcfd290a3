"""What a run will cost before it runs (``score --plan``): per juror, the calls left after the
cache, their input tokens counted from the rendered prompts, the output tokens expected, and
the price synchronously and through a provider's batch API.

Prices come from litellm's offline price map (batch prices where it lists them). A model it
has no price for is *unknown*, never 0; offline jurors (fake, sim, replay) cost nothing.
Output tokens are the mean of the juror's earlier answers in the store where there are any,
else a rule from the rubric's answer format (documented in :func:`expected_output_tokens`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurybench.jury._juror import JurorSpec

OFFLINE = ("fake/", "sim/", "replay/")


@dataclass(frozen=True)
class Price:
    """USD per token; batch prices None where the price map lists none."""

    input: float
    output: float
    input_batch: float | None = None
    output_batch: float | None = None


def price_of(spec: JurorSpec) -> Price | None:
    """The juror's per-token prices (0 offline), or None when they are unknown."""
    if spec.model.startswith(OFFLINE):
        return Price(0.0, 0.0, 0.0, 0.0)
    from jurybench.jury._backends import import_litellm

    litellm = import_litellm()
    try:
        info = litellm.get_model_info(model=spec.model)
    except Exception:
        return None
    given_in, given_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if given_in is None or given_out is None:
        return None
    return Price(float(given_in), float(given_out), info.get("input_cost_per_token_batches"),
                 info.get("output_cost_per_token_batches"))  # fmt: skip


def batch_price(price: Price | None) -> Price | None:
    """What a batch API charges per token: the price map's batch prices where it lists them,
    else half the synchronous price (OpenAI's and Anthropic's published batch discount)."""
    if price is None:
        return None
    return Price(
        price.input_batch if price.input_batch is not None else price.input / 2,
        price.output_batch if price.output_batch is not None else price.output / 2,
    )


def count_tokens(spec: JurorSpec, messages: list[dict[str, Any]]) -> int:
    """Prompt tokens: litellm's counter for the juror's model, else about four characters a token."""
    if not spec.model.startswith(OFFLINE):
        from jurybench.jury._backends import import_litellm

        try:
            return int(import_litellm().token_counter(model=spec.model, messages=messages))
        except Exception:
            pass
    from jurybench.jury._limits import estimate_tokens

    return round(estimate_tokens(messages))


def expected_output_tokens(con: Any, spec: JurorSpec, rubric: Any) -> tuple[float, str]:
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


def usd(value: float) -> str:
    """Dollars with the digits a cheap run needs: $0, $0.00012 (two significant digits below a
    cent), $0.0166 (four decimals below a dollar), $12.50."""
    import math

    if value == 0:
        return "$0"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    if abs(value) >= 0.01:
        return f"${value:.4f}"
    digits = 1 - math.floor(math.log10(abs(value)))
    return f"${value:.{digits}f}"


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

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def plan_costs(con: Any, rubric: Any, chunks: Iterable[tuple[Sequence[Any], set[str]]]) -> list[JurorPlan]:
    """Per juror (in jury order): calls, tokens and cost of the tasks not already answered, over
    the run's chunks of (tasks, keys already answered)."""
    plans: dict[str, JurorPlan] = {}
    prices: dict[str, Price | None] = {}
    per_call: dict[str, float] = {}  # expected output tokens of one call
    for tasks, cached_keys in chunks:
        for task in tasks:
            spec = task.juror
            plan = plans.get(spec.key)
            if plan is None:
                per_call[spec.key], basis = expected_output_tokens(con, spec, rubric)
                plan = plans[spec.key] = JurorPlan(spec.display_name, spec.model, 0, 0, 0, 0.0, basis, 0.0, 0.0)
                prices[spec.key] = price_of(spec)
            if task.call_key in cached_keys:
                plan.cached += 1
                continue
            plan.calls += 1
            plan.input_tokens += count_tokens(spec, task.messages)
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
    return list(plans.values())


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
        import math

        if not isinstance(max_cost, int | float) or not math.isfinite(max_cost) or max_cost < 0:
            from jurybench.errors import JurybenchError

            raise JurybenchError(f"max_cost must be a number of dollars >= 0 (got {max_cost!r}).")
        self.max_cost = max_cost
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
        from jurybench.jury._limits import estimate_tokens

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


def make_budget(con: Any, max_cost: float, run_id: str, rubric: Any, jurors: Sequence[JurorSpec]) -> Budget:
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


def output_limit(spec: JurorSpec) -> float | None:
    """The most output tokens one call of the juror can cost: its max_tokens, else the model's
    output limit as litellm knows it, else None (unknown)."""
    given = spec.params.get("max_tokens")
    if isinstance(given, int | float) and given > 0:
        return float(given)
    if spec.model.startswith(("fake/", "sim/", "replay/")):
        return None
    try:
        from jurybench.jury._backends import import_litellm

        info = import_litellm().get_model_info(spec.model)
    except Exception:  # litellm does not know the model: no limit to reserve at
        return None
    limit = info.get("max_output_tokens") or info.get("max_tokens")
    return float(limit) if isinstance(limit, int | float) and limit > 0 else None
