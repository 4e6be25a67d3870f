"""Every simulation test must leave no actor and no server thread of ours behind."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from quotactor.actors.runtime import live_actors


@pytest.fixture(autouse=True)
def no_leftover_actors() -> Iterator[None]:
    yield
    actors = [f"{name} x{count}" for name, count in live_actors().items()]
    threads = [t.name for t in threading.enumerate() if t.name.startswith("quotactor-")]
    assert actors + threads == []
