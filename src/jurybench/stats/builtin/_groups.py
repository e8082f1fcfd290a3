"""The table shared by the statistics that test each criterion's groups (ttest, welch,
mannwhitney, kendall): one row per criterion (and group), the test's figures as columns."""

from __future__ import annotations

from typing import Any


def per_criterion(result: dict[str, Any], by_group: bool) -> tuple[list[str], list[list[object]]]:
    keys: list[str] = []
    rows: list[list[object]] = []
    for crit, r in result["criteria"].items():
        entries = r.items() if by_group else [("", r)]
        for grp, values in entries:
            flat = {k: v for k, v in values.items() if not isinstance(v, list)}
            keys = keys or list(flat)
            rows.append([crit, grp, *(flat[k] for k in keys)])
    return ["criterion", "group", *keys], rows


def by_criterion(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    """A statistic's table: one row per criterion."""
    return per_criterion(result, by_group=False)


def by_criterion_and_group(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[object]]]:
    """A statistic's table: one row per criterion and group."""
    return per_criterion(result, by_group=True)
