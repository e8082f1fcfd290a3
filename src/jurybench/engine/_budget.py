"""Cost as a run spends it: the tally, the plan's prices and the --max-cost budget."""

from __future__ import annotations

import asyncio
import json
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
    if rubric.generates:  # a response, as long as it may be
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


def affordable_output_tokens(price: Price, prompt_tokens: float, left: float) -> float:
    """The most output tokens a call can be allowed (its ``max_tokens``) so that it costs at most
    ``left`` dollars: what is left after its prompt (``prompt_tokens`` with a fifth more, as a
    budget reserves prompts) and its price per call, at the output rate; infinite when output
    costs nothing, 0 when not even the prompt fits."""
    room = left - prompt_tokens * Budget.SAFETY * price.input - price.per_call
    if room < 0:
        return 0.0
    if price.output <= 0:
        return float("inf")
    return float(int(room / price.output))


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

    def as_dict(self) -> dict[str, object]:
        return {
            "cost_usd": self.usd,
            "n_cost_unknown": self.n_unpriced,
            "cost_by_juror": {k: round(v, 10) for k, v in self.by_juror.items()},
        }


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
    # Prompt tokens of one call (min, median, max) over the calls to make, and the subjects whose
    # conversation is cut to the juror's context (of ``context_tokens``; None: nothing to fit).
    prompt_tokens_min: int = 0
    prompt_tokens_median: float = 0.0
    prompt_tokens_max: int = 0
    n_cut: int = 0
    context_tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}


