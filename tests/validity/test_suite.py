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
    assert "[jury select]" in out and "[stats friedman]" in out and "[stats cohens-d]" in out
    assert "[stats bias]" in out and "[stats drift]" in out and "[align]" in out


def test_an_unknown_area_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert suite.main(["--quick", "weights"]) == 2
    err = capsys.readouterr().err
    assert "no validity area weights" in err and "Traceback" not in err


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
    the margin on fresh items in some pilots and was significantly worse in half; the
    non-inferiority rule in none and a tenth."""
    from jurybench.validity import _selection as v

    runs = [v.trial(seed) for seed in range(20)]
    assert runs[6]["old_beyond"] and not runs[6]["new_beyond"]  # seed 6: the former rule went past the margin
    assert sum(r["new_beyond"] for r in runs) == 0
    # Significantly worse than the full jury on 200 fresh items: the former rule's choice in 10 of
    # the 20 pilots, the non-inferior one's in 2; and a jury as cheap as the planted pair in 16.
    assert sum(r["old_worse"] for r in runs) >= 8 and sum(r["new_worse"] for r in runs) <= 3
    assert sum(r["new_cheap"] for r in runs) >= 12
