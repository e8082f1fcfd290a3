"""score and generate are declared once (jurybench.declare, their parameters in
jurybench.api._declared): the command line, a study step, the HTTP job body and the Python face
are derived from that one declaration, and here they are held to it."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import pytest

import jurybench as jb
from jurybench.declare import CliOption, cli_options, from_cli, from_face, param, parameters_of, python_signature
from tests.conftest import run_cli

DECLARED = {"score": jb.score, "generate": jb.generate}


def _click(name: str) -> Any:
    import typer.main

    from jurybench.cli import app

    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_the_command_line_offers_what_the_declaration_says(name: str) -> None:
    declared = parameters_of(DECLARED[name])
    options = cli_options(declared)
    click = {p.name: p for p in _click(name).params}
    assert list(click) == [o.name for o in options] + ["db"]
    for o in options:
        assert click[o.name].required == o.required, o.name
        assert click[o.name].help == o.help, o.name
        if not o.required:
            assert click[o.name].default == o.default, o.name
    # --progress is on at a terminal, off in Python: the one default the faces do not share
    default = {p.name: p.default for p in declared}
    assert [o.name for o in options if not o.required and o.default != default[o.spells]] == [
        *(["juror", "jury"] if name == "score" else []),
        "progress",
    ]


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_a_study_step_takes_the_command_lines_options(name: str) -> None:
    from jurybench.commands import COMMANDS

    step = COMMANDS[name].options()
    assert list(step) == [o.name for o in cli_options(parameters_of(DECLARED[name]))]
    assert step["give_up_after"].at_least == 1 and step["poll_every"].at_least == 0.01


def test_the_http_job_body_is_the_declarations_http_face() -> None:
    from jurybench.service._requests import JobIn

    fields = JobIn.model_fields
    declared = [p for p in parameters_of(jb.score) if "http" in p.meaning.faces]
    own = ["rubric", "rubric_inline", "jury", "items", "pairs", "item_ids", "pair_ids", "swap"]
    assert list(fields) == own + [p.name for p in declared]
    for p in declared:
        assert fields[p.name].default == p.default and fields[p.name].description == p.meaning.help, p.name
    # the bounds come with the declaration: concurrency 1..64, samples 1..20
    with pytest.raises(ValueError, match="less than or equal to 64"):
        JobIn(rubric="x", concurrency=65)
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        JobIn(rubric="x", samples=0)
    with pytest.raises(ValueError, match="use ci_width"):
        JobIn(rubric="x", until="whenever")


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_the_python_face_shows_the_plain_types(name: str) -> None:
    shown = inspect.signature(DECLARED[name])
    declared = parameters_of(DECLARED[name])
    assert [p.name for p in declared] == list(shown.parameters)[1:]
    assert shown.parameters["run"].annotation == "str | None"
    assert all("d." not in str(q.annotation) for q in shown.parameters.values())


def test_a_stored_job_request_becomes_the_call_the_declaration_gives() -> None:
    """An old request without until_alpha gets the declared default; the engine's options are
    split off for engine_options."""
    from jurybench.service._jobs import _declared_run

    values = _declared_run({"concurrency": 3, "orders": "one", "until": "ci_width(x)<0.5", "where": "1=1"})
    assert values.pop("engine") == {
        "orders": "one",
        "order_seed": 0,
        "concurrency": 3,
        "max_cost": None,
        "batch": False,
        "poll_every": 30.0,
        "no_elide": False,
    }
    assert values == {
        "anchors": None,
        "limit": None,
        "limit_seed": 0,
        "until": "ci_width(x)<0.5",
        "batch_items": 50,
        "until_seed": 0,
        "until_alpha": 0.05,
        "until_cluster": "prompt",
    }


def test_options_that_spell_one_parameter_are_joined(tmp_path: Path) -> None:
    """--juror and --jury FILE are one Python parameter, jury: the file's jury with the --juror
    jurors first."""
    jury_file = tmp_path / "j.yaml"
    jury_file.write_text("jurors: [sim/b]\naggregation: median\n", encoding="utf-8")
    values = from_cli(parameters_of(jb.score), {"rubric": "r", "juror": ["sim/a"], "jury": jury_file})
    assert values["rubric"] == "r" and values["progress"] is True  # the command line's default
    assert [j.model for j in values["jury"].jurors] == ["sim/a", "sim/b"]
    assert values["jury"].aggregation == "median"
    assert "samples" not in values and "ids" not in values  # not the command line's


def _made_up(
    store: object,
    *,
    size: Annotated[int, param("How many.", number="count", at_least=1, http={"le": 9})] = 3,
    names: Annotated[
        list[str] | None,
        param(
            "A name; repeat.",
            faces="cli python",
            cli_name="name",
            short="-n",
            cli_with=(CliOption("first", str | None, "The name to put first."),),
            from_cli=lambda first=None, name=None: [*([first] if first else []), *(name or [])],
        ),
    ] = None,
    secret: Annotated[str | None, param("Python only.", faces="python")] = None,
) -> None:
    """A declaration made up for the test."""


def test_a_declaration_gives_each_face_its_spelling() -> None:
    declared = parameters_of(_made_up)
    assert [(o.name, o.short, o.at_least, o.spells) for o in cli_options(declared)] == [
        ("size", None, 1, "size"),
        ("first", None, None, "names"),
        ("name", "-n", None, "names"),
    ]
    assert from_cli(declared, {"first": "a", "name": ["b", "c"]}) == {"size": 3, "names": ["a", "b", "c"]}
    assert from_face(declared, "http", {"secret": "x"}) == {"size": 3}
    assert str(python_signature(_made_up)) == (
        "(store: 'object', *, size: 'int' = 3, names: 'list[str] | None' = None, secret: 'str | None' = None) -> 'None'"
    )


def test_a_parameter_without_a_meaning_is_refused() -> None:
    def bare(store: object, *, size: int = 3) -> None: ...

    with pytest.raises(jb.JurybenchError, match=r"parameter 'size' needs Annotated\[type, param\(help\)\]"):
        parameters_of(bare)


def test_a_study_is_held_to_the_declared_bounds(tmp_path: Path) -> None:
    """--poll-every's lower bound is declared once (at_least=0.01): the CLI's min= and the study's check."""
    items = tmp_path / "i.csv"
    items.write_text("item_id,response\na,x\n", encoding="utf-8")
    study = tmp_path / "s.yaml"
    study.write_text(
        f"name: x\nsteps:\n  - items import: {{_: '{items}'}}\n"
        "  - score: {rubric: story-quality, juror: ['fake/a'], poll_every: 0}\n",
        encoding="utf-8",
    )
    out = run_cli("study", "run", str(study), "--db", str(tmp_path / "x.duckdb"))
    assert out.exit_code == 2 and "step 2" in out.stderr and "'--poll-every': 0.0 is below 0.01" in out.stderr
    cli = run_cli("score", "-r", "story-quality", "-j", "fake/a", "--poll-every", "0", "--db", str(tmp_path / "y.db"))
    assert cli.exit_code == 2 and "--poll-every" in cli.stderr


