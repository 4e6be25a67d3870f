"""Every simulation test must leave no actor and no server thread of ours behind."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pykka
import pytest


@pytest.fixture(autouse=True)
def no_leftover_actors() -> Iterator[None]:
    yield
    actors = [ref.actor_class.__name__ for ref in pykka.ActorRegistry.get_all()
              if ref.actor_class.__module__.startswith("quotactor.")]
    threads = [t.name for t in threading.enumerate() if t.name.startswith("quotactor-")]
    assert actors + threads == []
