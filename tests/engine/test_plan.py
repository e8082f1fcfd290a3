"""score --plan: per juror, calls left after the cache, tokens and cost; nothing called or written."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from jurybench.engine import EngineOptions, score
from jurybench.jurors import parse_juror
from jurybench.rubric import load_rubric
from jurybench.testing import StubServer
from tests.conftest import FULL, ITEMS_CSV, run_cli, write


def _plan(result: Any) -> dict[str, Any]:
    return {p.juror: p for p in result.plan}


def test_plan_counts_prices_and_leaves_the_store_alone(db_path: Path, tmp_path: Path) -> None:
    assert run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db_path)).exit_code == 0
    assert run_cli("score", "--rubric", "story-quality", "--juror", "fake/a", "--db", str(db_path)).exit_code == 0
    from jurybench.store import connect

    con = connect(db_path)
    before = con.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM calls)").fetchone()
    con.close()
    jurors = [parse_juror("fake/a"), parse_juror("openai/gpt-4o-mini"), parse_juror("openai/no-such-price-model")]
    result = score(db_path, load_rubric("story-quality"), jurors, options=EngineOptions(plan_only=True, progress=False))
    plans = _plan(result)
    assert result.status == "planned"
    # fake/a answered all 3 items before: all cached, free.
    assert (plans["fake/a"].calls, plans["fake/a"].cached, plans["fake/a"].cost_usd) == (0, 3, 0.0)
    mini = plans["openai/gpt-4o-mini"]
    assert (mini.calls, mini.cached) == (3, 0)
    # No earlier answers: 12 tokens per criterion x 6 + 120 for the rationale + 10 = 202 a call.
    assert mini.output_tokens == 3 * 202 and mini.output_basis == "from the rubric's answer format"
    # gpt-4o-mini in litellm's map: $0.15 / $0.60 per million tokens, batch half of that.
    assert mini.cost_usd == pytest.approx(mini.input_tokens * 0.15e-6 + 606 * 0.60e-6)
    assert mini.cost_batch_usd == pytest.approx(mini.cost_usd / 2)
    assert mini.input_tokens > 3 * 100  # the rendered prompts, counted
    unknown = plans["openai/no-such-price-model"]
    assert unknown.cost_usd is None and unknown.cost_batch_usd is None and unknown.calls == 3
    con = connect(db_path)
    after = con.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM calls)").fetchone()
    assert after == before  # nothing called, nothing written


def test_plan_cli_says_unknown_never_zero_and_needs_no_key(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db_path))
    out = run_cli(
        "score",
        "--rubric",
        "story-quality",
        "--juror",
        "openai/gpt-4o-mini",
        "--juror",
        "openai/no-such-price-model",
        "--plan",
        "--db",
        str(db_path),
    )
    assert out.exit_code == 0, out.stderr
    total = next(line for line in out.stdout.splitlines() if line.startswith("total"))
    assert total.split()[-2:] == ["unknown", "unknown"]
    assert "price unknown for openai/no-such-price-model" in out.stdout
    assert "nothing was called and no run was written" in out.stdout


def test_expected_output_comes_from_earlier_answers(con: Any, tmp_path: Path) -> None:
    from jurybench.store import import_items

    import_items(con, write(tmp_path / "i.csv", ITEMS_CSV))
    with StubServer(json.dumps(FULL)) as stub:
        juror = parse_juror(f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-t")
        score(con, load_rubric("story-quality"), [juror], where="item_id = 'i1'", options=EngineOptions(progress=False))
        result = score(con, load_rubric("story-quality"), [juror], options=EngineOptions(plan_only=True))
    plan = _plan(result)["openai/gpt-4o-mini"]
    # The stub answered with 7 completion tokens once: 2 calls left x 7.
    assert (plan.calls, plan.cached, plan.output_tokens) == (2, 1, 14.0)
    assert plan.output_basis == "mean of 1 earlier answers"


def _cli_score(db: Path, juror: str, *extra: str) -> Any:
    return run_cli(
        "score",
        "--rubric",
        "story-quality",
        "--juror",
        juror,
        "--run",
        "b",
        "--concurrency",
        "1",
        "--no-progress",
        "--db",
        str(db),
        *extra,
    )


def test_a_budget_stops_the_run_before_it_is_passed_and_a_higher_one_resumes(db_path: Path, tmp_path: Path) -> None:
    from jurybench.store import connect
    from jurybench.testing import RateLimits

    rows = "".join(f"i{i},Story number {i} about a fox.\n" for i in range(12))
    run_cli("items", "import", str(write(tmp_path / "i.csv", "item_id,response\n" + rows)), "--db", str(db_path))
    # The stub reports real usage (prompt characters / 4, 7 answer tokens), so litellm prices
    # each call as gpt-4o-mini: about 650 x $0.15/M + 7 x $0.60/M, roughly $0.0001.
    with StubServer(json.dumps(FULL), limits=RateLimits()) as stub:
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-t,max_tokens=200"  # reserved at 200 out
        first = _cli_score(db_path, juror, "--max-cost", "0.0004")
        assert first.exit_code == 4, first.stdout + first.stderr
        assert "budget reached" in first.stderr and "higher --max-cost" in first.stderr
        assert "$0.0000 of" not in first.stderr and "of $0.00040;" in first.stderr, first.stderr
        con = connect(db_path)
        n_first, spent = con.execute("SELECT count(*), sum(cost_usd) FROM calls").fetchone()
        status = con.execute("SELECT status FROM runs WHERE run_id = 'b'").fetchone()[0]
        con.close()
        assert status == "stopped_budget"
        assert 0 < n_first < 12 and spent <= 0.0004  # stopped before passing it, not after
        assert len(stub.requests) == n_first
        # The same budget again: the run's whole spend still stays within it (its estimates now
        # know the juror's real answer length, so another call may fit, never one too many).
        again = _cli_score(db_path, juror, "--max-cost", "0.0004")
        assert again.exit_code == 4
        con = connect(db_path)
        n_again, spent = con.execute("SELECT count(*), sum(cost_usd) FROM calls").fetchone()
        con.close()
        assert spent <= 0.0004 and n_again < 12 and len(stub.requests) == n_again
        done = _cli_score(db_path, juror, "--max-cost", "1")
        assert done.exit_code == 0, done.stderr
    con = connect(db_path)
    assert con.execute("SELECT count(*), sum(attempts) FROM calls").fetchone() == (12, 12)  # none asked twice
    assert con.execute("SELECT status FROM runs WHERE run_id = 'b'").fetchone()[0] == "finished"


def test_a_budget_needs_known_prices(db_path: Path, tmp_path: Path) -> None:
    run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db_path))
    out = _cli_score(
        db_path, "openai/no-such-price-model,api_key=sk-t,api_base=http://127.0.0.1:9/v1,local=false", "--max-cost", "1"
    )
    assert out.exit_code == 2 and "--max-cost: no price is known for juror 'openai/no-such-price-model'" in out.stderr
    from jurybench.store import connect

    assert connect(db_path).execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_the_budget_holds_with_long_answers_at_high_concurrency(db_path: Path, tmp_path: Path) -> None:
    """2,000-token answers at concurrency 256: the expected output was a fixed estimate, so 82
    calls launched at once spent $0.1067 of $0.0200 (issue 27). A call is now reserved at its
    worst case (max_tokens), so the spend never passes the budget."""
    from jurybench.store import connect

    rows = "".join(f"i{i},Story number {i} about a fox.\n" for i in range(120))
    run_cli("items", "import", str(write(tmp_path / "i.csv", "item_id,response\n" + rows)), "--db", str(db_path))
    with StubServer(json.dumps(FULL)) as stub:
        for _ in range(120):
            stub.script.append((200, json.dumps(FULL), {"x-stub-completion-tokens": 2000}))
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-t,max_tokens=2000,concurrency=256"
        stopped = _cli_score(db_path, juror, "--max-cost", "0.02")
        assert stopped.exit_code == 4, stopped.stdout + stopped.stderr
    con = connect(db_path)
    n, spent, tokens = con.execute("SELECT count(*), sum(cost_usd), min(completion_tokens) FROM calls").fetchone()
    con.close()
    assert tokens == 2000 and 0 < n < 120
    assert spent <= 0.02, spent


def test_the_budget_holds_for_a_price_per_call(db_path: Path, tmp_path: Path) -> None:
    """A simulated juror that declares cost=0.01 a call, a budget of $0.025: the reserve left the
    per-call price out (it counted tokens only, which such a juror prices at 0), so 16 calls at
    concurrency 16 went out and spent $0.18 of it. Now two calls fit and the third does not."""
    from jurybench.store import connect

    rows = "".join(f"i{i},Story number {i} about a fox.\n" for i in range(40))
    run_cli("items", "import", str(write(tmp_path / "i.csv", "item_id,response\n" + rows)), "--db", str(db_path))
    stopped = _cli_score(db_path, "sim/pricey,cost=0.01", "--max-cost", "0.025")
    assert stopped.exit_code == 4, stopped.stdout + stopped.stderr
    con = connect(db_path)
    n, spent = con.execute("SELECT count(*), sum(cost_usd) FROM calls").fetchone()
    con.close()
    assert n == 2 and spent == pytest.approx(0.02)


def test_a_budget_that_is_not_a_number_is_refused() -> None:
    import math

    import jurybench as jb
    from jurybench.engine._budget import Budget

    for bad in (math.nan, math.inf, -1.0):
        with pytest.raises(jb.JurybenchError, match="max_cost must be a number"):
            Budget(bad, 0.0, {}, {})


def test_dollars_show_the_digits_a_cheap_run_needs() -> None:
    # "spent $0.0000 of $0.0010" on every line of a cheap run (issue 27).
    from jurybench.jurors._prices import usd

    assert [usd(v) for v in (0, 0.000123, 0.001, 0.0166, 0.5, 12.5)] == [
        "$0",
        "$0.00012",
        "$0.0010",
        "$0.0166",
        "$0.5000",
        "$12.50",
    ]


def test_a_plan_from_python_reports_what_it_prices_the_run_at(tmp_path: Path, monkeypatch: Any) -> None:
    import jurybench as jb

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with jb.open(tmp_path / "p.duckdb") as store:
        store.import_items([{"item_id": f"i{k}", "response": f"Story {k}"} for k in range(3)])
        run = jb.score(store, rubric="story-quality", jury=["openai/gpt-4o-mini"], plan=True)
    assert run.status == "planned" and run.cost_usd is not None and run.cost_usd > 0
    assert run.cost_usd == pytest.approx(float(run.plan["cost_usd"].sum()))


def test_the_service_plans_without_a_key(db_path: Path, monkeypatch: Any) -> None:
    from tests.service.conftest import ITEMS, make_client

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with make_client(db_path) as c:
        c.post("/v1/items", json={"items": ITEMS})
        r = c.post(
            "/v1/plan",
            json={"rubric": "story-quality", "item_ids": ["i0", "i1"], "jury": {"jurors": ["openai/gpt-4o-mini"]}},
        )
    assert r.status_code == 200 and r.json()["n_calls"] == 2 and r.json()["cost_usd"] > 0, r.text


def test_plan_shows_the_prompt_cache_saving_of_the_shared_prefix(db_path: Path, tmp_path: Path) -> None:
    """A rubric whose system prompt (6,000 characters, about 1,500 tokens) every call shares:
    the shared prefix is that system message plus the user text before the item; for 3 items,
    2 calls read it from the cache at gpt-4o-mini's cached rate ($0.075 / M instead of $0.15)."""
    from jurybench.engine._budget import _common_prefix

    assert _common_prefix("abcdef", "abcxyz") == "abc" and _common_prefix("abc", "abcd") == "abc"
    assert _common_prefix("x", "y") == "" and _common_prefix("", "abc") == ""
    long_rules = "Apply the scale exactly as written. " * 166  # 5,976 characters
    rubric = write(
        tmp_path / "cached.yaml",
        f"""
name: cached
kind: pointwise
rationale: false
criteria:
  - name: clarity
    description: how clear
    scale: {{min: 1, max: 3}}
    anchors: {{1: muddled, 2: fair, 3: clear}}
templates:
  en:
    system: "{long_rules.strip()}"
    user: "Score this.\\n{{response}}"
""",
    )
    run_cli("items", "import", str(write(tmp_path / "i.csv", ITEMS_CSV)), "--db", str(db_path))
    out = run_cli("score", "-r", str(rubric), "-j", "openai/gpt-4o-mini,api_key=sk-t", "--plan", "--db", str(db_path))
    assert out.exit_code == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("prompt cache:"))
    # shared: "\x1esystem\x1f" + rules + "\x1euser\x1fScore this.\n" + "A " (every response starts
    # so) = 8 + 5,975 + 18 + 2 = 6,003 characters: ~1,501 tokens; 2 x 1,501 x 0.075e-6 = $0.00022515
    shared = 8 + len(long_rules.strip()) + len("\x1euser\x1fScore this.\n") + len("A ")
    assert shared == 6003
    assert "first ~1,501 tokens" in line and "saves about $0.00023" in line


