"""Test helpers shipped with the package: a loopback OpenAI-compatible stub server."""

from jurybench.testing.stub import StubServer

__all__ = ["StubServer"]
