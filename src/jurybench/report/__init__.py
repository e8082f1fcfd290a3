"""Tables and plots of statistics results."""

from jurybench.report._plots import PLOTS, draw

__all__ = ["PLOTS", "draw"]
