"""The config actor: validates a new configuration off the hot path, then switches atomically.

Validation of a large config can take a noticeable fraction of a second; doing it here keeps the
manager routing increases meanwhile. Only a fully valid config becomes a limit table, and the
table reaches the manager as one message, so every increase is judged under the old table or
the new one, never a mix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pykka

from quotactor.actors._base import SafeActor
from quotactor.actors._pool import call
from quotactor.actors.messages import SwitchTable
from quotactor.core.limits import LimitTable
from quotactor.limit_table import limit_table


@dataclass(frozen=True, slots=True)
class ApplyConfig:
    """Asked; the answer is `(loaded config, limit table)`, or the `ConfigError` raised."""

    source: Any


class ConfigActor(SafeActor):
    """Turns configs into limit tables for one partition and hands them to its manager."""

    def __init__(self, manager: pykka.ActorRef[Any], partition: str) -> None:
        super().__init__()
        self.manager = manager
        self.partition = partition

    def handle(self, message: Any) -> Any:
        if not isinstance(message, ApplyConfig):
            raise TypeError(f"unexpected message {type(message).__name__}")
        loaded, table = limit_table(message.source, self.partition)
        call(self.manager, SwitchTable(table), 30.0)
        return loaded, table


__all__ = ["ApplyConfig", "ConfigActor", "LimitTable"]
