"""The model tier's server helper: how it tells the chat format the server chose, and the
pinned model's hash (issue 45, item 2)."""

from __future__ import annotations

from pathlib import Path

from jurybench.testing.llama import chat_format_used, sha256_of

GGUF_TEMPLATE = """llama_model_loader: - kv  31: tokenizer.chat_template str = {% for message in messages %}
Available chat formats from metadata: chat_template.default
Using gguf chat template: {% for message in messages %}{% if loop.first %}
INFO:     Uvicorn running on http://127.0.0.1:8765
"""
# Gemma 3 270M's GGUF has no chat template: the server guessed Llama 2's ([INST] <<SYS>>)
FALLBACK = """llama_model_loader: loaded meta data with 39 key-value pairs
Using fallback chat format: llama-2
INFO:     Uvicorn running on http://127.0.0.1:8765
"""


def test_the_chat_format_is_read_from_the_servers_log() -> None:
    assert chat_format_used(GGUF_TEMPLATE) == "gguf"
    assert chat_format_used(FALLBACK) == "fallback:llama-2"
    assert chat_format_used("Using chat format: gemma\n") == "gemma"
    assert chat_format_used("INFO: started\n") is None


def test_sha256_of_a_file(tmp_path: Path) -> None:
    file = tmp_path / "x.bin"
    file.write_bytes(b"abc")
    assert sha256_of(file) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
