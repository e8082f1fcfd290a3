"""Who answers: juror specs and their parameters, the transports (litellm, fake, sim, replay),
the endpoint's rate limits and the juror's own pace, the provider batch clients, prices."""

from jurybench.jurors._batch_clients import (
    TERMINAL,
    BatchClient,
    BatchStatus,
    Result,
    check_batch_juror,
    protocol_of,
    request_body,
    split,
)
from jurybench.jurors._completion import (
    Backend,
    Completion,
    JurorUnusable,
    PermanentError,
    RateLimited,
    Slot,
    TransientError,
)
from jurybench.jurors._endpoint_limits import (
    EndpointLimiter,
    LimiterStopped,
    LimiterTimeout,
    Signals,
    estimate_tokens,
)
from jurybench.jurors._kind_fake import FakeBackend
from jurybench.jurors._kind_litellm import (
    REQUEST_FORMATS,
    STRUCTURED_MODES,
    LiteLLMBackend,
    structured_mode,
)
from jurybench.jurors._kinds import ENTRY_POINT_GROUP, JurorKind
from jurybench.jurors._lookup import is_offline, kind_of, kinds, register_kind, unregister_kind
from jurybench.jurors._make import check_juror, check_jurors, make_backend
from jurybench.jurors._own_pace import JurorPace
from jurybench.jurors._price_map import Price, is_local, priced
from jurybench.jurors._prices import (
    answer_reserve,
    batch_price,
    context_budget,
    count_tokens,
    output_limit,
    price_of,
    usd,
)
from jurybench.jurors._simulated import load_sim_subjects, truth
from jurybench.jurors._spec import (
    JurorSpec,
    is_secret_param,
    juror_from_mapping,
    parse_juror,
    public_juror,
    secret_options,
    stored_params,
)
from jurybench.jurors._units import parse_unit, unit_id

__all__ = [
    "ENTRY_POINT_GROUP",
    "REQUEST_FORMATS",
    "STRUCTURED_MODES",
    "TERMINAL",
    "Backend",
    "BatchClient",
    "BatchStatus",
    "Completion",
    "EndpointLimiter",
    "FakeBackend",
    "JurorKind",
    "JurorPace",
    "JurorSpec",
    "JurorUnusable",
    "LimiterStopped",
    "LimiterTimeout",
    "LiteLLMBackend",
    "PermanentError",
    "Price",
    "RateLimited",
    "Result",
    "Signals",
    "Slot",
    "TransientError",
    "answer_reserve",
    "batch_price",
    "check_batch_juror",
    "check_juror",
    "check_jurors",
    "context_budget",
    "count_tokens",
    "estimate_tokens",
    "is_local",
    "is_offline",
    "is_secret_param",
    "juror_from_mapping",
    "kind_of",
    "kinds",
    "load_sim_subjects",
    "make_backend",
    "output_limit",
    "parse_juror",
    "parse_unit",
    "price_of",
    "priced",
    "protocol_of",
    "public_juror",
    "register_kind",
    "request_body",
    "secret_options",
    "split",
    "stored_params",
    "structured_mode",
    "truth",
    "unit_id",
    "unregister_kind",
    "usd",
]