# Issue 52: the commands declared once beside score and generate: their api function (or Store
# method), HTTP body, and the options that are the command line's printer's own (--format, or
# where --out writes the drawn ids).
DECLARED_COMMANDS = {
    "calibrate": ("calibrate", "CalibrationIn", ["format"]),
    "jury select": ("select_jury", "JurySelectIn", ["format"]),
    "annotations sample": ("sample_labels", "SampleIn", ["out"]),
    "annotations simulate": ("simulate_annotations", None, []),  # offline studies: no HTTP face
    "check": ("check", None, ["format", "junit"]),
    "export mlflow": ("export_mlflow", None, ["format"]),  # pushes to a tracking server: no HTTP face
    "export otel": ("export_otel", None, ["format"]),  # a gate for CI: no HTTP face; --junit FILE writes its report
    "calibrate apply": ("apply_calibration", "ApplyIn", []),
    "agreement": ("agreement", "AgreementIn", ["format"]),
    "anchors add": ("add_anchors", "AnchorsIn", []),
    "annotations import": ("import_annotations", "AnnotationsUpload", []),  # the labels inline on HTTP
    "judgments import": ("import_judgments", "JudgmentsUpload", []),  # the rows inline on HTTP
    "align": ("align", "AlignIn", ["format"]),
    "report preference": ("preference_report", "PreferenceReportIn", ["format"]),
    "report classification": ("classification_answers", "ClassificationAnswersIn", ["format"]),
}


