"""Juror specifications: a model string plus parameters, parsed from the CLI or a jury file.

Parameters split in two: those that can change the answer (temperature,
max_tokens, seed, top_p, the verdict rules used to read free text, ...) are part
of the juror's identity and of every cache key; operational ones (concurrency,
timeout, retries, endpoint, key) are not.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from jurybench.errors import JurybenchError
from jurybench.redact import redact, register_secret

# Operational settings: they never change what a juror answers.
OPERATIONAL = {
    "name": "display name",
    "samples": "answers per subject (sample_index 0..n-1)",
    "concurrency": "parallel requests for this juror's provider",
    "rpm": "requests per minute cap for this juror (provider limits are read and adapted to anyway)",
    "tpm": "tokens per minute cap for this juror (prompt tokens estimated from the text)",
    "timeout": "seconds per request",
    "context": (
        "the juror's context in tokens: conversations longer than fits are cut to it as docs/conversations.md "
        "says (default: the model's known input limit)"
    ),
    "retries": "retries on 5xx and timeouts (a rate limit waits instead, up to --give-up-after)",
    "parse_retries": "re-asks after an answer that fails validation",
    "api_base": "endpoint URL",
    "api_key": "credential (never stored)",
    "local": (
        "true: a server on this machine, priced at $0; false: not (default: api_base on loopback and a model "
        "litellm's price map does not price)"
    ),
    "weight": "the juror's weight when the jury aggregates with 'weighted'",
    "prompt_cache": "auto (mark the shared system prompt for providers that cache only marked text: Anthropic) or off",
    "batch_api": "--batch: the batch protocol of the endpoint, openai or anthropic (default: the provider's)",
    "batch_size": "--batch: most requests in one provider batch (default: the provider's limit)",
    "transport": (
        "litellm (default) or openai: OpenAI-compatible endpoints (openai/, hosted_vllm/) sent over a shared "
        "connection pool without litellm, parsed and classified the same way"
    ),
}
# Answer-changing settings with a fixed meaning. Other provider parameters are
# accepted when litellm lists them for the juror's provider, and anything else only
# as ``extra.<key>`` (sent to the provider as ``key``); all of them are answer-changing.
ANSWERING = {
    "temperature": "sampling temperature",
    "max_tokens": "completion token limit",
    "seed": "provider sampling seed",
    "top_p": "nucleus sampling",
    "verdicts": "name of the rubric's free-text verdict rule set (instead of JSON)",
    "structured": (
        "auto (default: schema where litellm says the provider enforces one, else json), schema (the rubric's "
        "JSON schema, enforced by the provider), json (JSON mode, validated by jurybench) or instructor"
    ),
    "response_format": (
        "auto, json_object, json_schema or none (the request field's shape; json_object with structured=schema "
        "sends the schema in the object, as llama.cpp's server reads it)"
    ),
    "scores": "discrete (default) or expected: also read token log probabilities into each score's distribution",
    # fake juror knobs
    "invalid_rate": "fake: share of unparseable answers",
    "refusal_rate": "fake: share of refusals",
    "error_rate": "fake: share of transient errors (exercise retries)",
    "position_bias": "fake: added to pairwise scores for the first-shown response",
    "latency_ms": "fake: simulated latency per call",
}
_SECRET = {"api_key"}
# Parameters whose values are credentials: api_key, every header (extra_headers, extra.headers,
# extra.extra_headers: Authorization, Helicone-Auth, Ocp-Apim-Subscription-Key, ...) and any
# parameter named like a key, token, secret or password. They are operational: never part of
# the juror's identity, never stored, logged or served; only their names are kept.
_SECRET_NAME = re.compile(
    r"(?i)(^|[._-])(api[_-]?key|key|token|secret|password|passwd|authorization|auth|credentials?|headers)$"
)


def is_secret_param(name: str) -> bool:
    """Whether a juror parameter's value is a credential (see _SECRET_NAME)."""
    return name in _SECRET or bool(_SECRET_NAME.search(name.strip()))


