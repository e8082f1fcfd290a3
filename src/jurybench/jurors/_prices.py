"""What a run will cost before it runs (``score --plan``): per juror, the calls left after the
cache, their input tokens counted from the rendered prompts, the output tokens expected, and
the price synchronously and through a provider's batch API.

Prices come from litellm's offline price map (batch prices where it lists them). A model it
has no price for is *unknown*, never 0; offline jurors (fake, sim, replay) cost nothing.
Output tokens are the mean of the juror's earlier answers in the store where there are any,
else a rule from the rubric's answer format (documented in :func:`expected_output_tokens`).
"""

from __future__ import annotations

from jurybench.jurors._price_map import Price, is_local, listed_price
from jurybench.jurors._spec import JurorSpec


def price_of(spec: JurorSpec) -> Price | None:
    """The juror's per-token prices: its kind's price if it states one, 0 for an offline kind
    or a local server (its cost is the user's own hardware), else litellm's price map; None when
    they are unknown."""
    from jurybench.jurors._lookup import kind_of

    kind = kind_of(spec.model)
    if kind.price is not None:
        return kind.price(spec)  # type: ignore[no-any-return]
    if kind.offline or is_local(spec):
        return Price(0.0, 0.0, 0.0, 0.0)
    return listed_price(spec)


def batch_price(price: Price | None) -> Price | None:
    """What a batch API charges per token: the price map's batch prices where it lists them,
    else half the synchronous price (OpenAI's and Anthropic's published batch discount)."""
    if price is None:
        return None
    return Price(
        price.input_batch if price.input_batch is not None else price.input / 2,
        price.output_batch if price.output_batch is not None else price.output / 2,
        per_call=price.per_call,
    )


def count_tokens(spec: JurorSpec, messages: list[dict[str, object]]) -> int:
    """Prompt tokens: litellm's counter for the juror's model, else about four characters a token."""
    from jurybench.jurors._lookup import is_offline

    if not is_offline(spec.model):
        from jurybench.jurors._completion import import_litellm

        try:
            return int(import_litellm().token_counter(model=spec.model, messages=messages))
        except Exception:
            pass
    from jurybench.jurors._endpoint_limits import estimate_tokens

    return round(estimate_tokens(messages))


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


# The context of a model that calls a provider but that litellm does not know: the smallest in
# common use among chat models today, so a conversation fitted to it fits theirs.
DEFAULT_CONTEXT = 8_192
# What a call's answer is kept room for in the context when the juror sets no max_tokens and the
# model's output limit is unknown.
ANSWER_RESERVE = 1_024


def context_budget(spec: JurorSpec) -> tuple[int, str] | None:
    """The juror's context in tokens and where it comes from: ``context=`` on the juror, else the
    model's input limit as litellm knows it, else DEFAULT_CONTEXT for a provider's model; None
    for offline jurors (simulated, fake, replayed) given no ``context=``: nothing to fit."""
    given = spec.option("context", None)
    if isinstance(given, int) and not isinstance(given, bool):
        return given, "context="
    from jurybench.jurors._lookup import is_offline

    if is_offline(spec.model):
        return None
    try:
        from jurybench.jurors._completion import import_litellm

        info = import_litellm().get_model_info(spec.model)
        limit = info.get("max_input_tokens") or info.get("max_tokens")
        if isinstance(limit, int) and limit > 0:
            return limit, "the model's input limit (litellm)"
    except Exception:  # litellm does not know the model
        pass
    return DEFAULT_CONTEXT, f"the default for a model of unknown context ({DEFAULT_CONTEXT:,})"


def answer_reserve(spec: JurorSpec, context: int) -> int:
    """Tokens kept free for the answer: the juror's output limit, at most half its context."""
    limit = output_limit(spec)
    return int(min(limit if limit is not None else ANSWER_RESERVE, context // 2))


def output_limit(spec: JurorSpec) -> float | None:
    """The most output tokens one call of the juror can cost: its max_tokens, else the model's
    output limit as litellm knows it, else None (unknown)."""
    given = spec.params.get("max_tokens")
    if isinstance(given, int | float) and given > 0:
        return float(given)
    from jurybench.jurors._lookup import is_offline

    if is_offline(spec.model):
        return None
    try:
        from jurybench.jurors._completion import import_litellm

        info = import_litellm().get_model_info(spec.model)
    except Exception:  # litellm does not know the model: no limit to reserve at
        return None
    limit = info.get("max_output_tokens") or info.get("max_tokens")
    return float(limit) if isinstance(limit, int | float) and limit > 0 else None
