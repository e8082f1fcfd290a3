"""The packages' dependency order (docs/architecture.md), read from every import with ``ast``:
module-level and inside functions alike. A package imports only packages below it, and only
their public names (never a module or name with a leading underscore)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "jurybench"
# Lowest first. A package may import the ones before it, never the ones after it.
ORDER = [
    "errors",
    "declare",
    "config",
    "redact",
    "testing",
    "store",
    "rubric",
    "jurors",
    "jury",
    "engine",
    "imports",
    "generation",
    "annotations",
    "calibration",
    "stats",
    "alignment",
    "exports",
    "plots",
    "datasets",
    "api",
    "commands",
    "integrations",
    "studies",
    "validity",
    "viewer",
    "service",
    "cli",
]


def package_of(path: Path) -> str:
    parts = path.relative_to(SRC).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, imported jurybench module, names) for every import in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "jurybench":
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if a.name.split(".")[0] == "jurybench"]
    return found


def violations() -> list[str]:
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        source = package_of(path)
        where = f"{path.relative_to(SRC.parent)}:"
        for line, module, names in imports(path):
            parts = module.split(".")
            # 'from jurybench import X': X is a package or a public name
            targets = [(n, []) for n in names] if len(parts) == 1 else [(parts[1], parts[2:])]
            for target, rest in targets:
                if target == source or target in ("__version__", "JurybenchError"):
                    continue
                if source == "__init__":  # the face re-exports the API
                    if target not in ("api", "stats", "errors"):
                        bad.append(f"{where}{line} the package root imports {target}")
                    continue
                if target not in ORDER:
                    bad.append(f"{where}{line} imports {module}: {target} is not in the dependency order")
                    continue
                if ORDER.index(target) > ORDER.index(source):
                    bad.append(f"{where}{line} {source} imports {target}, which is above it")
                if any(p.startswith("_") for p in rest) or any(n.startswith("_") for n in names if len(parts) > 1):
                    bad.append(f"{where}{line} {source} imports a private part of {target}: {module} {names}")
    return bad


def test_every_package_is_in_the_order() -> None:
    packages = {package_of(p) for p in SRC.rglob("*.py")} - {"__init__"}
    assert packages - {"py"} <= set(ORDER), packages - set(ORDER)


def test_imports_follow_the_dependency_order_and_stay_public() -> None:
    assert violations() == []


def test_the_check_sees_a_violation(tmp_path: Path, monkeypatch: object) -> None:
    """The check itself can fail: an upward import and a private one, planted in a copy."""
    import shutil

    import tests.test_architecture as me

    copy = tmp_path / "jurybench"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "store" / "_planted.py").write_text("def f():\n    from jurybench.service import Store\n")
    (copy / "stats" / "_planted.py").write_text("from jurybench.engine._run import score\n")
    old = me.SRC
    me.SRC = copy
    try:
        found = violations()
    finally:
        me.SRC = old
    assert any("store imports service, which is above it" in v for v in found)
    assert any("stats imports a private part of engine" in v for v in found)


MAX_FUNCTION_LINES = 160


def lines_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's lines, the functions and classes defined inside it included: a factory of
    nested routes (the service's create_app was 420 lines of 24 closures) is as long to read as
    it looks (issue 41)."""
    return (function.end_lineno or function.lineno) - function.lineno + 1


def long_functions(src: Path) -> dict[str, int]:
    found = {}
    for path in src.rglob("*.py"):
        if "_migrations" in path.parts:  # frozen SQL text, never edited (ordered named migrations)
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and lines_of(node) > MAX_FUNCTION_LINES:
                found[f"{path.relative_to(src)}:{node.name}"] = lines_of(node)
    return found


def test_no_function_is_too_long_to_read_in_one_sitting() -> None:
    """Functions are capped, nested functions counted, not files: a file holds one
    responsibility however long it is, and is never split by size alone (issue 28)."""
    assert long_functions(SRC) == {}


