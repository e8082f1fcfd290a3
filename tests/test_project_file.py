"""The project file (issue 56, item 3): jurybench.yaml in the working folder (or --config FILE,
or JURYBENCH_CONFIG) names the store and gives any command's options defaults; the command
line wins over it, JURYBENCH_DB over its db; jurybench init writes a commented one; a wrong
command or option is one line that lists the valid ones."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.conftest import run_cli, write

QA = "item_id,prompt,response,reference\nq1,Capital of Australia?,Canberra.,Canberra\nq2,Capital of Australia?,Sydney.,Canberra\n"
PROJECT = """db: evals.duckdb
defaults:
  score:
    rubric: correctness
    juror: [sim/a, sim/b]
    where: "true"
    no-progress: true
  check:
    min: ["correctness>=1"]
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("JURYBENCH_DB", "JURYBENCH_CONFIG", "JURYBENCH_ENV_FILE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _runs(db: Path) -> dict[str, tuple[str, int]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT r.run_id, ru.name, json_array_length(r.jurors) FROM runs r JOIN rubrics ru USING (rubric_hash)"
        ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def test_defaults_apply_and_the_command_line_wins(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(folder / "jurybench.yaml", PROJECT)
    assert run_cli("items", "import", str(write(folder / "qa.csv", QA))).exit_code == 0
    assert run_cli("score", "--run", "from-file").exit_code == 0
    assert run_cli("score", "--run", "mine", "--rubric", "relevancy", "-j", "sim/c").exit_code == 0
    assert _runs(folder / "evals.duckdb") == {"from-file": ("correctness", 2), "mine": ("relevancy", 1)}
    assert not (folder / "jurybench.duckdb").exists()
    gate = run_cli("check", "--run", "from-file")
    assert gate.exit_code == 0 and "rule >= 1; ok" in gate.stdout
    monkeypatch.setenv("JURYBENCH_DB", str(folder / "other.duckdb"))  # the environment wins over db
    assert run_cli("items", "import", str(folder / "qa.csv")).exit_code == 0
    assert (folder / "other.duckdb").exists()


def test_config_names_another_file_and_init_writes_one(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (folder / "sub").mkdir()
    write(folder / "sub" / "project.yaml", PROJECT)
    assert run_cli("--config", "sub/project.yaml", "items", "import", str(write(folder / "qa.csv", QA))).exit_code == 0
    assert (folder / "sub" / "evals.duckdb").exists()  # db is beside the file that names it
    # issue 86, item 4: --help lists --config, and it may follow --wide
    assert "--config FILE" in run_cli("--help").stdout
    assert run_cli("--wide", "--config", "sub/project.yaml", "sql", "SELECT 1 AS one").exit_code == 0
    dangling = run_cli("--config")
    assert dangling.exit_code == 2 and "--config needs a file" in dangling.stderr
    done = run_cli("init")
    assert done.exit_code == 0 and (folder / "jurybench.yaml").read_text().startswith("# jurybench project file")
    again = run_cli("init")
    assert again.exit_code == 2 and "exists; nothing was written" in again.stderr
    assert run_cli("score", "--help").exit_code == 0  # the written file is valid as it is
    monkeypatch.setenv("JURYBENCH_CONFIG", "")  # none read
    assert "[default: correctness" not in run_cli("score", "--help").stdout


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "defaults:\n  scor: {rubric: x}\n",
            "defaults: 'scor' is not a jurybench command. Valid here: agreement, align",
        ),
        ("defaults:\n  score: {jurors: x}\n", "defaults.score: 'jurors' is not an option of 'jurybench score'. Valid:"),
        ("defaults:\n  stats: {x: 1}\n", "'stats' is a group of commands; name one of them"),
        ("defaults:\n  score: {db: x.duckdb}\n", "(the store is the file's db)"),
        ("store: x\n", "unknown key 'store'. Valid: db, defaults."),
        ("db: [1]\n", "db: a file name"),
        ("defaults: [\n", "malformed YAML"),
    ],
)
def test_a_wrong_project_file_is_one_line(folder: Path, text: str, said: str) -> None:
    write(folder / "jurybench.yaml", text)
    done = run_cli("sql", "SELECT 1")
    assert done.exit_code == 2 and said in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: jurybench.yaml")


def test_the_template_init_writes_plans_a_run_within_its_own_budget(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 82: init's template named anthropic/claude-3-5-haiku-latest, which the bundled price
    list does not know, so the template's own max_cost refused every run. Each of its jurors has
    a price, and score --plan on the template's defaults prices the whole run."""
    from jurybench.jurors import parse_juror, price_of

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert run_cli("init").exit_code == 0
    import yaml

    template = yaml.safe_load((folder / "jurybench.yaml").read_text())
    jurors = template["defaults"]["score"]["juror"]
    assert jurors and all(price_of(parse_juror(j)) is not None for j in jurors), jurors
    assert run_cli("items", "import", str(write(folder / "qa.csv", QA))).exit_code == 0
    plan = run_cli("score", "--plan")
    assert plan.exit_code == 0, plan.stderr
    assert "unknown" not in plan.stdout and "plan only: nothing was called" in plan.stdout + plan.stderr
