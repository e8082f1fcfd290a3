"""Juror kinds: registered from outside the package the way the built-ins are, looked up by a
model string's prefix, their parameters checked, their transports run by the engine; the
worked example in docs/extending.md runs as written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import jurybench as jb
from jurybench.jurors import Completion, JurorKind, is_offline, kind_of, kinds, register_kind, unregister_kind
from tests.conftest import REPO, registered_kind


class Echo:
    """Answers every criterion with the number of characters of the item's response, capped."""

    def __init__(self, rubric: Any) -> None:
        self.criteria = rubric.dimensions

    async def complete(self, messages: list[dict[str, str]], slot: Any) -> Completion:
        return Completion(json.dumps({name: 5 for name in self.criteria}), prompt_tokens=10, completion_tokens=4)


@pytest.fixture
def echo() -> Any:
    yield from registered_kind("echo", Echo, "always 5")


def test_a_kind_registered_from_outside_judges_like_any_juror(echo: JurorKind, tmp_path: Path) -> None:
    assert kind_of("echo/one") is echo and not is_offline("echo/one") and echo in kinds()
    assert kind_of("openai/gpt-4o-mini").prefix == "*" and kind_of("fake/x").offline
    with jb.open(tmp_path / "k.duckdb") as store:
        store.import_items([{"item_id": f"i{k}", "response": "x"} for k in range(2)])
        run = jb.score(store, rubric="story-quality", jury=["echo/one"], run="e")
        assert run.status == "finished" and run.counts["ok"] == 2
        assert run.cost_usd is None  # its price says unknown: never $0 for unknown
        scores = store.sql("SELECT DISTINCT juror_score FROM juror_pointwise WHERE run_id = 'e'")
        assert scores["juror_score"].tolist() == [5]
        with pytest.raises(jb.JurybenchError, match="unknown parameter 'temperature'"):
            jb.score(store, rubric="story-quality", jury=["echo/one,temperature=0"], run="bad")


def test_registering_a_prefix_twice_or_a_bad_prefix_is_refused(echo: JurorKind) -> None:
    other = JurorKind("echo", lambda *a: None)
    with pytest.raises(jb.JurybenchError, match="registered already"):
        register_kind(other)
    register_kind(other, replace=True)
    assert kind_of("echo/x") is other
    with pytest.raises(jb.JurybenchError, match="the part before the '/'"):
        register_kind(JurorKind("a/b", lambda *a: None))


def test_kinds_come_from_entry_points_and_a_broken_one_is_named(monkeypatch: Any) -> None:
    import importlib.metadata as metadata

    import jurybench.jurors._lookup as registry

    class Point:
        def __init__(self, name: str, value: str, load: Any) -> None:
            self.name, self.value, self._load = name, value, load

        def load(self) -> Any:
            return self._load

    def plugin() -> None:
        register_kind(JurorKind("plugged", lambda *a: None, offline=True))

    monkeypatch.setattr(metadata, "entry_points", lambda group: [Point("p", "plug.in:register", plugin)])
    monkeypatch.setattr(registry.PLUGINS, "loaded", False)
    try:
        assert kind_of("plugged/x").prefix == "plugged" and kind_of("fake/x").prefix == "fake"
    finally:
        unregister_kind("plugged")

    def broken() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(metadata, "entry_points", lambda group: [Point("b", "bro.ken:register", broken)])
    monkeypatch.setattr(registry.PLUGINS, "loaded", False)
    with pytest.raises(jb.JurybenchError, match=r"bro.ken:register.*boom"):
        kind_of("x/y")
    monkeypatch.setattr(registry.PLUGINS, "loaded", True)


def test_the_worked_example_in_the_docs_runs(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    text = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S)
    assert block is not None
    try:
        exec(compile(block.group(1), "docs/extending.md", "exec"), {})
    finally:
        unregister_kind("constant")
    with jb.open(tmp_path / "extending.duckdb", read_only=True) as store:
        means = store.sql("SELECT juror, avg(juror_score) AS m FROM juror_pointwise GROUP BY 1 ORDER BY 1")
    assert dict(zip(means["juror"], means["m"], strict=True))["constant/three"] == 3


class Slow(Echo):
    """Answers after longer than its juror's timeout; ``own_timeout`` says it keeps the timeout
    itself (as litellm's transport does), so the engine does not wrap its calls."""

    own_timeout = False

    async def complete(self, messages: list[dict[str, str]], slot: Any) -> Completion:
        import asyncio

        await asyncio.sleep(0.5)
        return await super().complete(messages, slot)


class SlowOwnTimeout(Slow):
    own_timeout = True


@pytest.mark.parametrize(("transport", "outcome"), [(Slow, "error"), (SlowOwnTimeout, "ok")])
def test_the_engine_asks_a_transport_whether_it_keeps_its_own_timeout(tmp_path: Path, transport: Any,
                                                                      outcome: str) -> None:  # fmt: skip
    """Issue 41, item 3: the engine checked isinstance(backend, LiteLLMBackend); it now asks the
    transport (own_timeout), so a third party's transport can keep its own timeout too."""
    for kind in registered_kind("slow", transport, "slow"):
        with jb.open(tmp_path / f"{outcome}.duckdb") as store:
            store.import_items([{"item_id": "i0", "response": "x"}])
            run = jb.score(store, rubric="story-quality", jury=["slow/one,timeout=0.05,retries=0"], run="s")
            assert dict(run.counts).get(outcome) == 1, run.counts
        assert kind.prefix == "slow"


def test_a_transport_is_a_backend_and_a_kind_that_makes_none_is_named(tmp_path: Path) -> None:
    """Issue 52: the engine probed a transport with four getattr calls; Backend now declares
    what the engine reads (mode, own_timeout, endpoint, drives_instructor) with its default, the
    built-ins subclass it, any object with complete still answers, and anything else is one line."""
    from jurybench.errors import JurybenchError
    from jurybench.jurors import Backend, FakeBackend, LiteLLMBackend, make_backend, parse_juror
    from jurybench.rubric import load_rubric

    assert issubclass(FakeBackend, Backend) and issubclass(LiteLLMBackend, Backend)
    assert (Backend.mode, Backend.own_timeout, Backend.endpoint, Backend.drives_instructor) == (
        None,
        False,
        None,
        False,
    )
    assert LiteLLMBackend.own_timeout and LiteLLMBackend.drives_instructor
    rubric = load_rubric("story-quality")
    for kind in registered_kind("plain", SlowOwnTimeout, "a plain object"):
        made = make_backend(parse_juror("plain/x"), rubric, None)  # type: ignore[arg-type]
        assert isinstance(made, Backend) and made.own_timeout is True and made.mode is None
        assert kind.prefix == "plain"
    for _ in registered_kind("nothing", lambda rubric: 42, "no transport"):
        with pytest.raises(JurybenchError, match=r"juror kind 'nothing/': its make\(\) returned int, not a transport"):
            make_backend(parse_juror("nothing/x"), rubric, None)  # type: ignore[arg-type]