def _spend(
    db_path: Path, tmp_path: Path, n_items: int, budget: float, juror_extra: str, *options: str
) -> tuple[int, ...]:
    """A run stopped by its budget on the rate-limited stub: (calls stored, distinct keys,
    requests the stub received) and the spend."""
    from jurybench.store import connect
    from jurybench.testing import RateLimits

    rows = "".join(f"i{i},Story number {i} about a fox.\n" for i in range(n_items))
    run_cli("items", "import", str(write(tmp_path / "i.csv", "item_id,response\n" + rows)), "--db", str(db_path))
    with StubServer(json.dumps(FULL), limits=RateLimits()) as stub:  # usage: prompt characters / 4, 7 tokens out
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-t{juror_extra}"
        out = run_cli(
            "score",
            "--rubric",
            "story-quality",
            "--juror",
            juror,
            "--run",
            "b",
            "--no-progress",
            "--max-cost",
            str(budget),
            *options,
            "--db",
            str(db_path),
        )
        received = len(stub.requests)
    assert out.exit_code == 4, out.stdout + out.stderr
    con = connect(db_path)
    n, distinct, spent = con.execute("SELECT count(*), count(DISTINCT call_key), sum(cost_usd) FROM calls").fetchone()
    con.close()
    return n, distinct, received, spent


