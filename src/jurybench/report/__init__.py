"""Tables and plots of statistics results."""

from jurybench.report._plots import PLOT_OF_STAT, PLOTS, draw, plot_caption, svg

__all__ = ["PLOTS", "PLOT_OF_STAT", "draw", "plot_caption", "svg"]
