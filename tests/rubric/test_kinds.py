"""Rubric kinds are a registry (jurybench.rubric.register_kind, the entry-point group
jurybench.rubric_kinds): the built-ins are registered as a plug-in's are, and the worked
example in docs/extending.md (a yes/no checklist kind) runs as written, judged by fake jurors,
its results in the store and a statistic computed over them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import Field

import jurybench as jb
from jurybench.rubric import (
    RubricKind,
    parse_answer,
    parse_rubric,
    register_kind,
    rubric_kinds,
    unregister_kind,
)
from jurybench.rubric._model import KINDS

REPO = Path(__file__).resolve().parents[2]


def test_the_builtins_are_registered_in_order() -> None:
    assert list(rubric_kinds())[: len(KINDS)] == list(KINDS)


class _Stars(RubricKind):
    """One 1..5 star rating per response (every other hook left at its default)."""

    kind: Literal["stars"]

    @property
    def dimensions(self) -> list[str]:
        return ["stars"]

    def scale_for(self, dimension: str) -> tuple[int, int]:
        return 1, 5


def test_a_kind_with_only_its_dimensions_gets_every_default(tmp_path: Path) -> None:
    register_kind(_Stars, replace=True)
    try:
        rubric = parse_rubric("name: s\nkind: stars\ntemplates:\n  en:\n    user: '{response}'\n", source="s.yaml")
        from jurybench.rubric import answer_format, answer_schema

        assert answer_schema(rubric)["properties"]["stars"] == {"type": "integer", "minimum": 1, "maximum": 5}
        assert '- "stars": integer 1..5' in answer_format(rubric)
        messages, _ = rubric.render({"item_id": "i", "response": "A tale."})
        assert messages[-1]["content"].startswith("A tale.\n\nReply with a single JSON object")
        assert parse_answer(rubric, '{"stars": 4, "rationale": "ok"}', "stop", None).scores == {"stars": 4}
        off = parse_answer(rubric, '{"stars": 6}', "stop", None)
        assert off.status == "invalid" and "less than or equal to 5" in str(off.reason)
    finally:
        unregister_kind("stars")
    with pytest.raises(jb.JurybenchError, match=r"'stars' is not a rubric kind.*Valid kinds: pointwise"):
        parse_rubric("name: s\nkind: stars\ntemplates:\n  en:\n    user: x\n", source="s.yaml")


def test_registering_twice_or_without_a_name_is_refused() -> None:
    register_kind(_Stars, replace=True)
    try:

        class Other(_Stars):
            kind: Literal["stars"]

        with pytest.raises(jb.JurybenchError, match="rubric kind 'stars' is registered already"):
            register_kind(Other)

        class Nameless(RubricKind):
            kind: str

        with pytest.raises(jb.JurybenchError, match=r"declare its name as kind: Literal\['<name>'\]"):
            register_kind(Nameless)
        with pytest.raises(jb.JurybenchError, match="is not a rubric kind"):
            register_kind(dict)  # type: ignore[arg-type]
    finally:
        unregister_kind("stars")


def _example() -> str:
    text = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    section = text[text.index("## A rubric kind of your own") :]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1)


def test_the_worked_example_in_the_docs_runs(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    scope: dict[str, Any] = {}
    try:
        exec(compile(_example(), "docs/extending.md", "exec", dont_inherit=True), scope)
        with jb.open(tmp_path / "extending-kinds.duckdb", read_only=True) as store:
            calls = store.sql("SELECT status, count(*) AS n FROM calls WHERE run_id = 'checks' GROUP BY 1")
            judged = store.sql("SELECT * FROM juror_pointwise WHERE run_id = 'checks'")
            jury = store.sql("SELECT item_id, criterion, jury_score FROM jury_pointwise WHERE run_id = 'checks'")
            prompt = store.sql("SELECT messages FROM calls WHERE run_id = 'checks' LIMIT 1")["messages"][0]
            runs = store.sql("SELECT mode FROM runs WHERE run_id = 'checks'")["mode"].tolist()
            recorded = store.sql("SELECT name FROM stats_results")["name"].tolist()
        # 18 items x 2 jurors, one call each, every answer valid; stored as pointwise scores 0 or 1
        assert calls.to_dict("records") == [{"status": "ok", "n": 36}]
        assert runs == ["pointwise"] and recorded == ["friedman"]
        assert len(judged) == 18 * 2 * 2 and set(judged["juror_score"]) <= {0.0, 1.0}
        # hand-worked: the jury's score of a question is the mean of its two jurors' 0s and 1s
        means = judged.groupby(["item_id", "criterion"])["juror_score"].mean()
        for row in jury.itertuples():
            assert row.jury_score == means[(row.item_id, row.criterion)]
        assert "- ending: Does the story have an ending?" in prompt and '- \\"names\\": \\"yes\\" or \\"no\\"' in prompt
        rubric = jb.load_rubric(tmp_path / "story-checks.yaml")
        assert parse_answer(rubric, '{"ending": "yes", "names": "no"}', "stop", None).scores == {
            "ending": 1,
            "names": 0,
        }
        maybe = parse_answer(rubric, '{"ending": "maybe", "names": "no"}', "stop", None)
        assert maybe.status == "invalid" and maybe.reason is not None and maybe.reason.startswith("ending:")
    finally:
        unregister_kind("checklist")


PLUGIN = """
from typing import Literal

