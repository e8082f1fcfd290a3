"""Which server holds a store for its whole life: a server leaves ``<store>.server.json``
(pid and address) beside the file, so that any other process pointed at the store can say
who holds it instead of waiting for a lock that will not be released."""

from __future__ import annotations

import json
import os
from pathlib import Path


def server_file(db: Path) -> Path:
    return db.with_name(db.name + ".server.json")


def holder_of(db: Path) -> dict[str, object] | None:
    """The running server that holds ``db`` (from its server file), if its process is alive."""
    path = server_file(db)
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return dict(info)
