"""jurybench where teams already work: a pytest plugin whose assertion judges responses and
checks them against thresholds, as a unit test does (``jurybench.integrations.assert_judged``).

Internal: the names below are this stage's interface to the other stages (docs/architecture.md);
the pytest plugin (entry point ``pytest11``) and ``assert_judged`` are documented in
docs/python.md."""

from jurybench.integrations._pytest import Judged, assert_judged

__all__ = ["Judged", "assert_judged"]
