"""Plots of recorded statistics (png, svg, and inline SVG for the viewer)."""

from jurybench.plots._plots import PLOT_OF_STAT, PLOTS, draw, plot_caption, svg

__all__ = ["PLOTS", "PLOT_OF_STAT", "draw", "plot_caption", "svg"]