def _click_path(path: str) -> Any:
    import typer.main

    from jurybench.cli import app

    found = typer.main.get_command(app)
    for word in path.split():
        found = found.commands[word]  # type: ignore[attr-defined]
    return found


@pytest.mark.parametrize("path", sorted(DECLARED_COMMANDS))
def test_every_face_of_a_declared_command_is_its_declaration(path: str) -> None:
    from jurybench import api
    from jurybench.commands import COMMANDS
    from jurybench.service import _requests

    function_name, body_name, own = DECLARED_COMMANDS[path]
    function: Any = api
    for name in function_name.split("."):
        function = getattr(function, name)
    declared = parameters_of(function)
    options = cli_options(declared)
    click = {p.name: p for p in _click_path(path).params}
    assert list(click) == [o.name for o in options] + own + ["db"]
    for o in options:
        assert (click[o.name].required, click[o.name].help) == (o.required, o.help), o.name
        if not o.required:
            assert click[o.name].default == o.default, o.name
    assert list(COMMANDS[path].options()) == [o.name for o in options] + own
    on_http = [p for p in declared if "http" in p.meaning.faces]
    if body_name is None:
        assert on_http == []
        return
    fields = getattr(_requests, body_name).model_fields
    assert list(fields) == [p.meaning.http_name or p.name for p in on_http]
    for p in on_http:
        found = fields[p.meaning.http_name or p.name]
        assert found.description == (p.meaning.http_help or p.meaning.help), p.name
        required = p.required_on("http")
        assert found.is_required() if required else found.default == p.default, p.name
    assert "Annotated" not in str(inspect.signature(function))  # the Python face shows plain types


def test_a_made_up_declared_command_shows_on_every_face(monkeypatch: pytest.MonkeyPatch) -> None:
    """One declaration, four faces: a typer command, a study step, an HTTP body and Python."""
    import typer
    from typer.testing import CliRunner

    from jurybench import api
    from jurybench.cli._common import declared_command, format_option
    from jurybench.commands import Command
    from jurybench.commands._steps import _declared
    from jurybench.service._requests import declared_body

    seen: list[dict[str, Any]] = []

    def runner(db: object, *, format: str = "table", **values: object) -> int:
        seen.append({"format": format, **_declared(_made_up, values)})
        return 0

    app = typer.Typer()
    app.command("made-up")(declared_command(_made_up, runner, doc="Made up.", extra=(format_option(),)))
    app.command("other")(lambda: None)  # a group, so the command is named
    out = CliRunner().invoke(app, ["made-up", "--size", "4", "--first", "a", "-n", "b", "-f", "json"])
    assert out.exit_code == 0, out.output
    assert seen == [{"format": "json", "size": 4, "names": ["a", "b"]}]
    assert "--secret" not in CliRunner().invoke(app, ["made-up", "--help"]).output
    bad = CliRunner().invoke(app, ["made-up", "--size", "10"])
    assert bad.exit_code != 0 and "--size must be at least 1 and at most 9 (got 10)" in str(bad.exception)

    monkeypatch.setattr(api, "made_up", _made_up, raising=False)
    step = Command(runner, declared="made_up")
    assert list(step.options()) == ["size", "first", "name", "format"]
    assert step.run(None, {"size": 2}) == 0 and seen[-1] == {"format": "table", "size": 2, "names": []}

    body = declared_body("MadeUpIn", _made_up, "Made up.")
    assert list(body.model_fields) == ["size"] and body.model_fields["size"].description == "How many."
    with pytest.raises(ValueError, match="less than or equal to 9"):
        body(size=10)


