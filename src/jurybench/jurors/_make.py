"""A juror from its kind: its transport built, its parameters and key checked before any call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurybench.errors import JurybenchError
from jurybench.jurors._completion import Backend, as_backend, import_litellm
from jurybench.jurors._spec import (
    ANSWERING,
    EXTRA_PREFIX,
    OPERATIONAL,
    READING,
    JurorSpec,
)
from jurybench.rubric import (
    AnyRubric,
)

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection as Connection


def make_backend(
    spec: JurorSpec, rubric: AnyRubric, con: Connection | None, subject_ids: list[str] | None = None
) -> Backend:
    """The transport for a juror, as its kind builds it (jurors/_kinds.py); unknown sources are
    user errors. ``subject_ids`` (the run's items or pairs) lets a simulated juror read only
    what it will judge. ``con`` is None where the store is not at hand (a Ray worker): only
    kinds that do not read the store (``JurorKind.reads_store``) are built so."""
    from jurybench.jurors._lookup import kind_of

    kind = kind_of(spec.model)
    return as_backend(kind.make(spec, rubric, con, subject_ids), kind.prefix)


def check_litellm_model(model: str) -> None:
    """Refuse model strings litellm cannot route, naming the fix."""
    litellm = import_litellm()
    try:
        litellm.get_llm_provider(model=model)
    except Exception:
        raise JurybenchError(
            f"unknown juror model '{model}': litellm cannot tell its provider.",
            hint="Use provider/model, e.g. openai/gpt-4o-mini, anthropic/claude-haiku-4-5, "
            "ollama/llama3, hosted_vllm/<name>; or fake/<name>, sim/<name>, replay/<source>.",
        ) from None


# Provider parameters that would break one-answer-per-request parsing, with the way to get the same.
UNSUPPORTED = {
    "n": "use samples=N",
    "stream": "answers are read whole",
    "stream_options": "answers are read whole",
    "tools": "jurors answer in JSON or free text",
    "tool_choice": "jurors answer in JSON or free text",
    "functions": "jurors answer in JSON or free text",
    "function_call": "jurors answer in JSON or free text",
    "parallel_tool_calls": "jurors answer in JSON or free text",
    "max_retries": "use retries=N (the engine retries with backoff)",
}


def check_juror(spec: JurorSpec, *, need_key: bool = True) -> None:
    """Refuse misspelt or unsupported parameters and a missing API key before any call."""
    label = f"juror '{spec.display_name}'"
    from jurybench.jurors._lookup import kind_of

    kind = kind_of(spec.model)
    if kind.parameters is not None:  # a kind that says which parameters it takes
        allowed = kind.parameters
        for key in spec.params:
            if key.startswith(EXTRA_PREFIX):
                raise JurybenchError(
                    f"{label}: extra.<key> parameters are for litellm jurors; {kind.prefix}/ jurors take none.",
                    hint=f"Valid parameters here: {', '.join(sorted(allowed | set(OPERATIONAL)))}.",
                )
            if key in UNSUPPORTED and key not in allowed:
                raise JurybenchError(
                    f"{label}: parameter '{key}' is not supported by jurybench.",
                    hint=UNSUPPORTED[key][:1].upper() + UNSUPPORTED[key][1:] + ".",
                )
            if key not in allowed:
                _unknown(label, key, allowed)
        if kind.check is not None:
            kind.check(spec, label)
        return
    litellm = import_litellm()
    check_litellm_model(spec.model)
    from jurybench.jurors._lean import transport_of

    transport_of(spec)  # transport=openai only where the endpoint speaks the OpenAI chat API
    try:
        provider_params = set(litellm.get_supported_openai_params(model=spec.model) or [])
    except Exception:
        provider_params = set()
    for key in spec.params:
        if key.startswith(EXTRA_PREFIX):
            if len(key) == len(EXTRA_PREFIX):
                raise JurybenchError(f"{label}: 'extra.' needs a parameter name, e.g. extra.repetition_penalty=1.1.")
            continue
        if key in UNSUPPORTED:
            raise JurybenchError(
                f"{label}: parameter '{key}' is not supported by jurybench.",
                hint=UNSUPPORTED[key][:1].upper() + UNSUPPORTED[key][1:] + ".",
            )
        if key in READING:
            continue
        if key not in provider_params:
            _unknown(label, key, (provider_params - set(UNSUPPORTED)) | READING, provider=spec.provider)
    if need_key:
        keys = missing_keys(spec)
        if keys:
            raise JurybenchError(
                f"{label}: no API key for {spec.provider}.",
                hint=f"Set {' or '.join(keys)} in the environment, or pass api_key=... in the juror.",
            )


def missing_keys(spec: JurorSpec) -> list[str]:
    """The environment variables a litellm juror needs for its key and does not find (none for
    an offline kind, or a juror given api_key=...)."""
    from jurybench.jurors._lookup import kind_of

    if kind_of(spec.model).parameters is not None or "api_key" in spec.options:
        return []
    try:
        missing = import_litellm().validate_environment(model=spec.model).get("missing_keys") or []
    except Exception:
        missing = []
    return [k for k in missing if "KEY" in k or "TOKEN" in k]


def check_jurors(jurors: list[JurorSpec], *, need_keys: bool = True) -> None:
    """Every juror checked (:func:`check_juror`); the API keys missing across the whole jury
    named together in one line, not one per attempt."""
    for spec in jurors:
        check_juror(spec, need_key=False)
    if not need_keys:
        return
    lacking = [(spec, keys) for spec in jurors if (keys := missing_keys(spec))]
    if len(lacking) == 1:
        check_juror(lacking[0][0])  # the one juror's own line
    if lacking:
        variables = sorted({" or ".join(keys) for _, keys in lacking})
        raise JurybenchError(
            f"no API key for {len(lacking)} jurors: "
            + ", ".join(f"'{spec.display_name}' ({spec.provider})" for spec, _ in lacking)
            + ".",
            hint=f"Set {', '.join(variables)} in the environment, or pass api_key=... in each juror.",
        )


def _unknown(label: str, key: str, allowed: frozenset[str] | set[str], provider: str | None = None) -> None:
    import difflib

    known = sorted(set(allowed) | set(OPERATIONAL))
    close = difflib.get_close_matches(key, [k for k in known + sorted(ANSWERING) if k != key], n=1)
    guess = f" (did you mean '{close[0]}'?)" if close else ""
    if key in ANSWERING and key not in allowed:  # a parameter of another kind of juror
        guess = " (it is not one of this kind of juror's parameters)"
    where = f" for provider '{provider}'" if provider else ""
    raise JurybenchError(
        f"{label}: unknown parameter '{key}'{guess}{where}.",
        hint=f"Valid: {', '.join(known)}"
        + ("; pass other provider parameters as extra.<key>=value." if provider else "."),
    )
