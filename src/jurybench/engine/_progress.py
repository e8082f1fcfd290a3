"""A run's progress: the bar (done / total, ETA, calls per second, cost, outcomes) and the
counts and cost it keeps whether the bar is shown or not."""

from __future__ import annotations

import time
from collections import Counter

from jurybench.engine._budget import CostTally


class RunProgress:
    """A rich progress bar: done / total, ETA, calls per second, cost, invalid count."""

    def __init__(self, total: int, cached: int, enabled: bool) -> None:
        self.enabled = enabled and total > 0
        self.counts: Counter[str] = Counter()
        self.errors: Counter[tuple[str, str]] = Counter()
        self.skipped = 0
        self.stopped = False  # asked to stop early (options.hooks.stop)
        self.cost = CostTally()
        self.started = time.perf_counter()
        if not self.enabled:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]judging"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[rate]:.1f} calls/s"),
            TextColumn("{task.fields[cost]}"),
            TextColumn("invalid {task.fields[invalid]} · refusal {task.fields[refusal]} · error {task.fields[error]}"),
            TextColumn("{task.fields[note]}"),
            transient=False,
        )
        self.task_id = self.progress.add_task(
            "judging",
            total=total,
            completed=cached,
            rate=0.0,
            cost="",
            invalid=0,
            refusal=0,
            error=0,
            note="",
        )
        self.progress.start()

    def advance(self, status: str, cost: float | None, juror: str = "", shared: bool = False) -> None:
        self.counts[status] += 1
        if not shared:  # another run asked and paid for a shared answer
            self.cost.add(juror, cost, status)
        if not self.enabled:
            return
        done = sum(self.counts.values())
        rate = done / max(time.perf_counter() - self.started, 1e-9)
        self.progress.update(
            self.task_id,
            advance=1,
            rate=rate,
            cost=self.cost.text(),
            invalid=self.counts["invalid"],
            refusal=self.counts["refusal"],
            error=self.counts["error"],
        )

    def reuse(self, n: int) -> None:
        """Calls answered before (from the store): counted as done, not made."""
        if self.enabled and n:
            self.progress.update(self.task_id, advance=n)

    def note(self, text: str) -> None:
        """A line of state beside the bar (e.g. the batches submitted, in progress, collected)."""
        if self.enabled:
            self.progress.update(self.task_id, note=text)

    def skip(self) -> None:
        """A task not attempted because its juror is unusable."""
        self.skipped += 1
        if self.enabled:
            self.progress.update(self.task_id, advance=1)

    def stop(self) -> None:
        if self.enabled:
            self.progress.stop()