def plan_costs(con: Connection, rubric: AnyRubric, chunks: Iterable[tuple[Sequence[Any], set[str]]]) -> list[JurorPlan]:
    """Per juror (in jury order): calls, tokens and cost of the tasks not already answered, over
    the run's chunks of (tasks, keys already answered)."""
    plans: dict[str, JurorPlan] = {}
    prices: dict[str, Price | None] = {}
    per_call: dict[str, float] = {}  # expected output tokens of one call
    prefixes: dict[str, str] = {}  # the text every call of the juror starts with, so far
    sizes: dict[str, list[int]] = {}  # each call's prompt tokens
    cut: dict[str, set[str]] = {}  # the subjects cut to fit the juror's context
    for tasks, cached_keys in chunks:
        for task in tasks:
            spec = task.juror
            plan = plans.get(spec.key)
            if plan is None:
                per_call[spec.key], basis = expected_output_tokens(con, spec, rubric)
                plan = plans[spec.key] = JurorPlan(
                    spec.display_name,
                    spec.model,
                    0,
                    0,
                    0,
                    0.0,
                    basis,
                    0.0,
                    0.0,
                    local=is_local(spec) and not is_offline(spec.model),
                )
                prices[spec.key] = price_of(spec)
            if task.call_key in cached_keys:
                plan.cached += 1
                continue
            plan.calls += 1
            tokens = count_tokens(spec, task.messages)
            plan.input_tokens += tokens
            sizes.setdefault(spec.key, []).append(tokens)
            if task.presentation and rubric.conversation_fields:
                cut.setdefault(spec.key, set()).add(task.subject_id)
                plan.context_tokens = int(json.loads(task.presentation)["context_tokens"])
            text = "".join(f"\x1e{m['role']}\x1f{m['content']}" for m in task.messages)
            prefixes[spec.key] = _common_prefix(prefixes.get(spec.key, text), text)
    for key, plan in plans.items():
        if sizes.get(key):
            import statistics

            plan.prompt_tokens_min, plan.prompt_tokens_max = min(sizes[key]), max(sizes[key])
            plan.prompt_tokens_median = float(statistics.median(sizes[key]))
        plan.n_cut = len(cut.get(key, ()))
        plan.output_tokens = per_call[key] * plan.calls
        price = prices[key]
        if price is None:
            plan.cost_usd = plan.cost_batch_usd = None
            continue
        plan.cost_usd = (
            plan.input_tokens * price.input + plan.output_tokens * price.output + plan.calls * price.per_call
        )
        batch = batch_price(price)
        assert batch is not None
        plan.cost_batch_usd = (
            plan.input_tokens * batch.input + plan.output_tokens * batch.output + plan.calls * batch.per_call
        )
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
    are reserved at, plus this call's reserve stays within the budget. A call's reserve is its
    prompt (about four characters a token, with a fifth more for safety; once the juror's real
    prompt tokens are known, their largest ratio to the estimate with a tenth more) and its
    output at the juror's prices; once answered, its real cost replaces the reserve.

    What is promised: **while the worst case of a call fits what is left, the calls in flight
    can never pass the budget**: each is reserved at its juror's worst case (``max_tokens``, else
    the model's output limit litellm knows), however the answers grow or vary (the red team's 60
    then 2,000 tokens, a log-normal spread). **Near the end**, when the next call's worst case no
    longer fits and nothing is in flight, calls go **one at a time**, each reserved at the
    longest answer seen with a quarter more (the rubric's answer format before three answers are
    seen), so a run spends its budget instead of stopping at the first cautious reserve; there
    the spend can pass the budget only by the excess of that one call over its reserve (an
    answer more than a quarter longer than any seen). The run stops when not even that fits.
    A model with no known output limit and no ``max_tokens`` is reserved at the longest answer
    seen with a quarter more (at least UNKNOWN_OUTPUT_TOKENS until three are seen), which holds
    only while answers stay within it. (Reserving every call at the longest answer seen let a run
    whose answers grew, with 256 calls in flight, spend 4.5 x its budget.)"""

    SAFETY = 1.2
    MARGIN = 1.25  # a learned reserve: the longest answer seen, with a quarter more
    LEARN_FROM = 3  # answers of a juror seen before its reserve is learned from them
    # Output tokens reserved for a call whose juror states no max_tokens and whose model's
    # output limit litellm does not know, until the run's own answers say more.
    UNKNOWN_OUTPUT_TOKENS = 4096.0

    def __init__(
        self,
        max_cost: float,
        spent: float,
        prices: dict[str, Price],
        output: dict[str, float],
        worst: dict[str, float | None] | None = None,
        seen: dict[str, tuple[float, int]] | None = None,
    ) -> None:
        self.max_cost = checked_max_cost(max_cost)
        self.spent = spent  # paid by the run so far (earlier invocations included)
        self.reserved = 0.0
        self.open = 0  # reservations not yet settled (calls in flight)
        self.prices = prices
        self.output = output  # expected output tokens (what --plan shows)
        self.worst = dict(worst or {})  # the most a call can answer: max_tokens or the model's limit
        # The longest answer seen per juror, and how many answers were seen (earlier ones in the store too).
        self.longest: dict[str, float] = {k: v[0] for k, v in (seen or {}).items()}
        self.answers: dict[str, int] = {k: v[1] for k, v in (seen or {}).items()}
        self.prompt_ratio: dict[str, float] = {}  # the largest real / estimated prompt tokens seen
        self.reached = False
        self._room: asyncio.Event | None = None  # set when a settlement frees room

    def learned(self, key: str) -> bool:
        return bool(self.longest.get(key)) and self.answers.get(key, 0) >= self.LEARN_FROM

    def output_reserve(self, key: str, *, probe: bool = False) -> float:
        """Output tokens a call of juror ``key`` is reserved at (see the class). A probe (a call
        made alone, while nothing else is in flight, when the worst case does not fit) is
        reserved at the answer length the rubric's format implies or the longest seen, with a
        quarter more."""
        worst = self.worst.get(key)
        longest = self.longest.get(key, 0.0)
        if worst and not probe:  # the promise: calls in flight can never pass the budget
            return float(worst)
        if self.learned(key):
            learned = self.MARGIN * longest
            return min(float(worst), learned) if worst else learned
        if probe:
            realistic = self.MARGIN * max(self.output.get(key, 0.0), longest)
            return min(float(worst), realistic) if worst else realistic
        return max(self.output.get(key, 0.0), self.MARGIN * longest, self.UNKNOWN_OUTPUT_TOKENS)

    def learn(
        self, key: str, completion_tokens: int | None, prompt_tokens: int | None = None, estimated: float | None = None
    ) -> None:
        """An answer's length, for the reserve of later calls of the juror; and how its prompt's
        real tokens compare with the estimate from characters (``estimated``)."""
        if completion_tokens:
            self.longest[key] = max(self.longest.get(key, 0.0), float(completion_tokens))
            self.answers[key] = self.answers.get(key, 0) + 1
        if prompt_tokens and estimated:
            self.prompt_ratio[key] = max(self.prompt_ratio.get(key, 0.0), prompt_tokens / estimated)

    def input_reserve(self, key: str, estimated: float) -> float:
        """Prompt tokens a call is reserved at: the estimate from characters times the largest
        ratio of real to estimated tokens seen (with a tenth more) once the juror is learned,
        else with a fifth more."""
        ratio = self.prompt_ratio.get(key)
        if ratio and self.learned(key):
            return estimated * ratio * 1.1
        return estimated * self.SAFETY

    def expected(self, task: Any, *, batch: bool = False, probe: bool = False) -> float:
        from jurybench.jurors import estimate_tokens

        price = self.prices[task.juror.key]
        if batch:
            price = batch_price(price) or price
        key = task.juror.key
        return (
            self.input_reserve(key, estimate_tokens(task.messages)) * price.input
            + self.output_reserve(key, probe=probe) * price.output
            + price.per_call  # a kind's price per call whatever its tokens (a simulated juror's cost=)
        )

    def fits(self, cost: float) -> bool:
        return self.spent + self.reserved + cost <= self.max_cost

    def reserve(self, cost: float) -> bool:
        """Reserve ``cost`` now, or refuse it and mark the budget reached (provider batches,
        which cannot wait for room)."""
        if self.reached or not self.fits(cost):
            self.reached = True
            return False
        self.reserved += cost
        self.open += 1
        return True

    def would_wait(self, task: Any) -> bool:
        """Whether :meth:`admit` would wait for calls in flight to settle before taking ``task``
        (a caller holding calls it has admitted and not sent sends them first)."""
        return not self.reached and self.open > 0 and not self.fits(self.expected(task))

    async def admit(self, task: Any) -> float | None:
        """Reserve a call's cost, waiting while calls in flight may free room for it: the
        amount reserved, or None once nothing is in flight and the call still does not fit
        (the budget is reached)."""
        while not self.reached:
            cost = self.expected(task)  # again after each settlement: the answers teach the reserve
            if not self.fits(cost) and self.open == 0:
                # The end: one call at a time, at the longest answer seen with a quarter more (or
                # the rubric's format before three answers): only this call can pass its reserve.
                cost = self.expected(task, probe=True)
            if self.fits(cost):
                self.reserved += cost
                self.open += 1
                return cost
            if self.open == 0:
                break
            if self._room is None:
                self._room = asyncio.Event()
            await self._room.wait()
        self.reached = True
        return None

    def reserve_anyway(self, cost: float) -> None:
        """A call already on its way (an open batch from an earlier invocation): counted, not refused."""
        self.reserved += cost
        self.open += 1

    def settle(self, reserved: float, cost: float | None) -> None:
        self.reserved = max(0.0, self.reserved - reserved)
        self.open = max(0, self.open - 1)
        self.spent += cost if cost is not None else reserved  # no reported cost: the estimate counts
        if self._room is not None:
            self._room.set()
            self._room = None


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

    seen: dict[str, tuple[float, int]] = {}
    for spec in jurors:  # answer lengths the store already knows, for the learned reserve
        known = first_row(
            con,
            "SELECT max(completion_tokens), count(completion_tokens) FROM calls "
            "WHERE juror_key = ? AND status <> 'error'",
            [spec.key],
        )
        if known and known[1]:
            seen[spec.key] = (float(known[0]), int(known[1]))

    row = first_row(
        con,
        "SELECT coalesce(sum(c.cost_usd), 0) FROM run_calls rc JOIN calls c USING (call_key) "
        "WHERE rc.run_id = ? AND c.run_id = rc.run_id",  # what the run spent: not calls reused from the cache
        [run_id],
    )
    return Budget(max_cost, float(row[0]) if row else 0.0, prices, output, worst, seen)
