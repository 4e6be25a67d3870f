"""Fixtures for the elastic quota tests: every service a test starts is stopped."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from quotactor.actors.runtime import live_actors
from quotactor.elastic import ElasticQuotaService


class FakeClock:
    """A clock the test moves by hand, so the over-use monitor never needs real time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def start_service() -> Iterator[Callable[..., ElasticQuotaService]]:
    """Start services with `ElasticQuotaService.start` arguments; all stopped at the end."""
    started: list[ElasticQuotaService] = []

    def start(*args: object, **kwargs: object) -> ElasticQuotaService:
        service = ElasticQuotaService.start(*args, timeout=20.0, **kwargs)  # type: ignore[arg-type]
        started.append(service)
        return service

    yield start
    for service in started:
        service.stop()
    assert live_actors() == {}
    assert [t.name for t in threading.enumerate() if t.name.startswith("quotactor-")] == []
