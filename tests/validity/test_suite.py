"""The validity suite (issue 42, item 6): the quick suite's claims hold, and a claim outside
what it allows fails the suite (so it can fail)."""

from __future__ import annotations

import pytest

from jurybench.validity import __main__ as suite
from jurybench.validity._claims import Claim, rate


def test_the_quick_suite_holds_every_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert suite.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "claims hold (quick suite)" in out
    assert "false decisions <= alpha, clustered items" in out and "type-I error of the default" in out


def test_a_claim_outside_its_bounds_fails_the_suite(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # 30 false decisions of 300 at alpha 5 %: 10 %, interval 6.8-14 %: fails full and quick alike.
    broken = rate("demo", "false decisions <= alpha", 30, 300, high=0.05, quick=True)
    assert not broken.holds and broken.ci[0] > 0.05
    # 17 of 300 (5.7 %): over the claim at its point, but its interval reaches it: the quick
    # suite lets it pass, the full suite does not.
    assert rate("demo", "x", 17, 300, high=0.05, quick=True).holds
    assert not rate("demo", "x", 17, 300, high=0.05, quick=False).holds
    assert not Claim("demo", "nan", float("nan"), (0.0, 1.0), high=1.0).holds
    monkeypatch.setattr(suite, "run", lambda quick, areas: [broken])
    assert suite.main(["--quick"]) == 1
    assert "FAIL [demo]" in capsys.readouterr().out


def test_the_new_selection_rule_keeps_the_margin_where_the_old_one_did_not() -> None:
    """Issue 42, item 4 (fails before: the former rule was the default). On simulated pilots the
    former rule (a t-test over five fold means) chose a jury worse than the full jury by more than
    the margin on fresh items in many pilots; the non-inferiority rule in none of the same."""
    from jurybench.validity import _selection as v

    runs = [v.trial(seed) for seed in range(20)]
    assert sum(r["old_beyond"] for r in runs) >= 5
    assert sum(r["new_beyond"] for r in runs) == 0
    assert sum(r["new_worse"] for r in runs) <= 2
