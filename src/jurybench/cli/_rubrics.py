"""Commands over rubric files: list, show and check them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from jurybench.cli._common import (
    DbOption,
    rubrics_app,
)


@rubrics_app.command("list")
def rubrics_list() -> None:
    """Rubrics found in ./rubrics and the shipped ones."""
    from jurybench.rubric import load_rubric, rubric_files

    for name, path in rubric_files():
        rubric = load_rubric(path)
        typer.echo(f"{name:20s} {rubric.kind:14s} {len(rubric.dimensions):3d} dims  {rubric.content_hash[:12]}  {path}")


@rubrics_app.command("show")
def rubrics_show(
    name: Annotated[str, typer.Argument(help="Rubric name or YAML path.")],
    language: Annotated[str | None, typer.Option(help="Show the template for this language.")] = None,
) -> None:
    """Validate a rubric and print its hash, dimensions and answer schema (or labels / structure)."""
    from jurybench.rubric import (
        answer_format,
        load_rubric,
        response_model,
    )

    rubric = load_rubric(name)
    typer.echo(f"{rubric.name} v{rubric.version} ({rubric.kind}) hash {rubric.content_hash}")
    typer.echo(f"dimensions: {', '.join(rubric.dimensions)}")
    typer.echo(f"languages: {', '.join(sorted(rubric.templates))}")
    if not rubric.answers_in_json:  # a label or numbered lines: show what and a prompt asking for it
        lang = language or rubric.default_language
        for line in rubric.describe(lang):
            typer.echo(line)
        example = rubric.example_subject(lang)
        arm = ", ".join(f"{k}={v}" for k, v in json.loads(example.get("treatment") or "{}").items())
        messages, _ = rubric.render(example, "", "example")
        typer.echo(f"-- an example prompt ({lang}{f', {arm}' if arm else ''}):")
        for message in messages:
            typer.echo(f"[{message['role']}] {message['content']}")
        return
    typer.echo(json.dumps(response_model(rubric).model_json_schema(), indent=2))
    if language:
        template = rubric.template_for(language)
        typer.echo(template.system)
        typer.echo(template.user)
    typer.echo(answer_format(rubric))


@rubrics_app.command("check")
def rubrics_check(paths: Annotated[list[Path], typer.Argument(help="Rubric YAML files.")]) -> None:
    """Validate rubric files; exit 2 at the first invalid one."""
    from jurybench.rubric import load_rubric

    for path in paths:
        rubric = load_rubric(path)
        typer.echo(f"ok {path}: {rubric.kind}, {len(rubric.dimensions)} dims, hash {rubric.content_hash[:12]}")


@rubrics_app.command("diff")
def rubrics_diff(
    first: Annotated[
        str, typer.Argument(help="A rubric: NAME@VERSION or a hash prefix in the store, a name or a file.")
    ],
    second: Annotated[str, typer.Argument(help="The rubric to compare it with, given the same ways.")],
    exit_code: Annotated[
        bool, typer.Option("--exit-code", help="Exit 1 when they differ (as git diff --exit-code).")
    ] = False,
    db: DbOption = None,
) -> None:
    """How two rubrics differ, as a unified diff of their validated YAML (e.g. the version
    'jurybench align' kept against the original)."""
    from jurybench.config import db_path
    from jurybench.rubric import diff_rubrics, find_rubric, is_stored_name

    def both(con: object | None) -> str:
        return diff_rubrics(find_rubric(first, con), find_rubric(second, con))

    stored = any(
        is_stored_name(t) or (len(t) >= 8 and all(c in "0123456789abcdef" for c in t)) for t in (first, second)
    )
    path = db_path(db)
    if stored and path.exists():
        from jurybench.store import reading

        with reading(path) as con:
            text = both(con)
    else:
        text = both(None)
    if not text:
        typer.echo("the same rubric (identical content hash)")
        return
    typer.echo(text, nl=False)
    if exit_code:
        raise typer.Exit(1)
