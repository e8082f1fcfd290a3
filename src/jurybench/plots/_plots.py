"""Plots of statistics results (matplotlib, drawn off-screen)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import ModuleType

    from duckdb import DuckDBPyConnection as Connection
    from matplotlib.figure import Figure

PLOTS = ("directional", "gap", "posthoc", "cohens-d", "disparity", "leaderboard", "bias")


def _pyplot() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # SVG text stays text (searchable, selectable)
    import matplotlib.pyplot as plt

    return plt


def draw(name: str, result: dict[str, object], output: Path, *, alpha: float = 0.05, caption: str = "") -> Path:
    """Draw ``result`` of statistic ``name`` to ``output`` (.png or .svg). ``caption`` (what the
    figure shows: run, rubric, jury, the recorded result) is printed under it."""
    from jurybench.errors import JurybenchError

    if output.suffix.lower() not in (".png", ".svg"):
        raise JurybenchError(f"{output}: plots are written as .png or .svg.")
    output.parent.mkdir(parents=True, exist_ok=True)
    _save(name, result, output, alpha=alpha, caption=caption)
    return output


def _save(
    name: str, result: dict[str, Any], target: Path | IO[str], *, alpha: float, caption: str, fmt: str | None = None
) -> None:
    """Draw the figure with its caption and save it to ``target`` (a path, or a file object with ``fmt``)."""
    plt = _pyplot()
    fig = {
        "directional": _directional,
        "gap": _gap,
        "posthoc": _posthoc,
        "cohens-d": _cohens_d,
        "disparity": _disparity,
        "leaderboard": _leaderboard,
        "bias": _bias,
    }[name](result, alpha)
    from jurybench.stats import no_valid_answers_note

    notes = [caption] if caption else []
    silent = no_valid_answers_note(result)
    if silent:
        notes.append(silent[0].upper() + silent[1:])
    if name == "gap" and any(
        not g.get("pct_low", g["ci_low"]) <= g["gap"] <= g.get("pct_high", g["ci_high"]) for g in result["gaps"]
    ):
        notes.append(
            "A point outside its percentile interval is expected: a bootstrap of a sum of |D| is biased "
            "upward. The bias-aware interval (grey) contains it."
        )
    if notes:  # under the figure (below its axis labels); the tight bounding box takes it in
        import textwrap

        width = max(60, int(fig.get_figwidth() * 14))
        text = "\n".join(line for note in notes for line in textwrap.wrap(note, width))
        fig.canvas.draw()  # where the lowest label ends, in figure coordinates
        lowest = fig.get_tightbbox(fig.canvas.get_renderer()).y0 / fig.get_figheight()  # type: ignore[attr-defined]  # Agg's canvas
        fig.text(0.0, lowest - 0.02, text, fontsize=8, color="#333333", ha="left", va="top")
    fig.savefig(target, dpi=120, bbox_inches="tight", format=fmt)
    plt.close(fig)


def _directional(result: dict[str, Any], alpha: float) -> Figure:
    import matplotlib.pyplot as plt

    groups = result["groups"]
    fig, axes = plt.subplots(
        1,
        len(groups),
        figsize=(5 * len(groups), 0.35 * max(len(b["categories"]) for b in groups.values()) + 1.5),
        squeeze=False,
        sharey=True,
    )
    for ax, (group, block) in zip(axes[0], groups.items(), strict=True):
        cats = [r["category"] for r in block["categories"]]
        values = [r["D"] for r in block["categories"]]
        colors = []
        for r in block["categories"]:
            significant = r["p_holm"] is not None and r["p_holm"] == r["p_holm"] and r["p_holm"] < alpha
            colors.append(("#c0392b" if r["D"] > 0 else "#2471a3") if significant else "#bbbbbb")
        ax.barh(cats, values, color=colors)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.invert_yaxis()
        ax.set_title(f"{group} (n={block['n_pairs']})")
        ax.set_xlabel("D = mean symmetrized score (A - B)")
    fig.suptitle(f"Directional differences; coloured: Holm p < {alpha} (red: more in A, blue: more in B)")
    return fig


def _gap(result: dict[str, Any], alpha: float) -> Figure:
    import matplotlib.pyplot as plt

    gaps = sorted(result["gaps"], key=lambda g: g["gap"])
    fig, ax = plt.subplots(figsize=(6, 0.4 * len(gaps) + 1.5))
    names = [g["group"] for g in gaps]
    values = [g["gap"] for g in gaps]
    # The bias-aware interval (the default) contains the estimate; the percentile interval
    # published studies report need not (|.| pushes the replicates up), so both are drawn as
    # segments, the percentile one thin and offset, when the result has it.
    ax.hlines(
        names,
        [g["ci_low"] for g in gaps],
        [g["ci_high"] for g in gaps],
        color="#7f8c8d",
        linewidth=3,
        label="bias-aware 95% CI" if "pct_low" in gaps[0] else "95% bootstrap CI",
    )
    if "pct_low" in gaps[0]:
        ys = [i - 0.18 for i in range(len(gaps))]
        ax.hlines(
            ys,
            [g["pct_low"] for g in gaps],
            [g["pct_high"] for g in gaps],
            color="#c0392b",
            linewidth=1,
            label="percentile 95% CI (as published)",
        )
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2, fontsize=7, frameon=False)
    ax.plot(values, names, "o", color="#2c3e50")
    ax.set_xlabel("treatment gap G = sum |D_j| with 95% bootstrap intervals")
    ax.set_title("Treatment gap by group")
    return fig


def _posthoc(result: dict[str, Any], alpha: float) -> Figure:
    import matplotlib.pyplot as plt
    import numpy as np

    if "gaps" in result and "p" in result:
        matrices = {f"{result.get('test', 'permutation')} p (G_a = G_b)": result["p"]}
    elif "bootstrap_p" in result:  # a result saved before the permutation test
        matrices = {"bootstrap p (G_a = G_b)": result["bootstrap_p"]}
    else:
        matrices = {f"{c}: Holm post-hoc p": r["posthoc_holm"] for c, r in result["criteria"].items()}
    size = max(4.0, 0.55 * max(len(m) for m in matrices.values()) + 1.5)
    fig, axes = plt.subplots(1, len(matrices), figsize=(size * len(matrices), size), squeeze=False)
    for ax, (title, m) in zip(axes[0], matrices.items(), strict=True):
        names = list(m)
        grid = np.array([[m[a][b] for b in names] for a in names])
        im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis_r")
        ax.set_xticks(range(len(names)), names, rotation=60, ha="right")
        ax.set_yticks(range(len(names)), names)
        for i in range(len(names)):
            for j in range(len(names)):
                p = grid[i, j]
                label = "<.001" if p < 0.001 else (f"{p:.3f}" if p < 0.01 else f"{p:.2f}").lstrip("0")
                # viridis_r: small p is light (black text), large p dark (white text).
                ax.text(
                    j, i, label, ha="center", va="center", fontsize=6, color="white" if grid[i, j] > 0.5 else "black"
                )
        ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8)
    return fig


def _cohens_d(result: dict[str, Any], alpha: float) -> Figure:
    import matplotlib.pyplot as plt

    cells = result["cells"]
    effects = sorted({e for c in cells.values() for e in c["effects"]})
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(effects) * len(cells) + 1.5))
    y = 0
    labels = []
    colors = {
        "concordance": "#27ae60",
        "suppression": "#2471a3",
        "amplification": "#c0392b",
        "reorganization": "#8e44ad",
    }
    for cell, block in cells.items():
        for effect in effects:
            e = block["effects"].get(effect)
            if e is None:
                continue
            d = e["d_avg"]
            anchor = e.get("anchor")
            color = colors.get(anchor["pattern"], "#2c3e50") if anchor else "#2c3e50"
            ax.hlines(y, d["ci_low"], d["ci_high"], color=color, linewidth=2)
            ax.plot(d["value"], y, "o", color=color)
            if anchor:
                ax.plot(anchor["d_human"], y, marker="|", color="black", markersize=12)
            labels.append(f"{cell} · {effect}")
            y += 1
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.axvline(0, color="grey", linewidth=0.6)
    ax.invert_yaxis()
    ax.set_xlabel("Cohen's d (M1 - M2)/((SD1 + SD2)/2), 95% CI; | = human baseline")
    ax.set_title(
        "Effects by cell; colour = pattern (green concordance, blue suppression, red amplification, purple reorganization)",
        fontsize=8,
    )
    return fig


def _bias(result: dict[str, Any], alpha: float) -> Figure:
    """A panel per juror (and the jury): each criterion x feature effect with its interval, the
    findings (adjusted p <= alpha) in red."""
    import matplotlib.pyplot as plt

    effects = result["effects"]
    raters = list(dict.fromkeys(e["rater"] for e in effects))
    rows = list(dict.fromkeys((e["criterion"], e["feature"]) for e in effects))
    fig, axes = plt.subplots(
        1,
        len(raters),
        figsize=(2.6 * len(raters) + 2.4, 0.28 * len(rows) + 1.6),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    where = {r: k for k, r in enumerate(rows)}
    for ax, rater in zip(axes[0], raters, strict=True):
        for e in (e for e in effects if e["rater"] == rater):
            y = where[(e["criterion"], e["feature"])]
            color = "#c0392b" if e["significant"] else "#2c3e50"
            ax.hlines(y, e["ci_low"], e["ci_high"], color=color, linewidth=2)
            ax.plot(e["estimate"], y, "o", color=color, markersize=4)
        ax.axvline(0, color="grey", linewidth=0.6)
        ax.set_title(rater, fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_yticks(range(len(rows)), [f"{c} · {f}" for c, f in rows], fontsize=7)
    axes[0][0].invert_yaxis()
    against = sorted(set(result.get("against", {}).values()))
    fig.suptitle(
        "Effect on the score per unit of each feature"
        + (" (the juror's error against the humans)" if against == ["humans"] else "")
        + f", {100 * (1 - alpha):g} % intervals; red: {result.get('correction', 'holm')}-adjusted p <= {alpha:g}",
        fontsize=8,
    )
    return fig


def _leaderboard(result: dict[str, Any], alpha: float) -> Figure:
    """Ratings (Elo scale) with their bootstrap intervals, best on top; one colour per board
    (the jury, or each juror), models ordered by the first board."""
    import matplotlib.pyplot as plt

    boards = list(result["boards"].items())
    order = [m["model"] for m in boards[0][1]["models"]]  # best first
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(order) + 1.6))
    colors = ["#2c3e50", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#16a085"]
    step = 0.6 / max(len(boards), 1)
    for k, (name, board) in enumerate(boards[:6]):
        by = {m["model"]: m for m in board["models"]}
        ys = [i + (k - (len(boards[:6]) - 1) / 2) * step for i in range(len(order))]
        lows = [by[m]["ci_low"] if by[m]["ci_low"] is not None else by[m]["rating"] for m in order]
        highs = [by[m]["ci_high"] if by[m]["ci_high"] is not None else by[m]["rating"] for m in order]
        ax.hlines(ys, lows, highs, color=colors[k % len(colors)], linewidth=2)
        ax.plot([by[m]["rating"] for m in order], ys, "o", color=colors[k % len(colors)], label=name)
    ax.set_yticks(range(len(order)), order)
    ax.invert_yaxis()
    first = boards[0][1]
    ax.axvline(1000, color="grey", linewidth=0.6)
    ax.set_xlabel(
        f"Bradley-Terry rating (Elo scale, {first['anchor']} = 1000), 95% bootstrap CI over "
        f"{result.get('resample', 'prompts')}"
    )
    ax.set_title(f"Leaderboard ({result.get('category', '')}; {first['n_battles']} battles)")
    if len(boards) > 1:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=min(3, len(boards)), fontsize=7, frameon=False)
    return fig


def _disparity(result: dict[str, Any], alpha: float) -> Figure:
    import matplotlib.pyplot as plt

    if "models" in result:
        return _disparity_by_model(result["models"])
    result = _defined_figures(result)
    left_out = set(result.get("excluded_for_invalid_rate") or [])
    every = list(result["accuracy"])  # the groups kept and those left out for their invalid rate
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 0.35 * max(len(every), len(result["max_min_gap"])) + 2))
    labels = [f"{g} (left out: invalid rate)" if g in left_out else g for g in every]
    acc = [result["accuracy"][g]["*"]["accuracy"] for g in every]
    bars = left.barh(labels, acc, color=["#bbbbbb" if g in left_out else "#2c3e50" for g in every])
    for bar, group in zip(bars, every, strict=True):
        if group in left_out:
            bar.set_hatch("//")
    left.set_xlim(0, 1)
    left.set_title(
        f"Accuracy (invalid = wrong); Gini {result['gini']:.3f} [{result['gini_ci'][0]:.3f}, {result['gini_ci'][1]:.3f}]",
        fontsize=9,
    )
    cats = sorted(result["max_min_gap"])
    right.barh(cats, [result["max_min_gap"][c] for c in cats], color="#c0392b")
    right.set_title(f"Max - min accuracy gap across groups (mean {result['mean_gap']:.3f})", fontsize=9)
    return fig


def _defined_figures(result: dict[str, Any]) -> dict[str, Any]:
    """A recorded result with its undefined figures (null in JSON: no valid answers, or too few
    groups) as NaN, which matplotlib leaves out of a plot instead of failing on."""

    def number(value: object) -> float:
        return float(value) if isinstance(value, int | float) else float("nan")

    return {
        **result,
        "gini": number(result.get("gini")),
        "gini_ci": [number(v) for v in (result.get("gini_ci") or [None, None])],
        "mean_gap": number(result.get("mean_gap")),
        "max_gap": number(result.get("max_gap")),
    }


def _disparity_by_model(models: dict[str, Any]) -> Figure:
    import matplotlib.pyplot as plt

    keys = list(models)

    def label(model: str) -> str:
        # A model whose groups were left out is measured on fewer groups (it can look fairer
        # than it is): the label says how many. One without a valid answer has no figures at all.
        if models[model].get("no_valid_answers"):
            return f"{model}\n(no valid answers)"
        out = models[model].get("excluded_for_invalid_rate") or []
        total = len(models[model].get("groups") or []) + len(out)
        return f"{model}\n({len(out)} of {total} groups left out: invalid rate)" if out else model

    names = [label(m) for m in keys]
    models = {label(m): _defined_figures(models[m]) for m in keys}
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 0.55 * len(names) + 2), sharey=True)
    y = list(range(len(names)))  # rows by position: a model without figures keeps its row
    left.hlines(
        y,
        [models[m]["gini_ci"][0] for m in names],
        [models[m]["gini_ci"][1] for m in names],
        color="#7f8c8d",
        linewidth=2,
    )
    empty = [i for i, m in enumerate(names) if models[m].get("no_valid_answers")]
    full = [i for i, (m, k) in enumerate(zip(names, keys, strict=True)) if m == k]
    partial = [i for i in y if i not in full and i not in empty]
    left.plot([models[names[i]]["gini"] for i in full], full, "o", color="#2c3e50")
    if partial:
        left.plot(
            [models[names[i]]["gini"] for i in partial],
            partial,
            "o",
            markerfacecolor="white",
            color="#c0392b",
            label="groups left out",
        )
        left.legend(fontsize=8)
    for axis in (left, right):
        for i in empty:
            axis.text(
                0.5,
                i,
                "no valid answers",
                transform=axis.get_yaxis_transform(),
                ha="center",
                va="center",
                fontsize=8,
                color="#7f8c8d",
            )
    left.set_yticks(y, names)
    left.set_ylim(-0.6, len(names) - 0.4)
    left.set_title("Inequity: Gini of per-group accuracy (95% CI)", fontsize=9)
    right.barh([i - 0.2 for i in y], [models[m]["mean_gap"] for m in names], height=0.4, label="mean", color="#e67e22")
    right.barh([i + 0.2 for i in y], [models[m]["max_gap"] for m in names], height=0.4, label="max", color="#c0392b")
    right.set_title("Max - min accuracy gap across groups, over categories", fontsize=9)
    right.legend(fontsize=8)
    return fig


# The plot drawn for a recorded statistic (stats_results.name -> plot name).
PLOT_OF_STAT = {
    "directional": "directional",
    "gap": "gap",
    "friedman": "posthoc",
    "cohens-d": "cohens-d",
    "disparity": "disparity",
    "leaderboard": "leaderboard",
    "bias": "bias",
}


def svg(name: str, result: dict[str, object], *, alpha: float = 0.05, caption: str = "") -> str:
    """The plot of a recorded statistic as SVG text, for pages and reports (``name`` is the
    statistic's name as recorded; see ``PLOT_OF_STAT``)."""
    import io

    buffer = io.StringIO()
    _save(PLOT_OF_STAT[name], result, buffer, alpha=alpha, caption=caption, fmt="svg")
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # without the XML prolog and doctype: it is embedded in HTML


def plot_caption(
    con: Connection, name: str, run_id: str | None, params: str | None, result_id: str, created: object
) -> str:
    """What a figure shows, for its caption: the statistic and its parameters, the run with its
    rubric and jury, and the recorded result it was drawn from."""
    shown = {k: v for k, v in json.loads(params or "{}").items() if v not in (None, "", [], False) and k != "run"}
    parts = [f"{name}" + (f" ({', '.join(f'{k}={v}' for k, v in shown.items())})" if shown else "")]
    if run_id:
        row = con.execute(
            """SELECT ru.name, ru.version, j.name, j.aggregation, j.quorum, j.definition
               FROM runs r JOIN rubrics ru USING (rubric_hash) LEFT JOIN juries j ON j.jury_id = r.jury_id
               WHERE r.run_id = ?""",
            [run_id],
        ).fetchall()
        if row:
            rubric, version, jury_name, rule, quorum, definition = row[0]
            jurors = [j.get("name", "?") for j in json.loads(definition or "{}").get("jurors", [])]
            jury = (
                f"jury {jury_name + ': ' if jury_name else ''}{rule} of {', '.join(jurors)}, quorum {quorum}"
                if jurors
                else "jury unknown"
            )
            parts.append(f"run {run_id}; rubric {rubric} v{version}; {jury}")
        else:
            parts.append(f"run {run_id}")
    parts.append(f"stats_results {result_id[:12]}, {str(created)[:19]}")
    return " | ".join(parts)
