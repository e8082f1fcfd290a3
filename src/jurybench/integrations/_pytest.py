"""Judging inside a test: ``assert_judged`` imports the responses, judges them with a jury,
checks the jury's mean per criterion against thresholds (``jurybench check``'s rules), and
fails the test with the check's report when one is missed. The store is kept, so a failing
test leaves every judgment to look at (``jurybench view --db FILE``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Judged:
    """What ``assert_judged`` did: the run, its store, the check (``jurybench.CheckResult``)."""

    run: str
    store: Path
    check: Any

    @property
    def means(self) -> dict[str, float]:
        """The jury's mean per criterion."""
        return {str(r["criterion"]): float(r["mean"]) for r in self.check.table.to_dict(orient="records")}


def _rule(criterion: str, bound: object) -> str:
    """``{"correctness": 4}`` is ``correctness>=4``; a text rule (``"<=2"``) is kept as it is."""
    if isinstance(bound, str):
        text = bound.strip()
        return f"{criterion}{text}" if text[:2] in (">=", "<=") else f"{criterion}>={text}"
    return f"{criterion}>={bound}"


def assert_judged(
    responses: Sequence[Mapping[str, object]],
    *,
    rubric: str,
    jury: Sequence[str] | str,
    minimum: Mapping[str, object],
    store: str | Path,
    run: str = "pytest",
    **score: Any,
) -> Judged:
    """Judge ``responses`` (mappings with ``item_id`` and ``response``, and ``prompt``,
    ``reference``, ``context`` ... as an items file has them) with ``rubric`` by ``jury`` (juror
    strings, or a jury file), and assert the jury's mean of each criterion of ``minimum``
    (``{"correctness": 4}`` or ``{"harm": "<=2"}``) holds. ``store``: the DuckDB file kept for
    inspection (pytest's ``jurybench_store`` fixture gives one per test). Other keyword
    arguments go to ``jurybench.score`` (``max_cost``, ``samples``...). Raises AssertionError
    with the check's report when a threshold is missed, or when the run made no valid judgment."""
    # pytest leaves this frame out of a failure's report: the user's line and the check's report
    # are what shows, not this function's source
    __tracebackhide__ = True
    import jurybench as jb

    if not minimum:
        raise ValueError("minimum: name at least one criterion and its threshold, e.g. {'correctness': 4}.")
    path = Path(store)
    with jb.open(path) as opened:
        opened.import_items([dict(r) for r in responses])
    ids = [str(r["item_id"]) for r in responses]
    jurors = [jury] if isinstance(jury, str) and not jury.endswith((".yaml", ".yml")) else jury
    done = jb.score(path, rubric=rubric, jury=jurors, ids=ids, run=run, progress=False, **score)
    if done.status not in ("finished", "finished_with_errors"):
        raise AssertionError(f"jurybench run {done.run_id} ended {done.status}: {done.summary()}")
    checked = jb.check(path, run=done.run_id, min=[_rule(str(c), b) for c, b in minimum.items()])
    if not checked.passed:
        raise AssertionError("\n".join(checked.lines()) + f"\n(judgments kept in {path}: jurybench view --db {path})")
    return Judged(done.run_id, path, checked)
