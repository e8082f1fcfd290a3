"""Migration 9: the juror views list each juror per run, with the rubric's name."""

from __future__ import annotations

from jurybench.store._migrations._base import Connection

# The views this migration changed; their current definitions are in store/_views.py.
VIEWS = ("juror_order_bias", "juror_position_stats")


def m009_juror_views_by_run(con: Connection) -> None:
    """``juror_order_bias`` and ``juror_position_stats`` were per rubric x juror over every run:
    two runs with the same juror (or two jurors with the same name in different runs) gave rows
    that could not be told apart. They are now per run x juror and carry the rubric's name.
    The views are made from store/_views.py once the migrations are applied."""
