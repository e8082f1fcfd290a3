"""Juror tests against the loopback stub run over both transports (issue 55): litellm's and the
lean one for OpenAI-compatible endpoints (``JURYBENCH_TRANSPORT=auto``: the lean one wherever it
applies, litellm's elsewhere, as for instructor)."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["litellm", "auto"])
def both_transports(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("JURYBENCH_TRANSPORT", request.param)
    return str(request.param)
