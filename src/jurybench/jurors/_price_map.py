"""litellm's price map, and whether a juror is served from this machine (its calls cost nothing
billed). Kept apart from ``_prices`` (which asks a juror's kind) so that transports can ask it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from jurybench.jurors._spec import JurorSpec


@dataclass(frozen=True)
class Price:
    """USD per token; batch prices None where the price map lists none."""

    input: float
    output: float
    input_batch: float | None = None
    output_batch: float | None = None


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
    return Price(float(given_in), float(given_out), info.get("input_cost_per_token_batches"),
                 info.get("output_cost_per_token_batches"))  # fmt: skip
