"""Issue 82, item 8: bugs planted in a copy of the code passed the whole relevant test module.
Each check below is worked by hand from what the statistic returns, and each is run once more
against its planted bug (a monkeypatched copy of the function), which it must catch:

- stats bias: intervals from the normal instead of Student's t on clusters - 1;
- stats bias: Holm's correction replaced by Benjamini-Hochberg's;
- check --max-drift: the margin's sign flipped in the one-sided p-value;
- align: the optimizer called although its planned answer does not fit in what is left."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as st

from tests.conftest import run_cli
from tests.stats.test_bias import _store as bias_store
from tests.stats.test_drift import drifted  # noqa: F401  (the fixture: runs A and B of a drifted judge)


# -- stats bias ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def biased(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bias_store(tmp_path_factory.mktemp("mutants"))


def _bias(db: Path) -> dict[str, Any]:
    done = run_cli("stats", "bias", "--run", "r", "--against", "prompts", "--format", "json", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    return dict(json.loads(done.stdout)["result"])


def intervals_are_students_t(result: dict[str, Any]) -> None:
    """Each effect's half-width is t(1 - alpha/2, df) * se and its p 2 * t.sf(|b / se|, df), df =
    clusters - 1 (60 prompts: t = 2.0010 where the normal's 1.9600 would be 2 % narrower)."""
    alpha = result["alpha"]
    assert result["effects"]
    for e in result["effects"]:
        assert e["df"] == e["n_clusters"] - 1
        q = st.t.ppf(1 - alpha / 2, e["df"])
        assert e["ci_high"] - e["estimate"] == pytest.approx(q * e["se"], rel=1e-9)
        assert e["estimate"] - e["ci_low"] == pytest.approx(q * e["se"], rel=1e-9)
        assert e["p"] == pytest.approx(2 * st.t.sf(abs(e["estimate"] / e["se"]), e["df"]), rel=1e-9, abs=1e-300)


def holm_by_hand(result: dict[str, Any]) -> None:
    """Holm: the i-th smallest of m p-values times (m - i + 1), kept non-decreasing, at most 1;
    Benjamini-Hochberg's m / i would give other values on these effects (checked too, so the
    comparison can tell the two apart)."""
    ps = np.array([e["p"] for e in result["effects"]])
    m = len(ps)
    order = np.argsort(ps, kind="stable")
    holm = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        holm[i] = running
    bh = np.empty(m)
    smallest = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        smallest = min(smallest, m / (rank + 1) * ps[i])
        bh[i] = min(smallest, 1.0)
    assert not np.allclose(holm, bh), "these effects cannot tell Holm from BH"
    got = np.array([e["p_adjusted"] for e in result["effects"]])
    assert got == pytest.approx(holm, rel=1e-12, abs=1e-300)
    assert [e["significant"] for e in result["effects"]] == [bool(q <= result["alpha"]) for q in holm]


def test_bias_intervals_are_t_and_its_correction_is_holm(biased: Path) -> None:
    result = _bias(biased)
    intervals_are_students_t(result)
    holm_by_hand(result)


def _normal_effect_of(original: Callable[..., Any]) -> Callable[..., Any]:
    def planted(fit: Any, column: int, *args: Any) -> Any:
        effect = original(fit, column, *args)
        half = st.norm.ppf(0.5 + args[-1] / 2) * effect.se  # the planted bug: z where t belongs
        effect.ci_low, effect.ci_high = effect.estimate - half, effect.estimate + half
        return effect

    return planted


def test_the_bias_checks_catch_their_planted_bugs(biased: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jurybench.stats._bias as bias_module
    import jurybench.stats._multiple as multiple

    with monkeypatch.context() as patched:
        patched.setattr(bias_module, "effect_of", _normal_effect_of(bias_module.effect_of))
        with pytest.raises(AssertionError):
            intervals_are_students_t(_bias(biased))
    with monkeypatch.context() as patched:
        patched.setattr(multiple, "holm", multiple.benjamini_hochberg)
        with pytest.raises(AssertionError):
            holm_by_hand(_bias(biased))


# -- check --max-drift ----------------------------------------------------------------------------------
def _drift_row(db: Path) -> dict[str, Any]:
    done = run_cli("stats", "drift", "--from", "A", "--to", "B", "--format", "json", "--db", str(db))
    assert done.exit_code == 0, done.stderr
    rows = json.loads(done.stdout)["result"]["rows"]
    return next(r for r in rows if r["rater"] == "jury" and r["criterion"] == "relevance")


def drift_margin_by_hand(db: Path) -> None:
    """A margin just under the measured shift: the one-sided p of |shift| > margin is
    t.sf((|shift| - margin) / se, df), se from the shift's interval (its half-width over
    t(0.975, df), df = prompts - 1); near 0.5 here, so the gate passes. With the margin's sign
    flipped (|shift| + margin) the p would be near 0 and the gate would fail."""
    row = _drift_row(db)
    df = row["n_clusters"] - 1
    se = (row["shift_high"] - row["shift"]) / st.t.ppf(0.975, df)
    margin = abs(row["shift"]) - 0.2 * se
    done = run_cli(
        "check",
        "--run",
        "B",
        "--baseline-run",
        "A",
        "--max-drift",
        f"{margin:.12f}",
        "--max-drop",
        "5",
        "--format",
        "json",
        "--db",
        str(db),
    )
    assert done.exit_code in (0, 1), done.stdout + done.stderr
    shown = json.loads(done.stdout)
    assert not any(f.startswith("relevance:") for f in shown["failures"])  # not significantly beyond its margin
    (criterion,) = [c for c in shown["criteria"] if c["criterion"] == "relevance"]
    expected = st.t.sf((abs(row["shift"]) - float(f"{margin:.12f}")) / se, df)
    assert criterion["p_drift"] == pytest.approx(expected, rel=1e-6) and 0.3 < expected < 0.5


def test_check_max_drift_p_by_hand(drifted: Path) -> None:  # noqa: F811
    drift_margin_by_hand(drifted)


def test_the_drift_check_catches_a_flipped_margin(drifted: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    import jurybench.stats._drift as drift_module

    def flipped(value: float, se: float, size: float, df: int, prompts: int | None = None) -> float:
        return float(st.t.sf((abs(value) + size) / se, df)) if se > 1e-12 else 1.0

    monkeypatch.setattr(drift_module, "beyond_p", flipped)
    with pytest.raises(AssertionError):
        drift_margin_by_hand(drifted)


# -- align: the optimizer's planned price -------------------------------------------------------------------
@pytest.fixture
def optimizer(tmp_path: Path) -> Iterator[tuple[Any, Any, list[dict[str, Any]]]]:
    """The alignment's optimizer (gpt-4o's price behind the loopback stub) as align builds it."""
    from jurybench.api._align import _Calls, _optimizer
    from jurybench.store import connect
    from jurybench.testing.stub import StubServer

    store = tmp_path / "o.duckdb"
    connect(store).close()
    with StubServer("Description: Reward stories whose events follow from each other.") as stub:
        spec = _optimizer(f"openai/gpt-4o,api_base={stub.api_base},api_key=sk-test", 1.0)
        calls = _Calls.__new__(_Calls)  # only its store is read, for the transport
        calls.store = store
        yield calls.rewriter(spec, None), spec, stub.requests  # type: ignore[arg-type]


def optimizer_waits_for_its_planned_price(rewrite: Any, spec: Any, requests: list[dict[str, Any]]) -> None:
    """Its prompt costs P and its planned answer (REWRITE_TOKENS = 300 tokens at $10 per million,
    $0.003) R: with P + R - a cent's hundredth left it is not called; with P + R + a little it is,
    with max_tokens at most what is left can pay for (>= 300)."""
    from jurybench.engine import Budget

    planned_tokens = 300  # the optimizer's planned answer (api/_align.py REWRITE_TOKENS), by hand
    from jurybench.jurors import count_tokens, price_of

    messages = [{"role": "user", "content": "Rewrite the description. " * 40}]
    price = price_of(spec)
    assert price is not None and price.output == pytest.approx(10e-6)
    prompt = count_tokens(spec, [dict(m) for m in messages]) * Budget.SAFETY * price.input + price.per_call
    planned = prompt + planned_tokens * price.output
    assert rewrite(messages, planned - 1e-4) is None and requests == []
    answered = rewrite(messages, planned + 0.001)
    assert answered is not None and len(requests) == 1
    assert planned_tokens <= requests[0]["max_tokens"] <= math.floor((planned + 0.001 - prompt) / price.output)


def test_the_optimizer_is_called_only_when_its_planned_answer_fits(optimizer: Any) -> None:
    optimizer_waits_for_its_planned_price(*optimizer)


def test_the_optimizer_check_catches_a_call_that_ignores_the_planned_price(
    optimizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jurybench.api._align as align_module

    monkeypatch.setattr(align_module, "REWRITE_TOKENS", 0)  # the planted bug: any room at all is enough
    rewrite, spec, requests = optimizer
    with pytest.raises(AssertionError):
        optimizer_waits_for_its_planned_price(rewrite, spec, requests)
