"""What every request handler needs: the managers, the settings, and how to change the config.

Kept on `app.state.rest` rather than in module globals, so several servers (one per test, or
one per embedding) live side by side in one process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import Request
from prometheus_client.registry import Collector

from quotactor.core.errors import OperationTimeout
from quotactor.rest.coalesce import Coalescer
from quotactor.rest.http.errors import ApiError
from quotactor.ugm import UserGroupManager

__all__ = [
    "MIB", "ConfigApplier", "HealthChecks", "RestSettings", "RestState", "call_facade",
    "manager_for", "rest_state",
]

T = TypeVar("T")

ConfigApplier = Callable[[bytes], None]
"""Validates a YAML body and applies it to the served partitions; raises `ConfigError`."""

HealthChecks = Callable[[], list[dict[str, Any]]]
"""Extra YuniKorn health checks (a served scheduler's), added to the managers' own."""

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RestSettings:
    """Limits and secrets of one server (see `start_rest_server` for the meaning of each)."""

    admin_token: str | None = None
    max_body_bytes: int = MIB
    body_timeout: float = 10.0
    worker_threads: int = 8
    snapshot_interval: float = 0.05
    shim_token: str | None = None

    def __post_init__(self) -> None:
        if self.admin_token is not None:
            # Presented tokens are stripped, so the configured one is too: a token read from
            # an environment variable or a file often ends in a newline.
            object.__setattr__(self, "admin_token", self.admin_token.strip())
        if self.admin_token is not None and not self.admin_token:
            raise ValueError("an admin token must not be empty or blank")
        if self.shim_token is not None and not self.shim_token.strip():
            raise ValueError("a shim token must not be empty or blank")
        if self.max_body_bytes < 1:
            raise ValueError("max_body_bytes must be positive")
        if self.body_timeout <= 0:
            raise ValueError("body_timeout must be positive")
        if self.worker_threads < 1:
            raise ValueError("worker_threads must be at least 1")
        if self.snapshot_interval < 0:
            raise ValueError("snapshot_interval must not be negative")


@dataclass(frozen=True, slots=True)
class RestState:
    """Everything a handler reads, fixed for the server's life (the mapping itself may change)."""

    managers: Mapping[str, UserGroupManager]
    settings: RestSettings
    apply_config: ConfigApplier
    snapshots: Coalescer
    health_checks: HealthChecks | None = None
    collectors: tuple[Collector, ...] = ()


def rest_state(request: Request) -> RestState:
    """The state of the server that received `request`."""
    state: RestState = request.app.state.rest
    return state


def manager_for(request: Request, name: str) -> UserGroupManager:
    """The manager of partition `name` (decoded already); 404 if it is not served."""
    manager = rest_state(request).managers.get(name)
    if manager is None:
        raise ApiError(404, "Partition not found", f"partition {name!r} is not served here")
    return manager


def call_facade(call: Callable[[], T]) -> T:
    """Run a blocking facade call; a manager stopping under us is a 503, not a 500."""
    try:
        return call()
    except (RuntimeError, OperationTimeout) as exc:  # ManagerClosed, OperationFailed, timeouts
        raise ApiError(503, "Partition unavailable",
                       f"the partition's manager did not answer: {exc}") from exc
