"""Plots of recorded statistics (png, svg, and inline SVG for the viewer).

Internal: this stage's interface to the others, not a public API (docs/architecture.md, "What is public")."""

from jurybench.plots._plots import PLOT_OF_STAT, PLOTS, draw, plot_caption, svg

__all__ = ["PLOTS", "PLOT_OF_STAT", "draw", "plot_caption", "svg"]