def test_the_length_check_sees_a_long_function_and_counts_what_is_nested_in_it(tmp_path: Path) -> None:
    body = "\n".join(f"    x{k} = {k}" for k in range(MAX_FUNCTION_LINES + 5))
    nested = (
        "def factory():\n    def inner():\n"
        + "\n".join(f"        y{k} = {k}" for k in range(200))
        + "\n    return inner\n"
    )
    short_parts = "def routes():\n" + "".join(
        f"    def r{k}():\n" + "".join(f"        z{j} = {j}\n" for j in range(20)) for k in range(9)
    )
    (tmp_path / "m.py").write_text(f"def long():\n{body}\n\n{nested}\n{short_parts}", encoding="utf-8")
    # routes: nine short closures, 1 + 9 x 21 = 190 lines in all, each under the cap
    assert long_functions(tmp_path) == {
        "m.py:long": MAX_FUNCTION_LINES + 6,
        "m.py:factory": 203,
        "m.py:inner": 201,
        "m.py:routes": 190,
    }


def import_circles(src: Path) -> list[list[str]]:
    """Circles of imports between the files of one package (module-level and inside functions
    alike: a lazy import still ties two files together)."""
    files = {}
    for path in src.rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        if len(parts) < 2:
            continue
        if parts[-1] == "__init__":  # a package's face is a file too (``jurybench.stats.builtin``)
            parts = parts[:-1]
        files["jurybench." + ".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        package = "jurybench." + module.split(".")[1]
        found = set()
        for _, imported, names in imports(path):
            # ``from jurybench.stats import params`` reads the module params; ``from
            # jurybench.stats import statistic`` reads the face, which imports the modules
            found |= {f"{imported}.{n}" if f"{imported}.{n}" in files else imported for n in names} or {imported}
        graph[module] = {m for m in found if (m == package or m.startswith(package + ".")) and m != module}
    graph = {m: {d for d in deps if d in graph} for m, deps in graph.items()}
    circles: list[list[str]] = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_no_import_circle_between_files() -> None:
    assert import_circles(SRC) == []


def test_the_circle_check_sees_one(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "jurybench"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "store" / "_a.py").write_text("def f():\n    from jurybench.store._b import g\n")
    (copy / "store" / "_b.py").write_text("from jurybench.store._a import f\n")
    assert import_circles(copy) == [["jurybench.store._a", "jurybench.store._b"]]


def test_the_circle_check_sees_one_through_a_package_face(tmp_path: Path) -> None:
    """Issue 52: the check skipped ``__init__.py``, so a registry that loaded its built-ins from
    the package face they import went unseen."""
    import shutil

    copy = tmp_path / "jurybench"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "rubric" / "__init__.py").open("a", encoding="utf-8") as face:
        face.write("from jurybench.rubric._planted import planted\n")
    (copy / "rubric" / "_planted.py").write_text("def planted():\n    from jurybench.rubric import RubricKind\n")
    assert import_circles(copy) == [["jurybench.rubric", "jurybench.rubric._planted"]]


def test_every_module_imports_and_type_only_names_stay_type_only() -> None:
    """Annotations name types imported for type checking alone (``if TYPE_CHECKING``, e.g. the
    DuckDB connection): a module that evaluates them at import (a registry reading a
    function's parameters) must still import."""
    import importlib
    import pkgutil

    import jurybench

    names = [m.name for m in pkgutil.walk_packages(jurybench.__path__, "jurybench.") if not m.name.endswith("__main__")]
    for name in names:
        importlib.import_module(name)
    assert len(names) > 100


PUBLIC = {"api", "stats", "jurors", "testing", "errors", "imports"}  # docs/architecture.md, "What is public"