def url_credentials(value: object) -> tuple[str, list[str]] | None:
    """For an http(s) URL that carries credentials (user-info, or query parameters named like
    a key, token, secret or password): the URL with each of them masked, and their values.
    None for anything else (a URL without credentials, not a URL)."""
    if not isinstance(value, str) or not value.lower().startswith(("http://", "https://")):
        return None
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    from jurybench.redact import MASK

    try:
        parts = urlsplit(value)
        user, password, host = parts.username, parts.password, parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return None
    found = [v for v in (password, user if user and password is None else None) if v]
    if user is not None or password is not None:
        found.append(parts.netloc.rsplit("@", 1)[0])  # user:password as written
    masked_query = []
    for name, text in query:
        if is_secret_param(name) or re.search(r"(?i)(sig|signature|code)$", name):
            found.append(text)
            masked_query.append((name, MASK))
        else:
            masked_query.append((name, text))
    if not found:
        return None
    netloc = (f"{MASK}@" if user is not None or password is not None else "") + host + port
    public = urlunsplit((parts.scheme, netloc, parts.path, urlencode(masked_query, safe="[]"), parts.fragment))
    return public, [f for f in found if f]


def _secret_strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _secret_strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _secret_strings(v)]
    return [str(value)] if value is not None else []


SAMPLING = frozenset({"temperature", "max_tokens", "seed", "top_p"})
READING = frozenset({"verdicts", "structured", "response_format", "scores"})
FAKE_KNOBS = frozenset({"invalid_rate", "refusal_rate", "error_rate", "position_bias", "latency_ms"})
EXTRA_PREFIX = "extra."


