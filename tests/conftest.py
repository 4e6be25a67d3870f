"""Shared fixtures: every manager a test starts is stopped, and no actor may outlive it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pykka
import pytest

from quotactor.actors.runtime import live_actors
from quotactor.ugm import UserGroupManager

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def live_quotactor_actors() -> list[str]:
    """Actors of ours still registered or running on a pool, and pool threads of ours."""
    actors = [
        ref.actor_class.__name__
        for ref in pykka.ActorRegistry.get_all()
        if ref.actor_class.__module__.startswith("quotactor.")
    ]
    pooled = [f"{name} x{count}" for name, count in live_actors().items()]
    threads = [t.name for t in threading.enumerate() if t.name.startswith("quotactor-")]
    return actors + pooled + threads


@pytest.fixture
def ugm() -> Iterator[UserGroupManager]:
    manager = UserGroupManager.start(timeout=20.0)
    try:
        yield manager
    finally:
        manager.stop()
    assert live_quotactor_actors() == []


@pytest.fixture
def start_ugm() -> Iterator[object]:
    """Start managers with a config; all are stopped at the end of the test."""
    started: list[UserGroupManager] = []

    def start(config: object = None) -> UserGroupManager:
        manager = UserGroupManager.start(config, timeout=20.0)
        started.append(manager)
        return manager

    yield start
    for manager in started:
        manager.stop()
    assert live_quotactor_actors() == []