@pytest.mark.parametrize("max_tokens", ["", ",max_tokens=2000"])
def test_a_budget_is_spent_not_stopped_at_the_first_cautious_reserve(
    db_path: Path, tmp_path: Path, max_tokens: str
) -> None:
    """Issue 40, item 1: every call was reserved at the model's output limit (16,384 tokens for
    gpt-4o-mini: about $0.0099) and the run ended at the first refusal, spending 1.4 % of the
    budget. Reserves are now learned from the run's answers and a refused call waits for calls
    in flight: the run spends at least 90 % of the budget and never more."""
    n, _, _, spent = _spend(db_path, tmp_path, 400, 0.01, f",concurrency=32{max_tokens}")
    assert 0 < n < 400
    assert 0.9 * 0.01 <= spent <= 0.01, (n, spent)


@pytest.mark.parametrize("concurrency", [256, 1024])
def test_the_budget_holds_with_hundreds_in_flight(db_path: Path, tmp_path: Path, concurrency: int) -> None:
    """Issue 87, item 1: --concurrency is no longer capped at 64 on the command line; the budget's
    guarantee, the reason for that cap, holds at 256 and 1,024: at least 90 % spent, never more,
    every answer stored once."""
    n, distinct, received, spent = _spend(
        db_path, tmp_path, 1200, 0.05, ",max_tokens=200", "--concurrency", str(concurrency)
    )
    assert 0 < n < 1200 and n == distinct == received  # every answer the stub gave is stored, once
    assert 0.9 * 0.05 <= spent <= 0.05, (n, spent)


