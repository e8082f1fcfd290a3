"""The statistic registry: every face (Python, CLI, HTTP, study steps) is derived from one
object per statistic, a statistic registered from outside the package (in code or through an
installed package's entry point) is offered on all of them, and the worked example in
docs/extending.md runs as written with the hand-worked figures."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import jurybench as jb
from jurybench.stats import Statistic, get_statistic, register_statistic, statistics, unregister_statistic
from tests.conftest import REPO, run_cli

BUILTIN = [
    "directional",
    "gap",
    "consistency",
    "robustness",
    "friedman",
    "ttest",
    "welch",
    "mannwhitney",
    "kendall",
    "cohens-d",
    "item-spearman",
    "disparity",
    "leaderboard",
    "power",
    "winrate",
    "sequential",
]

PLUGIN = '''
from typing import Annotated

from jurybench.stats import param, params, register_statistic, statistic


def table(result, summary):
    return ["criterion", "n", "mean"], [[c, r["n"], r["mean"]] for c, r in result["criteria"].items()]


@statistic("mean-above", table=table)
def mean_above(con, run: params.Run, *, floor: Annotated[float, param("Scores below it are left out.", number="value")] = 0.0):
    """Per criterion: the mean jury score of the items scored at least --floor."""
    rows = con.execute("SELECT criterion, count(*), avg(jury_score) FROM jury_pointwise WHERE run_id = ? "
                       "AND jury_score >= ? GROUP BY 1 ORDER BY 1", [run, floor]).fetchall()
    return {"criteria": {c: {"n": n, "mean": m} for c, n, m in rows}}


def register():
    register_statistic(mean_above, replace=True)
'''

SCORES = [5, 4, 3, 2, 4]  # coherence, items s0..s4


def _store(path: Path) -> Path:
    with jb.open(path) as store:
        store.import_items([{"item_id": f"s{k}", "response": f"Story {k}."} for k in range(len(SCORES))])
        store.import_judgments(
            [{"item_id": f"s{k}", "criterion": "coherence", "score": s} for k, s in enumerate(SCORES)],
            run="given",
            rubric="story-quality",
            juror="editor",
        )
    return path


def test_the_builtins_are_registered_in_order() -> None:
    assert list(statistics())[: len(BUILTIN)] == BUILTIN
    assert all(isinstance(s, Statistic) for s in statistics().values())
    assert get_statistic("gap") is jb.stats.gap
    # 'sequential' names the statistic; the confidence sequences it reads are jurybench.stats.anytime
    assert get_statistic("sequential") is jb.stats.sequential and callable(jb.stats.anytime.look)
    with pytest.raises(jb.JurybenchError, match=r"unknown statistic 'gapp'.*Known: directional, gap"):
        get_statistic("gapp")


@pytest.mark.parametrize("name", BUILTIN)
def test_the_cli_and_http_offer_what_the_statistic_declares(name: str) -> None:
    """Each face's options are the statistic's parameters on that face, required where it says."""
    import typer
    import typer.main

    from jurybench.cli import app
    from jurybench.service._stats import body_model

    stat = get_statistic(name)
    root = typer.main.get_command(app)
    group = root.get_command(typer.Context(root), "stats")  # type: ignore[attr-defined]
    click_command = group.get_command(None, name)  # type: ignore[union-attr]
    options = {p.name: p for p in click_command.params}
    assert set(options) == {p.name for p in stat.on("cli")} | {"fmt", "db"}
    for p in stat.on("cli"):
        assert options[p.name].required == (p.required or "cli" in p.meaning.required_in), p.name
    fields = body_model(stat).model_fields
    assert set(fields) == {p.name for p in stat.on("http")}
    for p in stat.on("http"):
        assert fields[p.name].is_required() == (p.required or "http" in p.meaning.required_in), p.name
    python = list(stat.__signature__.parameters)
    assert python == ["store", *(p.name for p in stat.parameters)]


def test_the_http_and_cli_defaults_agree(tmp_path: Path) -> None:
    """friedman and kendall over HTTP once grouped by nothing when 'by' was left out, while the CLI
    and Python grouped by model: now every face's default is the statistic's."""
    from jurybench.service._stats import body_model

    for name in ("friedman", "kendall", "ttest", "welch"):
        stat = get_statistic(name)
        fields = body_model(stat).model_fields
        by = next(p for p in stat.parameters if p.name == "by")
        assert fields["by"].default == by.default == "model", name


def test_choices_and_pairs_are_named_as_each_face_names_them(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb")
    cli = run_cli("stats", "directional", "--run", "given", "--zero-method", "drop", "--db", str(db))
    assert cli.exit_code == 2 and "--zero-method 'drop' is not valid" in cli.stderr and "Valid: wilcox" in cli.stderr
    with pytest.raises(jb.JurybenchError, match=r"^zero_method 'drop' is not valid"):
        jb.stats.directional(db, "given", zero_method="drop")
    cli = run_cli("stats", "welch", "--run", "given", "--groups", "m1", "--db", str(db))
    assert cli.exit_code == 2 and "--groups needs two comma-separated values" in cli.stderr
    with pytest.raises(jb.JurybenchError, match=r"^groups needs two comma-separated values"):
        jb.stats.welch(db, "given", groups="m1")
    cli = run_cli("stats", "gap", "--run", "given", "--level", "everyone", "--db", str(db))
    assert cli.exit_code == 2 and "--level 'everyone' is not valid" in cli.stderr


def test_the_worked_example_in_the_docs_runs(tmp_path: Path, monkeypatch: Any) -> None:
    from scipy.stats import binomtest

    monkeypatch.chdir(tmp_path)
    text = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    section = text[text.index("## A statistic of your own") :]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    try:
        exec(compile(block.group(1), "docs/extending.md", "exec"), {})
        frame = jb.stats.results(tmp_path / "extending-stats.duckdb", name="top-share")
        assert len(frame) == 1 and json.loads(frame["params"][0]) == {"run": "given", "where": None, "at_least": 4}
        with jb.open(tmp_path / "extending-stats.duckdb", read_only=True) as store:
            stored = json.loads(store.sql("SELECT result FROM stats_results")["result"][0])
        row = stored["criteria"]["coherence"]
        # Hand-worked: 3 of the 5 scores (5, 4, 3, 2, 4) are at least 4; Wilson's interval as scipy gives it.
        low, high = binomtest(3, 5).proportion_ci(method="wilson")
        assert (row["n"], row["top"], row["share"]) == (5, 3, 0.6)
        assert row["low"] == pytest.approx(low, abs=1e-6) and row["high"] == pytest.approx(high, abs=1e-6)
        assert row["low"] == pytest.approx(0.2307, abs=1e-4) and row["high"] == pytest.approx(0.8824, abs=1e-4)
        # --where, read through jurybench.stats.sql as the built-ins read it: s0 (a 5) left out, 2 of 4
        with jb.open(tmp_path / "extending-stats.duckdb") as store:
            kept = jb.stats.get_statistic("top-share")(store, "given", where="item_id <> 's0'", at_least=4)
        assert list(kept["n"]) == [4] and list(kept["top"]) == [2]
        with pytest.raises(jb.JurybenchError, match="--where"):
            jb.stats.get_statistic("top-share")(
                tmp_path / "extending-stats.duckdb", "given", where="1; DROP TABLE runs"
            )
    finally:
        unregister_statistic("top-share")
    assert "top-share" not in statistics()


def _installed_plugin(site: Path) -> dict[str, str]:
    """A package 'plug-stats' installed into ``site`` (its module and its dist-info with the entry point)."""
    info = site / "plug_stats-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "plug_stats.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plug-stats\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[jurybench.statistics]\nplug = plug_stats:register\n", encoding="utf-8")
    import os

    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}


def test_an_installed_packages_statistic_is_a_cli_command(tmp_path: Path) -> None:
    env = _installed_plugin(tmp_path / "site")
    db = _store(tmp_path / "s.duckdb")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "jurybench.cli", *args], capture_output=True, text=True, env=env, cwd=tmp_path
        )

    listed = cli("stats", "--help")
    assert listed.returncode == 0 and "mean-above" in listed.stdout, listed.stderr
    shown = cli("stats", "mean-above", "--help")
    assert "--floor" in shown.stdout and "Scores below it are left out." in shown.stdout
    done = cli("stats", "mean-above", "--run", "given", "--floor", "3", "--format", "json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # Hand-worked: the scores at least 3 are 5, 4, 3, 4; their mean is 4.
    assert out["result"]["criteria"]["coherence"] == {"n": 4, "mean": 4.0}
    assert out["params"] == {"run": "given", "floor": 3.0}
    table = cli("stats", "mean-above", "--run", "given", "--db", str(db))
    assert "coherence" in table.stdout and "3.6" in table.stdout  # all five: 18 / 5
    bad = cli("stats", "mean-above", "--run", "given", "--floor", "high", "--db", str(db))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_a_statistic_registered_in_code_is_served_and_a_study_step(tmp_path: Path) -> None:
    from jurybench.commands import command
    from tests.service.conftest import make_client

    namespace: dict[str, Any] = {}
    exec(compile(textwrap.dedent(PLUGIN), "plug_stats", "exec"), namespace)
    namespace["register"]()
    try:
        db = _store(tmp_path / "s.duckdb")
        with make_client(db) as client:
            answer = client.post("/v1/stats/mean-above", json={"run": "given", "floor": 4})
            assert answer.status_code == 200, answer.json()
            assert answer.json()["result"]["criteria"]["coherence"] == {"n": 3, "mean": pytest.approx(13 / 3)}
            assert client.post("/v1/stats/mean-above", json={"run": "given", "flor": 4}).status_code == 422
        step = command("stats mean-above")
        assert step is not None and set(step.options()) == {"run", "floor", "format"}
        assert step.run(db, {"run": "given", "format": "json"}) == 0
        assert len(jb.stats.results(db, name="mean-above")) == 2
    finally:
        unregister_statistic("mean-above")


def test_a_broken_plugin_is_named(monkeypatch: Any) -> None:
    import importlib.metadata as metadata

    import jurybench.stats._registry as registry

    class Point:
        name, value = "b", "bro.ken:register"

        def load(self) -> Any:
            def broken() -> None:
                raise RuntimeError("boom")

            return broken

    monkeypatch.setattr(metadata, "entry_points", lambda group: [Point()])
    monkeypatch.setattr(registry.PLUGINS, "loaded", False)
    with pytest.raises(jb.JurybenchError, match=r"statistics from 'bro.ken:register' \(b\) failed to load: boom"):
        statistics()
    monkeypatch.setattr(registry.PLUGINS, "loaded", True)


def test_a_name_is_registered_once_and_parameters_need_help() -> None:
    from jurybench.stats import statistic

    def table(result: dict[str, Any], summary: bool) -> tuple[list[str], list[list[Any]]]:
        return [], []

    def compute(con: Any, run: jb.stats.params.Run) -> dict[str, Any]:
        return {}

    with pytest.raises(jb.JurybenchError, match="registered already"):
        register_statistic(statistic("gap", table=table)(compute))

    def unexplained(con: Any, run: str) -> dict[str, Any]:
        return {}

    with pytest.raises(jb.JurybenchError, match=r"parameter 'run' needs Annotated\[type, param\(help\)\]"):
        statistic("unexplained", table=table)(unexplained)
    with pytest.raises(jb.JurybenchError, match="lower-case"):
        statistic("Bad Name", table=table)(compute)
