"""Test helpers shipped with the package: a loopback OpenAI-compatible stub server, which can
play a provider with rate limits."""

from jurybench.testing.stub import Batches, PromptCache, RateLimits, StubServer, free_port

__all__ = ["Batches", "PromptCache", "RateLimits", "StubServer", "free_port"]
