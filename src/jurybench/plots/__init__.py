"""Plots of recorded statistics (png, svg, and inline SVG for the viewer).

Internal: the names below are this stage's interface to the other stages (the order in
docs/architecture.md), not a public API; see "What is public" there."""

from jurybench.plots._plots import PLOT_OF_STAT, PLOTS, draw, plot_caption, svg

__all__ = ["PLOTS", "PLOT_OF_STAT", "draw", "plot_caption", "svg"]
