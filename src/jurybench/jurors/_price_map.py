"""litellm's price map, and whether a juror is served from this machine (its calls cost nothing
billed). Kept apart from ``_prices`` (which asks a juror's kind) so that transports can ask it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from jurybench.jurors._spec import JurorSpec


@dataclass(frozen=True)
class Price:
    """USD per token; batch prices None where the price map lists none."""

    input: float
    output: float
    input_batch: float | None = None
    output_batch: float | None = None
    input_cached: float | None = None  # a prompt token read from the provider's cache
    input_cache_write: float | None = None  # a prompt token written to it (Anthropic)
    per_call: float = 0.0  # USD a call costs whatever its tokens (a simulated juror's declared cost=)


def priced(completion: Any, price: Price) -> float:
    """What an answer costs at ``price``: its prompt tokens at the input rate, those the provider
    read from its cache at the cached rate (where the map lists one) and those it wrote to the
    cache at the cache-write rate, and its completion tokens at the output rate."""
    prompt = completion.prompt_tokens or 0
    cached = min(completion.cached_tokens or 0, prompt) if price.input_cached is not None else 0
    written = min(completion.cache_write_tokens or 0, prompt - cached) if price.input_cache_write is not None else 0
    cost = (prompt - cached - written) * price.input + (completion.completion_tokens or 0) * price.output
    return float(cost + cached * (price.input_cached or 0.0) + written * (price.input_cache_write or 0.0))


# Providers whose server runs where the user runs it when no api_base says otherwise.
LOCAL_PROVIDERS = frozenset({"ollama", "ollama_chat", "llamafile", "lm_studio"})
_LOOPBACK = re.compile(r"^(localhost|127(\.\d{1,3}){3}|\[?::1\]?|0\.0\.0\.0)$", re.IGNORECASE)


def is_local(spec: JurorSpec) -> bool:
    """A juror served from this machine, whose calls cost nothing billed: ``local=true``, or
    (unless ``local=false``) an api_base on a loopback address (llama.cpp's server, vLLM,
    Ollama, LM Studio on localhost) or a local provider with no api_base, for a model that
    litellm's price map does not price (or prices at 0). A priced model behind a loopback address is a local
    proxy to a paid provider and keeps its price."""
    said = spec.options.get("local")
    if isinstance(said, bool):
        return said
    base = spec.options.get("api_base")
    if base:
        host = urlsplit(str(base) if "//" in str(base) else f"//{base}").hostname or ""
        on_this_machine = bool(_LOOPBACK.match(host))
    else:
        on_this_machine = spec.provider in LOCAL_PROVIDERS
    listed = listed_price(spec)
    return on_this_machine and (listed is None or listed.input == listed.output == 0)


def listed_price(spec: JurorSpec) -> Price | None:
    """USD per token from litellm's offline price map; None where it lists none."""
    from jurybench.jurors._completion import import_litellm

    litellm = import_litellm()
    try:
        info = litellm.get_model_info(model=spec.model)
    except Exception:
        return None
    given_in, given_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if given_in is None or given_out is None:
        return None
    return Price(
        float(given_in),
        float(given_out),
        info.get("input_cost_per_token_batches"),
        info.get("output_cost_per_token_batches"),
        info.get("cache_read_input_token_cost"),
        info.get("cache_creation_input_token_cost"),
    )
