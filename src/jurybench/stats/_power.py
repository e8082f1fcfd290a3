"""Power analysis for paired designs (two arms judged on the same prompts).

The test is the paired t-test on the per-prompt differences between the arms' jury scores;
the effect is d_z = mean difference / SD of the differences. Power at n pairs, two-sided:
P(|T| > t_{1-alpha/2, n-1}) with T ~ noncentral t(n - 1, d_z * sqrt(n)). The Wilcoxon
signed-rank test needs about n / 0.955 pairs for the same power when the differences are
normal (its asymptotic relative efficiency, 3/pi); that figure is an approximation.

Juror noise: with k jurors per subject, the jury mean carries sigma_j^2 / k of juror noise
in each arm (sigma_j^2: the mean within-subject variance between jurors), so the variance of
a difference holds 2 sigma_j^2 / k of it; with k' jurors it becomes
var_diff - 2 sigma_j^2 / k + 2 sigma_j^2 / k' (juror errors independent across subjects).
"""

from __future__ import annotations

import math

WILCOXON_ARE = 3 / math.pi  # 0.955: the signed-rank test's efficiency against t under normality


def paired_power(n: int, d: float, alpha: float = 0.05) -> float:
    """Two-sided power of the paired t-test with n pairs for a standardised effect d (d_z)."""
    from scipy.stats import nct, t

    if n < 2:
        return float("nan")
    df = n - 1
    crit = float(t.ppf(1 - alpha / 2, df))
    nc = d * math.sqrt(n)
    return float(nct.sf(crit, df, nc) + nct.cdf(-crit, df, nc))


def pairs_needed(d: float, power: float = 0.8, alpha: float = 0.05, limit: int = 10_000_000) -> int | None:
    """The smallest n (>= 2) whose power reaches ``power``; None when d is 0 or n would pass ``limit``."""
    if d == 0 or not math.isfinite(d):
        return None
    d = abs(d)
    from scipy.stats import norm

    guess = max(2, int(((norm.ppf(1 - alpha / 2) + norm.ppf(power)) / d) ** 2))  # the normal approximation
    n = max(2, guess - 5)
    while paired_power(n, d, alpha) < power:
        n += 1 if n < 1000 else max(1, n // 1000)
        if n > limit:
            return None
    while n > 2 and paired_power(n - 1, d, alpha) >= power:  # the coarse steps may overshoot
        n -= 1
    return n


def power_summary(
    a: object,
    b: object,
    *,
    d: float | None = None,
    shift: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    juror_variance: float | None = None,
    jurors: int | None = None,
) -> dict[str, object]:
    """From paired pilot scores (arm a and arm b per pair): the observed difference, its SD, the
    correlation between the arms, the effect to detect (``d`` as d_z, or ``shift`` in score
    units, else the observed d_z), the pairs needed for the paired t-test and (approximately)
    the Wilcoxon test, the power of the pilot's own n, and the pairs needed with other jury sizes."""
    import numpy as np

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diff = a - b
    n = len(diff)
    mean, sd = float(diff.mean()), float(diff.std(ddof=1)) if n > 1 else float("nan")
    rho = float(np.corrcoef(a, b)[0, 1]) if n > 2 and a.std() > 0 and b.std() > 0 else float("nan")
    observed = mean / sd if sd > 0 else float("nan")
    if d is not None:
        target, source = float(d), "d_z given"
    elif shift is not None:
        target, source = float(shift) / sd if sd > 0 else float("nan"), f"shift {shift} / SD of the differences"
    else:
        target, source = observed, "the pilot's observed d_z"
    needed = pairs_needed(target, power, alpha) if math.isfinite(target) else None
    out: dict[str, object] = {
        "n_pairs": n,
        "mean_difference": mean,
        "sd_difference": sd,
        "correlation": rho,
        "observed_d_z": observed,
        "effect_d_z": target,
        "effect_from": source,
        "power_target": power,
        "alpha": alpha,
        "pairs_needed_t": needed,
        "pairs_needed_wilcoxon": None if needed is None else math.ceil(needed / WILCOXON_ARE),
        "power_now": paired_power(n, abs(target), alpha) if math.isfinite(target) and n > 1 else None,
    }
    if juror_variance is not None and jurors and sd > 0:
        noise = 2 * juror_variance / jurors
        out["juror_variance"] = juror_variance
        out["jurors"] = jurors
        by_size = {}
        for k in sorted({1, jurors, 2 * jurors, 4 * jurors}):
            var_k = sd**2 - noise + 2 * juror_variance / k
            if var_k <= 0:
                continue
            d_k = target * sd / math.sqrt(var_k)  # the same raw difference over the projected SD
            by_size[str(k)] = {
                "sd_difference": math.sqrt(var_k),
                "effect_d_z": d_k,
                "pairs_needed_t": pairs_needed(d_k, power, alpha),
            }
        out["by_jury_size"] = by_size
    return out
