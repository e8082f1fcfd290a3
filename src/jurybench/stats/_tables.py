"""Flatten statistics results into rows for tables and CSV."""

from __future__ import annotations

from typing import Any


def _num(value: Any, spec: str = ".4f") -> str:
    return "n/a" if value is None else format(value, spec)


def _fmt(v: Any, digits: int) -> Any:
    return round(v, digits) if isinstance(v, float) else v


def flatten(
    name: str, result: dict[str, Any], *, digits: int | None = 6, summary: bool = True
) -> tuple[list[str], list[list[Any]]]:
    """Column names and rows for a statistic's result (floats rounded to ``digits``; None keeps them whole)."""
    rows: list[list[Any]] = []
    if name == "directional":
        cols = ["group", "category", "n", "n_zero", "D", "wilcoxon_statistic", "p", "p_holm", "p_bh"]
        for g, block in result["groups"].items():
            rows += [[g, *(r[c] for c in cols[1:])] for r in block["categories"]]
    elif name == "gap":
        cols = ["group", "gap", "ci_low", "ci_high", "pct_low", "pct_high", "n_pairs",
                *(f"p_vs_{g['group']}" for g in result["gaps"])]  # fmt: skip
        for g in result["gaps"]:
            rows.append([g["group"], g["gap"], g["ci_low"], g["ci_high"], g.get("pct_low"), g.get("pct_high"),
                         g["n_pairs"],
                         *(result["bootstrap_p"][g["group"]][o["group"]] for o in result["gaps"])])  # fmt: skip
    elif name == "consistency":
        cols = ["group", "n", "consistency", "both_zero", "no_difference_share"]
        for g, r in result["positional_consistency"].items():
            rows.append([g, r["n"], r["consistency"], r["both_zero"], result["no_difference_share"].get(g)])
    elif name == "robustness":
        cols = ["n", "spearman", "p"]
        rows.append([result["n"], result["spearman"], result["p"]])
    elif name == "friedman":
        cols = ["criterion", "n_blocks", "chi2", "p", "group", "mean", "mean_rank", "posthoc_holm"]
        for crit, r in result["criteria"].items():
            for g in r["means"]:
                post = "; ".join(f"{o}:{p:.3g}" for o, p in r["posthoc_holm"][g].items() if o != g)
                rows.append([crit, r["n_blocks"], r["chi2"], r["p"], g, r["means"][g], r["mean_rank"][g], post])
    elif name in ("ttest", "welch", "mannwhitney", "kendall"):
        keys: list[str] = []
        for crit, r in result["criteria"].items():
            entries = r.items() if name == "ttest" else [("", r)]
            for grp, values in entries:
                flat = {k: v for k, v in values.items() if not isinstance(v, list)}
                keys = keys or list(flat)
                rows.append([crit, grp, *(flat[k] for k in keys)])
        cols = ["criterion", "group", *keys]
    elif name == "cohens-d":
        cols = ["cell", "effect", "n_arm1", "n_arm2", "d_avg", "d_avg_low", "d_avg_high", "d_pooled", "d_pooled_low",
                "d_pooled_high", "raw", "raw_low", "raw_high", "mean_within_arm_sd", "d_human", "ratio", "baseline_in_ci", "pattern"]  # fmt: skip
        for cell, block in result["cells"].items():
            for effect, e in block["effects"].items():
                a = e.get("anchor", {})
                rows.append([cell, effect, *block["n"],
                             *(e[f][k] for f in ("d_avg", "d_pooled", "raw") for k in ("value", "ci_low", "ci_high")),
                             e["mean_within_arm_sd"], a.get("d_human"), a.get("ratio"), a.get("baseline_in_ci"), a.get("pattern")])  # fmt: skip
    elif name == "leaderboard":
        cols = ["board", "rank", "model", "rating", "ci_low", "ci_high", "win_rate_vs_baseline", "win_rate_low",
                "win_rate_high", "rank_low", "rank_high", "battles", "wins", "losses", "ties"]  # fmt: skip
        styled = any("style_coefficients" in b for b in result["boards"].values())
        if styled:  # style control: the adjusted ratings and win rates beside the raw ones
            cols[6:6] = ["rating_styled", "styled_low", "styled_high", "win_rate_styled", "win_rate_styled_low",
                         "win_rate_styled_high"]  # fmt: skip
        for board, b in result["boards"].items():
            rows += [[board, *(m.get(c) for c in cols[1:])] for m in b["models"]]
        if summary and styled:
            for board, b in result["boards"].items():
                coefs = b.get("style_coefficients") or {}
                rows.append([board, None, "style: " + ", ".join(f"{k} {v['coefficient']:+.3f}" for k, v in coefs.items())
                             + (f" (left out: {', '.join(b['style_left_out'])})" if b.get("style_left_out") else ""),
                             *([None] * (len(cols) - 3))])  # fmt: skip
    elif name == "winrate":
        cols = ["board", "model", "n_total", "n_wins", "n_wins_base", "n_draws", "win_rate", "standard_error",
                "discrete_win_rate"]  # fmt: skip
        if result.get("length_controlled"):
            cols += ["lc_win_rate", "length_slope"]
        for board, b in result["boards"].items():
            rows += [[board, *(m.get(c) for c in cols[1:])] for m in b["models"]]
    elif name == "power":
        cols = ["criterion", "n_pairs", "mean_difference", "sd_difference", "correlation", "observed_d_z",
                "effect_d_z", "power_now", "pairs_needed_t", "pairs_needed_wilcoxon"]  # fmt: skip
        for crit, r in result["criteria"].items():
            rows.append([crit, *(r.get(c) for c in cols[1:])])
            for k, proj in (r.get("by_jury_size") or {}).items() if summary else ():
                rows.append([f"  with {k} juror(s)", None, None, proj["sd_difference"], None, None,
                             proj["effect_d_z"], None, proj["pairs_needed_t"], None])  # fmt: skip
    elif name == "item-spearman":
        cols = ["first", "second", "n_items", "spearman", "p"]
        rows = [[r[c] for c in cols] for r in result["correlations"]]
    elif name == "disparity" and "models" in result:
        cols = [
            "model",
            "groups",
            "excluded",
            "gini",
            "gini_low",
            "gini_high",
            "mean_gap",
            "max_gap",
            "reference_premium",
        ]
        for model, r in result["models"].items():
            rows.append([model, " ".join(r["groups"]), " ".join(r["excluded_for_invalid_rate"]), r["gini"], *r["gini_ci"],
                         r["mean_gap"], r["max_gap"], r.get("reference_premium")])  # fmt: skip
    elif name == "disparity":
        categories = sorted(result["max_min_gap"])
        cols = ["group", "accuracy", "invalid_rate", *(f"acc_{c}" for c in categories)]
        for g, t in result["accuracy"].items():
            rows.append([g + (" (excluded)" if g in result["excluded_for_invalid_rate"] else ""), t["*"]["accuracy"],
                         t["*"]["invalid_rate"], *(t[c]["accuracy"] for c in categories)])  # fmt: skip
        rows.append(["max-min gap", None, None, *(result["max_min_gap"][c] for c in categories)])
        if summary:  # a line of text for people, not data
            rows.append([f"gini {_num(result['gini'])} [{_num(result['gini_ci'][0])}, {_num(result['gini_ci'][1])}]; "
                         f"mean gap {_num(result['mean_gap'])}; max gap {_num(result['max_gap'])}"
                         + (f"; {result['reference']} premium {_num(result['reference_premium'], '+.4f')}" if "reference" in result else ""),
                         None, None, *([None] * len(categories))])  # fmt: skip
    else:
        raise ValueError(name)
    if digits is None:
        return cols, rows
    return cols, [[_fmt(v, digits) for v in row] for row in rows]
