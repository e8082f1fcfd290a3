"""The pytest plugin (issue 56, item 4): a project's test judges its responses with a jury and
asserts thresholds, as DeepEval's assert_test does; a missed threshold fails the test with the
check's report and the store kept to look at."""

from __future__ import annotations

from typing import Any

import pytest

pytest_plugins = ["pytester"]

PROJECT_TEST = """
from jurybench.integrations import assert_judged

ANSWERS = [
    {"item_id": "q1", "prompt": "Capital of Australia?", "response": "Canberra.", "reference": "Canberra"},
    {"item_id": "q2", "prompt": "Capital of Australia?", "response": "Canberra, in the ACT.", "reference": "Canberra"},
]


def test_answers_are_correct_enough(jurybench_store):
    judged = assert_judged(ANSWERS, rubric="correctness", jury=["sim/a", "sim/b"], minimum={"correctness": 1},
                           store=jurybench_store)
    assert 1 <= judged.means["correctness"] <= 5 and jurybench_store.exists()


def test_a_missed_threshold_fails(jurybench_store):
    assert_judged(ANSWERS, rubric="correctness", jury="sim/a", minimum={"correctness": "<=0"}, store=jurybench_store)
"""


def test_a_project_test_judges_and_asserts(pytester: Any) -> None:
    pytester.makepyfile(test_answers=PROJECT_TEST)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")  # the plugin comes by its entry point
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*check of run pytest:*", "*correctness*rule <= 0; FAIL*", "*jurybench view --db *"])
    # issue 86, item 4: the report shows the user's line, not about 40 lines of the plugin's source
    shown = result.stdout.str()
    assert "assert_judged(ANSWERS" in shown
    assert "jb.check(" not in shown and "_pytest.py" not in shown, shown


def test_the_plugin_is_registered_for_pytest() -> None:
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group="pytest11") if e.name == "jurybench"]
    assert found and found[0].value == "jurybench.integrations.pytest_plugin"


def test_a_minimum_is_needed(tmp_path: Any) -> None:
    from jurybench.integrations import assert_judged

    with pytest.raises(ValueError, match="name at least one criterion"):
        assert_judged([], rubric="correctness", jury="sim/a", minimum={}, store=tmp_path / "s.duckdb")