@dataclass(frozen=True)
class JurorSpec:
    model: str
    params: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    samples: int = 1
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def display_name(self) -> str:
        return self.name or self.model

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0] if "/" in self.model else self.model

    @cached_property
    def key(self) -> str:
        canonical = json.dumps({"model": self.model, "params": self.params}, sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def option(self, name: str, default: object) -> Any:
        return self.options.get(name, default)


def _coerce(value: str) -> object:
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def juror_from_mapping(data: dict[str, object], *, where: str) -> JurorSpec:
    if "model" not in data or not isinstance(data["model"], str) or not data["model"]:
        raise JurybenchError(f"{where}: a juror needs a 'model' (e.g. openai/gpt-4o-mini).")
    params: dict[str, object] = {}
    options: dict[str, object] = {}
    for key, value in data.items():
        key = str(key).strip()
        if key == "model":
            continue
        if key in OPERATIONAL or is_secret_param(key):
            options[key] = value
        else:
            params[key] = value
    for key in HEADER_PARAMS:
        if key in options:
            _check_headers(key, options[key], where)
    for key, value in list(params.items()):
        if url_credentials(value) is not None:  # a URL with credentials is one: never an identity
            options[key] = params.pop(key)
    for key, value in options.items():
        if is_secret_param(key):
            for text in _secret_strings(value):
                register_secret(text)  # redacted from every error text from now on
        elif (credentials := url_credentials(value)) is not None:
            for text in credentials[1]:
                register_secret(text)
    _check_operational(options, where)
    samples = options.pop("samples", 1)
    if not isinstance(samples, int) or samples < 1:
        raise JurybenchError(f"{where}: samples must be a whole number >= 1 (got {samples!r}).")
    name = str(options.pop("name", ""))
    return JurorSpec(model=data["model"], params=params, name=name, samples=samples, options=options)


def _split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside braces, brackets and double quotes (a JSON object's
    own commas stay inside its value)."""
    parts: list[str] = []
    depth, quoted, escaped, start = 0, False, False, 0
    for at, char in enumerate(text):
        if quoted:
            escaped, quoted = (False, True) if escaped else (char == "\\", char != '"')
            continue
        if char == '"':
            quoted = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    parts.append(text[start:])
    return [part.strip() for part in parts]


# Operational numbers and the least each may be: whole numbers or any finite number.
_WHOLE_AT_LEAST = {"concurrency": 1, "retries": 0, "parse_retries": 0, "batch_size": 1, "context": 256}
# A cap below one request (or token) a minute cannot be right: it would pace a run to a halt.
_NUMBER_AT_LEAST = {"rpm": 1.0, "tpm": 1.0, "timeout": 0.001}


def _check_operational(options: dict[str, object], where: str) -> None:
    import math

    for key, least in _WHOLE_AT_LEAST.items():
        value = options.get(key)
        if key in options and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            raise JurybenchError(
                f"{where}: {key} must be a whole number >= {least} (got {value!r}).",
                hint=f"e.g. {key}={max(least, 1) * 4 if key == 'concurrency' else max(least, 1)}",
            )
    for key, floor in _NUMBER_AT_LEAST.items():
        value = options.get(key)
        if key not in options:
            continue
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if number is None or not math.isfinite(number) or number < floor:
            what = "seconds > 0" if key == "timeout" else f"a number >= {floor:g} (a cap a minute)"
            raise JurybenchError(
                f"{where}: {key} must be {what} (got {value!r}).",
                hint="A cap below one a minute cannot be right; leave it out to follow the provider's own limits."
                if key != "timeout"
                else "e.g. timeout=120",
            )


def parse_juror(text: str) -> JurorSpec:
    """``MODEL[,key=value...]``, e.g. ``openai/gpt-4o-mini,temperature=0,samples=3,name=mini``.
    A value that starts with ``{`` is a JSON object (``extra_headers={"X-Key": "abc"}``)."""
    model, *rest = _split_top_level(text)
    shown = redact(",".join([model, *(_shown_part(part) for part in rest)]))
    data: dict[str, object] = {"model": model}
    for part in rest:
        if "=" not in part:
            raise JurybenchError(
                f"--juror '{shown}': '{redact(_shown_part(part))}' is not key=value.",
                hint="Write MODEL,key=value,... e.g. openai/gpt-4o-mini,temperature=0,samples=3.",
            )
        key, value = (side.strip() for side in part.split("=", 1))
        if value.startswith("{"):
            try:
                data[key] = json.loads(value)
            except json.JSONDecodeError as exc:
                raise JurybenchError(
                    f"--juror '{shown}': {key} is not a JSON object ({exc.msg} at character {exc.pos + 1}).",
                    hint=f'Write {key}={{"Name": "value", ...}} with double quotes, and quote the whole --juror '
                    "for the shell.",
                ) from None
        else:
            data[key] = _coerce(value)
    return juror_from_mapping(data, where=f"--juror '{shown}'")


def _shown_part(part: str) -> str:
    """One ``key=value`` of a juror string as an error may show it: a credential's value masked."""
    from jurybench.redact import MASK

    key, _, value = part.partition("=")
    return f"{key}={MASK}" if value and is_secret_param(key.strip()) else part


HEADER_PARAMS = ("extra_headers", "headers", "extra.headers", "extra.extra_headers")


def _check_headers(key: str, value: object, where: str) -> None:
    """Headers are a mapping of names to text: anything else is refused before any call."""
    if not isinstance(value, dict) or not all(isinstance(k, str) and k for k in value):
        raise JurybenchError(
            f"{where}: {key} must be a mapping of header names to values (got {type(value).__name__}).",
            hint=f'Write {key}={{"X-Gateway-Key": "..."}} (a JSON object), or a mapping in a jury file.',
        )
    for name, text in value.items():
        if not isinstance(text, str | int | float) or isinstance(text, bool):
            raise JurybenchError(
                f"{where}: {key}: header {name!r} must be text (got {type(text).__name__}).",
                hint="Give each header's value as a string.",
            )


def stored_params(spec: JurorSpec) -> dict[str, object]:
    """What the jurors table records: answer-changing params, never secrets."""
    return {k: v for k, v in spec.params.items() if k not in _SECRET}


def secret_options(spec: JurorSpec) -> dict[str, object]:
    """The juror's credentials (kept in memory only): api_key, headers, key-like parameters,
    and URLs that carry credentials (``api_base=http://user:password@host/v1``)."""
    return {k: v for k, v in spec.options.items() if is_secret_param(k) or url_credentials(v) is not None}


def public_value(value: object) -> object:
    """A parameter's value as it may be shown: a URL's credentials masked."""
    credentials = url_credentials(value)
    return credentials[0] if credentials is not None else value


def public_juror(spec: JurorSpec) -> dict[str, object]:
    """The juror as a mapping without any credential (what a service job stores and serves);
    the names of the credentials it was given are listed under ``secrets`` (a URL that carried
    credentials is shown with them masked)."""
    out: dict[str, object] = {"model": spec.model, **spec.params}
    out.update({k: public_value(v) for k, v in spec.options.items() if not is_secret_param(k)})
    if spec.name:
        out["name"] = spec.name
    if spec.samples != 1:
        out["samples"] = spec.samples
    hidden = sorted(secret_options(spec))
    return {**out, "secrets": hidden} if hidden else out
