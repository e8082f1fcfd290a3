"""Tables and plots of statistics results."""

from jurybench.report._plots import PLOTS, draw
from jurybench.report._tables import flatten

__all__ = ["PLOTS", "draw", "flatten"]