def test_internal_packages_say_so_and_export_only_what_other_stages_use() -> None:
    import ast
    import subprocess

    repo = SRC.parent.parent
    unused = []
    for init in sorted(SRC.glob("*/__init__.py")):
        package = init.parent.name
        tree = ast.parse(init.read_text(encoding="utf-8"))
        if package in PUBLIC:
            continue
        assert "Internal:" in (ast.get_docstring(tree) or ""), f"{package}/__init__.py does not say it is internal"
        names = next(
            (
                ast.literal_eval(n.value)
                for n in tree.body
                if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
            ),
            [],
        )
        for name in names:
            users = subprocess.run(
                ["grep", "-rlw", name, str(SRC), *(str(repo / d) for d in ("tests", "bench", "docs"))],
                capture_output=True,
                text=True,
            ).stdout.split()
            if not [u for u in users if f"/jurybench/{package}/" not in u]:
                unused.append(f"{package}.{name}")
    assert unused == [], f"exported, but no other stage, test, bench or doc uses them: {unused}"


# Issue 28: 51 per 1,000 lines of src/ before the house was typed (inspect_ai and simonw/llm:
# about 10). What is left is mostly JSON-shaped data (provider payloads, statistic results,
# rows as DuckDB returns them) and the dynamic parts of the registries.
# Issue 41: 26.0 before the formatter ran over the 1,071 lines it had been kept from; 23.8
# after, with the same names in more lines (the drop is lines, not types). Then 18.3: parameters
# and results that only pass values on take and give object (mypy strict checks every use), the
# ASGI apps and the job manager's hooks their own types.
# Issue 52: 17.8 before; 12.4 after every `dict[str, Any]`, `Mapping[str, Any]` and `list[Any]`
# outside the faces (api, cli, HTTP bodies and routes, declarations: their types are read at
# run time or by users' type checkers) was tried as `object` and kept where mypy --strict
# stayed clean (202 of them), so every use of those values is checked.
MAX_ANY_PER_1000_LINES = 15


def any_per_1000_lines(src: Path) -> float:
    """``Any`` as a name in code (not in comments or strings), per 1,000 lines."""
    import io
    import tokenize

    names = lines = 0
    for path in src.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        lines += text.count("\n")
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        names += sum(1 for t in tokens if t.type == tokenize.NAME and t.string == "Any")
    return 1000 * names / max(lines, 1)


def test_any_stays_rare() -> None:
    assert any_per_1000_lines(SRC) <= MAX_ANY_PER_1000_LINES


def test_the_any_count_sees_names_not_words(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('"""Any text."""\nfrom typing import Any\n# Any\nx: Any = 1\n', encoding="utf-8")
    assert any_per_1000_lines(tmp_path) == 1000 * 2 / 4


# Issue 41: 1,071 '# fmt: skip' markers kept the formatter from hand-aligned lines; it now runs
# over all of them. A table whose alignment carries meaning may keep one, under this ceiling.
MAX_FMT_SKIPS = 10


def fmt_skips(*folders: Path) -> int:
    import io
    import tokenize

    found = 0
    for folder in folders:
        for path in folder.rglob("*.py"):
            tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
            found += sum(1 for t in tokens if t.type == tokenize.COMMENT and t.string.strip() == "# fmt: skip")
    return found


def test_the_formatter_runs_over_nearly_everything() -> None:
    assert fmt_skips(SRC, REPO / "tests", REPO / "bench") <= MAX_FMT_SKIPS


def test_the_fmt_skip_count_sees_comments_not_strings(tmp_path: Path) -> None:
    text = 'x = [1,  2]  # fmt: skip\ny = "# fmt: skip"\n# fmt: skip\n'
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    assert fmt_skips(tmp_path) == 2


def registries() -> dict[str, object]:
    """Every registry a plug-in adds to, by its entry point group."""
    from jurybench.imports._formats import REGISTRY as formats
    from jurybench.jurors._lookup import REGISTRY as juror_kinds
    from jurybench.rubric._kinds import REGISTRY as rubric_kinds
    from jurybench.stats._registry import REGISTRY as statistics

    return {r.plugins.group: r for r in (juror_kinds, rubric_kinds, statistics, formats)}


def test_each_registry_loads_its_built_ins_by_the_entry_point_pyproject_names() -> None:
    """Issue 52: ``pyproject.toml`` named a function that did not exist
    (``jurybench.jurors._builtin_kinds:register``), and the rubric kinds had no entry. Each
    registry now loads its built-ins by the reference its entry point gives, so the two cannot
    part; and the reference resolves to a function."""
    import tomllib

    from jurybench.config import load_reference

    points = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    # pytest's plugin entry (pytest11) is no registry of ours: the jurybench_store fixture
    assert points.pop("pytest11") == {"jurybench": "jurybench.integrations.pytest_plugin"}
    found = {group: registry.plugins.builtins for group, registry in registries().items()}  # type: ignore[attr-defined]
    assert found == {group: entries["builtin"] for group, entries in points.items()}
    assert len(found) == 4
    for reference in found.values():
        assert callable(load_reference(reference))


WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
]
WORDS += ["sixteen", "seventeen", "eighteen", "nineteen", "twenty"]