def test_the_learned_reserve_is_the_longest_answer_with_a_quarter_more() -> None:
    """The end-phase reserve (one call at a time) follows the longest answer, not the last or
    the shortest: 2,000 then two 100-token answers reserve 2,500 tokens (a planted bug made it
    125). Calls that run together are always reserved at the worst case (issue 57)."""
    from jurybench.engine._budget import Budget
    from jurybench.jurors import Price

    budget = Budget(1.0, 0.0, {"j": Price(1e-6, 1e-6)}, {"j": 30.0}, {"j": 16_384.0})
    assert budget.output_reserve("j") == 16_384.0  # in parallel: the worst case, always
    assert budget.output_reserve("j", probe=True) == pytest.approx(37.5)  # alone: the rubric's format + 1/4
    budget.learn("j", 2000)
    budget.learn("j", 100)
    budget.learn("j", 100)
    assert budget.output_reserve("j", probe=True) == pytest.approx(2500.0)
    assert budget.output_reserve("j") == 16_384.0
    budget.learn("j", 20_000)  # never above the worst case
    assert budget.output_reserve("j", probe=True) == 16_384.0
    unbounded = Budget(1.0, 0.0, {}, {"k": 30.0}, {}, seen={"k": (400.0, 12)})  # learned from the store
    assert unbounded.output_reserve("k") == pytest.approx(500.0)


