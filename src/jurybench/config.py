"""Configuration precedence: command-line flag, then ``JURYBENCH_*`` environment, then defaults."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

DEFAULT_DB = "jurybench.duckdb"
DEFAULT_DATA = "../shared/datasets"


def db_path(flag: str | Path | None = None) -> Path:
    """The judgment store: ``--db``, else ``JURYBENCH_DB``, else ``./jurybench.duckdb``."""
    return Path(flag or os.environ.get("JURYBENCH_DB") or DEFAULT_DB)


def lock_wait_s() -> float:
    """Seconds to wait for a store another process holds: ``JURYBENCH_WAIT``, else 10."""
    try:
        return float(os.environ.get("JURYBENCH_WAIT") or 10)
    except ValueError:
        return 10.0


def backpressure() -> bool:
    """Whether a run's requests start on their turn, a few a pass of its event loop, so answers
    are read between starts (the default; ``JURYBENCH_BACKPRESSURE=off`` lets them start in
    bursts, as ``make bench`` does to compare)."""
    return (os.environ.get("JURYBENCH_BACKPRESSURE") or "on").strip().lower() not in ("off", "0", "false", "no")


# DuckDB's cache on the engine's and the importers' connections: without a cap DuckDB keeps
# every block it has read or written (up to 80 % of RAM), so a run's memory grew with the store.
DEFAULT_DUCKDB_MEMORY = "64MB"


def duckdb_memory() -> str | None:
    """The memory limit of DuckDB while the engine writes a run's answers, while the items
    and pairs importers write (the CLI's ``score``, ``generate``, ``items import``, ``pairs
    import``), and while ``stats friedman`` reads a run a slice at a time:
    ``JURYBENCH_DUCKDB_MEMORY`` (e.g. ``1GB``; ``default`` leaves DuckDB's own, 80 % of RAM),
    else 64MB. Beyond it DuckDB spills to ``<store>.tmp`` beside the store. Other analysis
    (statistics, SQL, the viewer, a run's finishing steps) keeps DuckDB's own limit; the server
    has ``--sql-memory-mb``."""
    import re

    from jurybench.errors import JurybenchError

    value = (os.environ.get("JURYBENCH_DUCKDB_MEMORY") or DEFAULT_DUCKDB_MEMORY).strip()
    if value.lower() == "default":
        return None
    if not re.fullmatch(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value, flags=re.IGNORECASE):
        raise JurybenchError(
            f"JURYBENCH_DUCKDB_MEMORY={value!r} is not a size.",
            hint="Use a size such as 512MB or 2GB, or 'default' for DuckDB's own limit (80 % of RAM).",
        )
    return value


def data_path(flag: str | Path | None = None) -> Path:
    """Reference datasets: ``--data``, else ``JURYBENCH_DATA``, else ``../shared/datasets``."""
    return Path(flag or os.environ.get("JURYBENCH_DATA") or DEFAULT_DATA)


def project_root() -> Path:
    """The folder holding ``rubrics/`` and ``calibration/`` (``JURYBENCH_HOME`` or the cwd)."""
    return Path(os.environ.get("JURYBENCH_HOME") or Path.cwd())


def shipped_rubrics() -> Path:
    """The rubrics shipped inside the package (package data, so a plain ``pip install`` has them)."""
    from importlib.resources import files

    return Path(str(files("jurybench") / "rubrics"))


def shipped_juries() -> Path:
    """The jury files shipped with the package (./juries links to them in the repository)."""
    from importlib import resources

    return Path(str(resources.files("jurybench") / "juries"))


def rubric_dirs() -> list[Path]:
    """Where rubric names are looked up: the project's ``rubrics/``, then the shipped ones."""
    dirs = [project_root() / "rubrics"]
    shipped = shipped_rubrics()
    if shipped.resolve() not in {d.resolve() for d in dirs}:
        dirs.append(shipped)
    return dirs


def load_reference(reference: str) -> Callable[[], None]:
    """The callable an entry point's value names (``"package.module:function"``)."""
    import importlib

    module, _, name = reference.partition(":")
    found: Callable[[], None] = getattr(importlib.import_module(module), name)
    return found


def load_plugins(group: str, what: str) -> None:
    """Call every installed package's entry point in ``group`` (a callable that registers its
    juror kinds, statistics, ...); jurybench's own entries are skipped (its registries load their
    built-ins by the same reference, installed or not). A broken plug-in is named in one line,
    not a crash at every command."""
    from importlib.metadata import entry_points

    from jurybench.errors import JurybenchError

    for point in entry_points(group=group):
        if point.value.startswith("jurybench."):
            continue  # the built-ins, registered by their own package
        try:
            point.load()()
        except Exception as exc:
            raise JurybenchError(
                f"{what} from '{point.value}' ({point.name}) failed to load: {exc}",
                hint="Fix or uninstall the package that provides them.",
            ) from None


class Plugins:
    """What a registry holds is loaded once, at its first read: its built-ins (``builtins``, the
    reference to a callable that registers them, written as an entry point's value and named as
    one in ``pyproject.toml``), then the entry points of installed packages in ``group``. One
    loader for every registry (juror kinds, rubric kinds, statistics, judgment formats): built-ins
    are registered the same way a third party's are, and a registry never imports the modules
    that fill it (they import it). ``loaded`` may be set to False to load again (tests of
    plug-ins)."""

    def __init__(self, group: str, what: str, builtins: str) -> None:
        self.group, self.what, self.builtins = group, what, builtins
        self.loaded = False
        self._lock = threading.Lock()

    def load(self) -> None:
        if self.loaded:
            return
        with self._lock:
            if self.loaded:
                return
            self.loaded = True
        load_reference(self.builtins)()
        load_plugins(self.group, self.what)


class Registry(Generic[T]):
    """Named things a plug-in can add (juror kinds, rubric kinds, statistics), one mechanism for
    all: held by name, a second registration of a name refused unless ``replace``, and loaded
    once at the first read (built-ins first, then installed packages' entry points in ``group``:
    :class:`Plugins`). ``label`` names an entry in messages (``"statistic '{}'"``);
    ``function`` is the register function a user calls (named in the hint)."""

    def __init__(self, group: str, what: str, builtins: str, *, label: str, function: str) -> None:
        self.plugins = Plugins(group, what, builtins)
        self.label, self.function = label, function
        self._items: dict[str, T] = {}
        self._lock = threading.Lock()

    def register(self, name: str, item: T, *, replace: bool = False) -> None:
        from jurybench.errors import JurybenchError

        with self._lock:
            if name in self._items and not replace and self._items[name] is not item:
                raise JurybenchError(
                    f"{self.label.format(name)} is registered already.",
                    hint=f"Pass replace=True to {self.function} to replace it.",
                )
            self._items[name] = item

    def unregister(self, name: str) -> None:
        with self._lock:
            self._items.pop(name, None)

    def items(self) -> dict[str, T]:
        """Every entry by name, in the order registered (built-ins first)."""
        self.plugins.load()
        with self._lock:
            return dict(self._items)

    def get(self, name: str) -> T | None:
        self.plugins.load()
        with self._lock:
            return self._items.get(name)


def load_env_file(path: Path | None = None) -> list[str]:
    """Provider keys and settings from a ``.env`` file (``KEY=VALUE`` lines; ``export``, quotes
    and ``#`` comments allowed), as the command line reads ``./.env`` when it starts: a variable
    already set in the environment wins. ``JURYBENCH_ENV_FILE`` names another file; set it empty
    to read none. Returns the names set (never their values). A line that is not ``KEY=VALUE``
    is refused in one line naming the file and the line."""
    import re

    from jurybench.errors import JurybenchError

    if path is None:
        named = os.environ.get("JURYBENCH_ENV_FILE")
        if named == "":
            return []
        path = Path(named) if named else Path(".env")
    if not path.is_file():
        return []
    set_here: list[str] = []
    found_values: list[tuple[str, str]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JurybenchError(
            f"{path}: cannot read it ({exc.__class__.__name__}).", hint="Save it as UTF-8 text."
        ) from None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        found = re.fullmatch(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)", line)
        if found is None:
            raise JurybenchError(
                f"{path} line {number}: not KEY=VALUE.",
                hint="Write each setting as NAME=value (a # starts a comment), or set JURYBENCH_ENV_FILE= to read no file.",
            )
        name, value = found.group(1), found.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        found_values.append((name, value))
    for name, value in found_values:  # only once every line was read: a bad line sets nothing
        if name not in os.environ:
            os.environ[name] = value
            set_here.append(name)
    return set_here
