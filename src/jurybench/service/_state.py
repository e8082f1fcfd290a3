"""What the service's routes share: its configuration, the app's state (the store, the group
writer, the job manager) as FastAPI dependencies, the common query parameters, and stored rows
as JSON. Each route module (``_route_*.py``) is an ``APIRouter`` that reads the state through
these dependencies; ``create_app`` assembles them."""

import contextlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, cast

from fastapi import Depends, Query, Request
from fastapi import Path as PathParam

from jurybench.engine import JobsOnRay
from jurybench.service._jobs import JobManager
from jurybench.service._store import GroupWriter, Store


@dataclass
class ServiceConfig:
    db: Path
    token: str | None = None
    workers: int = 2
    max_body_bytes: int = 10 * 1024 * 1024
    sql_timeout_s: float = 10.0
    sql_max_rows: int = 10_000
    sql_memory_mb: int = 512
    calibration_dir: Path | None = None
    default_jury: Mapping[str, object] | None = None  # used when a job gives none (serve --demo: a simulated jury)
    url: str = ""
    warm_viewer: bool = True  # compute the newest runs' page aggregates in the background at start
    show_jury: bool = False  # the viewer takes labels blind unless this (serve --show-jury)
    extra: dict[str, object] = field(default_factory=dict)
    # Host headers answered (None: any; 'jurybench serve' sets the address it listens as).
    allowed_hosts: tuple[str, ...] | None = None
    # Where jobs make their calls: "local" (the server's process) or "ray" (serve --executor ray:
    # each job's calls spread over ray_workers Ray actors; the cluster at address, or a Ray of this machine).
    executor: str = "local"
    address: str | None = None
    ray_workers: int | None = None

    @property
    def calibrations(self) -> Path:
        return self.calibration_dir or self.db.parent / "calibration"


@dataclass
class ServiceState:
    """The app's own objects, at ``app.state.jurybench`` while it runs."""

    config: ServiceConfig
    store: Store | None = None
    group: GroupWriter | None = None
    jobs: JobManager | None = None
    ray: JobsOnRay | None = None  # serve --executor ray: Ray, connected as the server starts


def state_of(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.jurybench
    return state


def _started(request: Request, part: str) -> object:
    value = getattr(state_of(request), part)
    assert value is not None, f"the service's {part} starts with it"
    return value


# Dependencies are async (they only look up the app's state): a sync one would cost every
# request a trip through the thread pool.
async def _store(request: Request) -> Store:
    return cast(Store, _started(request, "store"))


async def _jobs(request: Request) -> JobManager:
    return cast(JobManager, _started(request, "jobs"))


async def _group(request: Request) -> GroupWriter:
    return cast(GroupWriter, _started(request, "group"))


async def _config(request: Request) -> ServiceConfig:
    return state_of(request).config


StoreDep = Annotated[Store, Depends(_store)]
JobsDep = Annotated[JobManager, Depends(_jobs)]
GroupDep = Annotated[GroupWriter, Depends(_group)]
ConfigDep = Annotated[ServiceConfig, Depends(_config)]
Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=10_000_000)]
Id = Annotated[str, PathParam(min_length=1, max_length=256)]
Dataset = Annotated[str | None, Query(max_length=256)]


def plain(value: object) -> object:
    """A JSON-safe value (timestamps and decimals as text; NaN and infinities as null)."""
    import datetime as dt
    import decimal
    import math

    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dt.date | dt.datetime | dt.time | dt.timedelta | decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def rows(store: Store, sql: str, params: list[object]) -> list[dict[str, object]]:
    """A query's rows as JSON objects (JSON columns parsed)."""
    with store.cursor() as cur:
        result = cur.execute(sql, params)
        names = [d[0] for d in result.description]
        out: list[dict[str, object]] = []
        for row in result.fetchall():
            record: dict[str, object] = {}
            for name, value in zip(names, row, strict=True):
                if name in ("treatment", "metadata", "params", "result") and isinstance(value, str):
                    with contextlib.suppress(ValueError):
                        value = json.loads(value)
                record[name] = plain(value)
            out.append(record)
    return out


def listing(
    store: Store, table: str, key: str, dataset: str | None, limit: int, offset: int
) -> list[dict[str, object]]:
    """A page of a table's rows by key (one dataset's when given)."""
    where = " WHERE dataset = ?" if dataset else ""
    return rows(
        store,
        f"SELECT * FROM {table}{where} ORDER BY {key} LIMIT ? OFFSET ?",
        [*([dataset] if dataset else []), limit, offset],
    )


__all__ = [
    "ConfigDep",
    "Dataset",
    "GroupDep",
    "Id",
    "JobsDep",
    "Limit",
    "Offset",
    "ServiceConfig",
    "ServiceState",
    "StoreDep",
    "listing",
    "plain",
    "rows",
    "state_of",
]