def test_a_study_gates_on_check_as_the_command_line_does(tmp_path: Path) -> None:
    """Issue 52: check is declared, so it is a study step too (it was the CLI's alone)."""
    items = tmp_path / "i.csv"
    items.write_text("item_id,response\na,x\nb,y\n", encoding="utf-8")

    def study(rule: str) -> Path:
        path = tmp_path / f"s{len(list(tmp_path.glob('s*.yaml')))}.yaml"
        path.write_text(
            f"name: gate\nsteps:\n  - items import: {{_: '{items}'}}\n"
            "  - score: {rubric: story-quality, juror: ['fake/a'], run: r}\n"
            f"  - check: {{run: r, min: ['{rule}']}}\n",
            encoding="utf-8",
        )
        return path

    passed = run_cli("study", "run", str(study("coherence>=1")), "--db", str(tmp_path / "a.duckdb"))
    assert passed.exit_code == 0, passed.stderr
    failed = run_cli("study", "run", str(study("coherence>=6")), "--db", str(tmp_path / "b.duckdb"))
    assert failed.exit_code == 1 and "coherence" in failed.stdout + failed.stderr


def test_http_each_bounds_every_element_of_a_listed_value() -> None:
    """``http_each`` bounds each element of a list in the HTTP body (each name at most 3
    characters here); the list itself and the other faces keep their plain type."""
    import pydantic

    from jurybench.declare import http_fields

    def made_up(
        store: object, *, names: Annotated[list[str] | None, param("Names.", http_each={"max_length": 3})] = None
    ) -> None:
        """A made-up declaration."""

    body = pydantic.create_model("MadeUpIn", **http_fields(parameters_of(made_up)))  # type: ignore[call-overload]
    assert body(names=["abc", "de"]).names == ["abc", "de"]
    with pytest.raises(pydantic.ValidationError, match="at most 3 characters"):
        body(names=["abc", "long"])
    assert body().names is None
    schema = body.model_json_schema()["properties"]["names"]
    assert {"items": {"maxLength": 3, "type": "string"}, "type": "array"} in schema["anyOf"]


def _with_rows(
    store: object,
    data: Annotated[
        object,
        param(
            "A file of rows.",
            argument=True,
            cli_name="file",
            cli_type=Path,
            http_name="rows",
            http_help="The rows inline.",
            http_type="jurybench.imports:LabelRows",
            http_only={"min_length": 1, "max_length": 2},
        ),
    ],
) -> None:
    """Made up: a file on the command line, rows inline in the HTTP body."""


def test_a_parameter_named_and_typed_apart_on_http() -> None:
    """Issue 52: ``annotations import`` takes a file on the command line and rows inline over HTTP,
    from one declaration: the body's field has its own name, description and (lazily imported) type."""
    from jurybench.service._requests import declared_body

    (option,) = cli_options(parameters_of(_with_rows))
    assert (option.name, option.argument, option.annotation) == ("file", True, Path)
    body = declared_body("WithRowsIn", _with_rows, "Made up.")
    assert list(body.model_fields) == ["rows"] and body.model_fields["rows"].description == "The rows inline."
    row = {"subject_id": "i1", "annotator": "a", "criterion": "c", "value": 3}
    assert body(rows=[row]).model_dump() == {"rows": [row]}
    with pytest.raises(ValueError, match="at most 2 items"):
        body(rows=[row] * 3)
    with pytest.raises(ValueError, match="Extra inputs"):
        body(rows=[{**row, "other": 1}])