from pydantic import Field

from jurybench.rubric import RubricKind, register_kind


class Checklist(RubricKind):
    kind: Literal["checklist"]
    questions: dict[str, str] = Field(min_length=1)

    @property
    def dimensions(self):
        return list(self.questions)

    def scale_for(self, dimension):
        return 0, 1


def register():
    register_kind(Checklist)
"""

RUBRIC = """
name: story-checks
kind: checklist
questions:
  ending: Does the story have an ending?
templates:
  en:
    user: "{response}"
"""


def test_a_kind_from_an_installed_package_is_judged_from_the_command_line(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "plug_kinds-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "plug_kinds.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plug-kinds\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[jurybench.rubric_kinds]\nplug = plug_kinds:register\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    (tmp_path / "checks.yaml").write_text(RUBRIC, encoding="utf-8")
    (tmp_path / "items.csv").write_text("item_id,response\na,One.\nb,Two.\nc,Three.\n", encoding="utf-8")
    db = str(tmp_path / "k.duckdb")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "jurybench.cli", *args], capture_output=True, text=True, env=env, cwd=tmp_path
        )

    assert cli("items", "import", "items.csv", "--db", db).returncode == 0
    done = cli("score", "-r", "checks.yaml", "-j", "fake/a", "--run", "r", "--no-progress", "--db", db)
    assert done.returncode == 0, done.stderr
    rows = cli("sql", "SELECT item_id, juror_score FROM juror_pointwise ORDER BY 1", "--format", "json", "--db", db)
    scores = json.loads(rows.stdout)
    assert [r["item_id"] for r in scores] == ["a", "b", "c"] and {r["juror_score"] for r in scores} <= {0, 1}
    # without the package the kind is unknown: one line naming the file, the line and the kinds there are
    bare = subprocess.run(
        [sys.executable, "-m", "jurybench.cli", "rubrics", "show", "checks.yaml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert bare.returncode == 2 and "line 3, field 'kind': 'checklist' is not a rubric kind" in bare.stderr
    assert "Traceback" not in bare.stderr


def test_an_inline_rubric_of_a_registered_kind_is_a_service_job(tmp_path: Path) -> None:
    from tests.service.conftest import make_client

    class Checks(RubricKind):
        kind: Literal["checks2"]
        questions: dict[str, str] = Field(min_length=1)

        @property
        def dimensions(self) -> list[str]:
            return list(self.questions)

        def scale_for(self, dimension: str) -> tuple[int, int]:
            return 0, 1

    register_kind(Checks, replace=True)
    try:
        with make_client(tmp_path / "s.duckdb") as client:
            body = {
                "rubric_inline": {
                    "name": "c",
                    "kind": "checks2",
                    "questions": {"ending": "An ending?"},
                    "templates": {"en": {"user": "{response}"}},
                },
                "jury": {"jurors": ["fake/a"]},
                "items": [{"item_id": "a", "response": "One."}],
            }
            planned = client.post("/v1/plan", json={**body, "items": None, "item_ids": ["a"]})
            assert planned.status_code == 400  # a plan reads stored subjects only (not uploaded yet)
            bad = client.post("/v1/jobs", json={**body, "rubric_inline": {**body["rubric_inline"], "kind": "nope"}})
            assert bad.status_code == 400 and "rubric_inline.kind: 'nope' is not a rubric kind" in bad.text
    finally:
        unregister_kind("checks2")


def test_juror_kinds_rubric_kinds_and_statistics_share_one_registry_mechanism() -> None:
    """One mechanism (config.Registry: by name, a second registration refused, built-ins then
    entry points loaded once) behind the three things a plug-in can add."""
    from jurybench.config import Registry
    from jurybench.jurors import JurorKind
    from jurybench.jurors import _lookup as juror_kinds
    from jurybench.jurors import register_kind as register_juror_kind
    from jurybench.rubric import _kinds as rubric_kind_registry
    from jurybench.stats import _registry as statistic_registry
    from jurybench.stats import get_statistic, register_statistic

    for registry in (juror_kinds.REGISTRY, rubric_kind_registry.REGISTRY, statistic_registry.REGISTRY):
        assert isinstance(registry, Registry) and registry.items()
    with pytest.raises(jb.JurybenchError, match=r"^juror kind 'fake/' is registered already"):
        register_juror_kind(JurorKind("fake", lambda *a: None))

    class Clash(_Stars):
        kind: Literal["pointwise"]  # type: ignore[assignment]

    with pytest.raises(jb.JurybenchError, match=r"^rubric kind 'pointwise' is registered already"):
        register_kind(Clash)
    gap = get_statistic("gap")
    register_statistic(gap)  # the same object again: nothing to refuse
    assert statistic_registry.REGISTRY.get("gap") is gap
