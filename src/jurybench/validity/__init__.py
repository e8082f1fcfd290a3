"""The validity suite: every guarantee jurybench states, checked by a simulation with known truth.

``python -m jurybench.validity`` (``make validity``) runs the full suite; ``--quick`` runs fewer
replications (still able to fail: a quick claim fails when its 95 % interval excludes what the
claim allows). Each line gives the claim, the measured rate or ratio with its interval, and
whether it holds; the exit status is 1 when any claim fails.

Internal: ``python -m jurybench.validity`` and ``make validity`` are the interface; ``run`` and
``Claim`` are what the tests read.
"""

from __future__ import annotations

from jurybench.validity._claims import Claim

AREAS = ("sequential", "gap", "selection", "calibration", "ppi", "tests", "bias", "drift", "align", "agents")

__all__ = ["Claim", "run"]


def run(quick: bool = False, areas: tuple[str, ...] = AREAS) -> list[Claim]:
    """The claims of the chosen areas, measured."""
    from jurybench.errors import JurybenchError
    from jurybench.validity import (
        _agents,
        _align,
        _bias,
        _calibration,
        _drift,
        _gap,
        _ppi,
        _selection,
        _sequential,
        _tests,
    )

    modules = {
        "sequential": _sequential,
        "gap": _gap,
        "selection": _selection,
        "calibration": _calibration,
        "ppi": _ppi,
        "tests": _tests,
        "bias": _bias,
        "drift": _drift,
        "align": _align,
        "agents": _agents,
    }
    unknown = [a for a in areas if a not in modules]
    if unknown:
        raise JurybenchError(f"no validity area {', '.join(unknown)}.", hint=f"Valid: {', '.join(AREAS)}.")
    return [claim for area in areas for claim in modules[area].claims(quick)]
