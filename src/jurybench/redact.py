"""Secrets never leave the process: every error text is redacted before it is stored,
logged, printed or returned.

Providers sometimes repeat the credential they were given in an error (OpenAI's
"Incorrect API key provided: sk-..."), and an exception's text travels far: into
``calls.reason``, the service's ``jobs.error``, stderr, the server log and HTTP answers.
Two nets catch it:

- values jurybench knows to be secret: every inline ``api_key`` a juror was given and
  every service token (:func:`register_secret`), and the values of the environment
  variables providers read credentials from (names ending in ``_KEY``, ``_TOKEN``,
  ``_SECRET``, ``_PASSWORD`` and the like, read afresh each time);
- anything shaped like a key: ``sk-...`` (OpenAI, Anthropic's ``sk-ant-...``), Google's
  ``AIza...``, Hugging Face's ``hf_...``, Groq's ``gsk_...``, ``Bearer <value>``, and
  ``api_key=<value>`` / ``"x-api-key": "<value>"`` pairs.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import traceback
from collections.abc import Mapping
from typing import overload

MASK = "[REDACTED]"
# Shorter values are not treated as secrets: replacing "True" or "1234" everywhere would
# garble messages without protecting anything.
MIN_SECRET_LENGTH = 8
_SECRET_ENV = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|SECRET_ACCESS_KEY|PASSWORD|PASSWD|CREDENTIALS?)$")
_SHAPES = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"\b(?:hf|gsk|xai|pplx|r8)[_-][A-Za-z0-9]{16,}"),
]
_BEARER = re.compile(r"(?i)\b(bearer)(\s+)(?=[A-Za-z0-9._~+/=\-]*[0-9_\-.~+/=])[A-Za-z0-9._~+/=\-]{8,}")
_PAIR = re.compile(
    r"(?i)\b((?:x-)?api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password)"
    r"(['\"]?\s*[:=]\s*['\"]?)([^\s'\",;&)}\]]{4,})"
)

# Credentials inside a URL: user-info (scheme://user:password@host) and query parameters named
# like a credential (?api_key=..., &token=..., &sig=...).
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@'\"]+@")
_URL_QUERY = re.compile(
    r"(?i)([?&][\w.\-]*(?:key|token|secret|password|passwd|auth|sig|signature|credential)=)[^&\s#'\"]+"
)

_lock = threading.Lock()
_registered: set[str] = set()
# The last answer of known_secrets(), with what it was read from: the registered secrets' count
# and the environment as it was (os.environ's own mapping, compared whole at C speed). Scanning
# the environment for every string redacted cost a server ~0.3 ms a string, most of a job
# status's CPU; a variable set or changed since is still seen on the next call.
_known: tuple[int, dict[object, object] | None, list[str]] | None = None


def register_secret(value: str | None) -> None:
    """Remember a secret for the rest of the process (an inline api_key, a service token)."""
    if value and len(value.strip()) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered.add(value.strip())


def known_secrets() -> list[str]:
    """Registered secrets and credential-like environment values, longest first."""
    global _known
    environment = getattr(os.environ, "_data", None)  # CPython's os.environ keeps its raw mapping there
    with _lock:
        known = _known
        if known is not None and environment is not None and known[0] == len(_registered) and known[1] == environment:
            return known[2]
        count, values = len(_registered), set(_registered)  # secrets are only ever added
    # Copied before the scan: a change made meanwhile is read on the next call.
    seen = dict(environment) if environment is not None else None
    for name, value in os.environ.items():
        if _SECRET_ENV.search(name.upper()) and len(value.strip()) >= MIN_SECRET_LENGTH:
            values.add(value.strip())
    found = sorted(values, key=len, reverse=True)
    with _lock:
        _known = (count, seen, found)
    return found


def redact(text: str) -> str:
    """``text`` with every known secret and every key-shaped token replaced by [REDACTED]."""
    if not text:
        return text
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    for shape in _SHAPES:
        text = shape.sub(MASK, text)
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", text)
    text = _URL_QUERY.sub(lambda m: f"{m.group(1)}{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    return _PAIR.sub(
        lambda m: m.group(0) if m.group(3) in (MASK, MASK[:-1]) else f"{m.group(1)}{m.group(2)}{MASK}", text
    )


@overload
def redact_value(value: Mapping[str, object]) -> dict[str, object]: ...
@overload
def redact_value(value: object) -> object: ...
def redact_value(value: object) -> object:
    """Strings redacted inside lists and mappings (an HTTP answer's body)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


_installed = False


def install_log_redaction() -> None:
    """Redact every log record of this process, message and traceback, whoever logs it
    (our loggers, uvicorn's, litellm's): records are redacted as they are made."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    make = logging.getLogRecordFactory()

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            record.msg = redact(record.getMessage())
            record.args = None
        except Exception:  # a record that cannot be formatted is left to logging's own handling
            return record
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
            record.exc_info = None
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    logging.setLogRecordFactory(factory)
