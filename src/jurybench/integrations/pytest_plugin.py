"""The pytest plugin (entry point ``pytest11``): the fixture ``jurybench_store``, a store file in
the test's own temporary folder, for ``jurybench.integrations.assert_judged``."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def jurybench_store(tmp_path: Path) -> Path:
    """A judgment store for this test (kept with pytest's temporary folders, to look at after)."""
    return tmp_path / "jurybench.duckdb"