def test_a_refused_call_waits_for_calls_in_flight_and_the_budget_ends_only_when_nothing_can_free_room() -> None:
    import asyncio
    from types import SimpleNamespace

    from jurybench.engine._budget import Budget
    from jurybench.jurors import Price

    budget = Budget(1.0, 0.0, {"j": Price(0.0, 1e-3)}, {"j": 10.0}, {"j": 600.0})  # a call: $0.60 reserved
    task = SimpleNamespace(juror=SimpleNamespace(key="j"), messages=[])

    async def scenario() -> list[object]:
        first = await budget.admit(task)
        assert first == pytest.approx(0.6)
        second = asyncio.ensure_future(budget.admit(task))  # 0.6 + 0.6 > 1: it waits, not refused
        await asyncio.sleep(0)
        assert not second.done() and not budget.reached
        budget.learn("j", 100)  # the first answer: 100 tokens, $0.10
        budget.settle(first, 0.1)
        got = await second
        budget.settle(got or 0.0, 0.5)
        budget.spent = 0.95  # nothing in flight and no room: reached
        return [got, await budget.admit(task), budget.reached]

    got, last, reached = asyncio.run(scenario())
    assert got == pytest.approx(0.6) and last is None and reached


def test_one_cost_per_run_in_the_plan_the_run_line_and_the_viewer(db_path: Path, tmp_path: Path) -> None:
    """Issue 57, item 3: a simulated juror declaring cost=0.25 a call was planned at $0, the run
    printed $6.00 and the viewer $9.00 (calls reused from the cache counted again). Three items:
    the plan, the run line, ``run_cost`` and the run page all say 3 x $0.25 = $0.75 for the run
    that made the calls; a second run served from the cache spent $0, its 3 cached calls apart."""
    from fastapi.testclient import TestClient

    import jurybench as jb
    from jurybench.viewer import create_viewer_app

    items = "item_id,prompt,response\n" + "".join(f"i{k},P {k},R {k}\n" for k in range(3))
    run_cli("items", "import", str(write(tmp_path / "i.csv", items)), "--db", str(db_path))
    juror = "sim/a,cost=0.25"
    plan = run_cli("score", "--rubric", "story-quality", "--juror", juror, "--plan", "--db", str(db_path))
    assert plan.exit_code == 0 and "$0.75" in plan.stdout, plan.stdout
    first = run_cli(
        "score", "--rubric", "story-quality", "--juror", juror, "--run", "one", "--no-progress", "--db", str(db_path)
    )
    again = run_cli(
        "score", "--rubric", "story-quality", "--juror", juror, "--run", "two", "--no-progress", "--db", str(db_path)
    )
    assert "$0.75" in first.stdout and "3 from cache" in again.stdout and "; $0;" in again.stdout, again.stdout
    with jb.open(db_path, read_only=True) as store:
        cost = store.sql("SELECT run_id, cost_usd, n_cached, cached_cost_usd FROM run_cost ORDER BY run_id")
    assert cost.values.tolist() == [["one", 0.75, 0, 0.0], ["two", 0.0, 3, 0.75]]
    with TestClient(create_viewer_app(db_path, warm_up=False)) as client:
        one, two = client.get("/runs/one").text, client.get("/runs/two").text
    assert "<dd>$0.75" in one and 'id="cached-cost"' not in one
    assert "<dd>$0" in two and "3 calls came from the cache (they cost $0.75" in two