def test_counts_the_docs_give_are_the_registries_counts() -> None:
    """Issue 52: docs/extending.md said sixteen built-in statistics when there were seventeen. A
    count the docs write ("the five built-in kinds", "17 built-in statistics") is checked against
    what is registered."""
    import re

    from jurybench.imports._formats import judgment_formats
    from jurybench.rubric._kinds import rubric_kinds
    from jurybench.stats import statistics

    actual = {"statistics": len(statistics()), "formats": len(judgment_formats()), "kinds": len(rubric_kinds())}
    pattern = re.compile(
        r"\b(\d+|" + "|".join(WORDS) + r") built-in (statistics|formats|judgment formats|kinds)\b", re.I
    )
    written = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for m in pattern.finditer(path.read_text(encoding="utf-8")):
            said = m.group(1).lower()
            n = int(said) if said.isdigit() else WORDS.index(said)
            what = m.group(2).split()[-1].lower()
            written.append((path.name, what, n, actual[what]))
    assert written, "the docs name at least one count (docs/extending.md)"
    assert [w for w in written if w[2] != w[3]] == []


KIND_NAMES = ("pointwise", "conversation", "pairwise", "preference", "classification", "inventory", "generation")
# A kind compared by name: ``rubric.kind == "preference"``, ``kind in ("classification", ...)``,
# ``getattr(rubric, "kind", None)``, or a run row's ``rubric_kind`` read for its name (a
# calibration file's ``artifact["kind"]`` is the file's format, not a rubric kind).
KIND_CHECK = (
    r"""(?:\bkind|rubric_kind["']\]?\)?)\s*(==|!=|\bin\b|\bnot in\b)\s*\(?\s*["'](?:"""
    + "|".join(KIND_NAMES)
    + r""")["']"""
    r"""|getattr\([\w.]+,\s*["']kind["']"""
)


def kind_checks(src: Path) -> list[str]:
    """Lines outside the kinds (``rubric/_model.py``, ``generation/_spec.py``) and the frozen
    migrations that ask which kind a rubric is by its name."""
    import re

    pattern = re.compile(KIND_CHECK)
    found = []
    for path in sorted(src.rglob("*.py")):
        where = path.relative_to(src).as_posix()
        if where in ("rubric/_model.py", "generation/_spec.py") or "_migrations" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{where}:{number}: {line.strip()}")
    return found


def test_kinds_answer_for_themselves() -> None:
    """Issue 52: re-asks, the default jury rule, JSON answers, generation and a preference's
    votes were decided by comparing a rubric's kind with a name (a plug-in kind got the wrong
    answer to each); each kind now says them (``RubricKind``'s class attributes)."""
    assert kind_checks(SRC) == []


def test_the_kind_check_sees_a_name_compared(tmp_path: Path) -> None:
    lines = [
        'if rubric.kind == "preference":',
        "if getattr(rubric, 'kind', None) in ('classification', 'inventory'):",
        'ok = run.get("rubric_kind") != "preference"',
        'if artifact["kind"] == "preference":',
        "if rubric.votes:",
        'name = "pairwise" if design.pairwise else "pointwise"',
    ]
    (tmp_path / "m.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [f.split(":")[1] for f in kind_checks(tmp_path)] == ["1", "2", "3"]