def _budget_study(
    db_path: Path, tmp_path: Path, lengths: list[int], juror_options: str, budget: float
) -> tuple[float, int]:
    """A run of len(lengths) items against the stub, whose k-th answer has lengths[k] tokens
    (gpt-4o-mini's prices: $0.15 / $0.60 a million), under --max-cost: (spent, calls)."""
    from jurybench.store import connect

    rows = "".join(f"i{i:03d},Story number {i} about a fox.\n" for i in range(len(lengths)))
    run_cli("items", "import", str(write(tmp_path / "i.csv", "item_id,response\n" + rows)), "--db", str(db_path))
    with StubServer(json.dumps(FULL)) as stub:
        for n in lengths:
            stub.script.append((200, json.dumps(FULL), {"x-stub-completion-tokens": n}))
        juror = f"openai/gpt-4o-mini,api_base={stub.api_base},api_key=sk-t,concurrency=256{juror_options}"
        out = _cli_score(db_path, juror, "--max-cost", str(budget))
        assert out.exit_code == 4, out.stdout + out.stderr
    con = connect(db_path)
    n, spent = con.execute("SELECT count(*), sum(cost_usd) FROM calls").fetchone()
    con.close()
    return float(spent), int(n)


def test_the_budget_holds_when_answers_grow_after_the_first_calls(db_path: Path, tmp_path: Path) -> None:
    """Issue 57, item 4 (red team): 12 answers of 60 tokens taught the reserve, then answers of
    2,000 tokens came while 64 calls were in flight: 3.67 x a $0.10 budget (1.53 x with
    max_tokens=2000). Calls are now reserved at their worst case (max_tokens), so the spend
    stays within $0.05; and the run stops with less than one worst-case call left (2,000 x
    $0.60/M + a prompt of about 700 tokens, about $0.0013)."""
    spent, n = _budget_study(db_path, tmp_path, [60] * 12 + [2000] * 188, ",max_tokens=2000", 0.05)
    assert spent <= 0.05, (spent, n)
    assert spent >= 0.05 - 2 * 0.0013, (spent, n)


def test_the_budget_holds_when_answers_vary_log_normally(db_path: Path, tmp_path: Path) -> None:
    """Issue 57, item 4 (red team): answer lengths log-normal with sigma 1.5 (median 150 tokens,
    a few past 5,000) spent 1.41 x the budget. With no max_tokens the worst case is the model's
    output limit (gpt-4o-mini: 16,384 tokens), and the spend stays within $0.04."""
    import random

    rng = random.Random(5)
    lengths = [max(1, min(16384, round(150 * math.exp(rng.gauss(0, 1.5))))) for _ in range(400)]
    spent, n = _budget_study(db_path, tmp_path, lengths, "", 0.04)
    assert spent <= 0.04, (spent, n)
    assert spent >= 0.04 - 2 * (16384 * 0.60e-6 + 0.0002), (spent, n)


def test_the_service_keeps_its_own_bound_on_concurrency(tmp_path: Path) -> None:
    from tests.service.conftest import make_client

    with make_client(tmp_path / "s.duckdb") as client:
        wide = client.post("/v1/jobs", json={"rubric": "story-quality", "jurors": ["sim/a"], "concurrency": 65})
        assert wide.status_code == 422 and "64" in wide.text
    assert (
        "at most 1024"
        in run_cli("score", "--rubric", "story-quality", "--juror", "sim/a", "--concurrency", "1025").stderr
    )
