"""The config actor: validates a new configuration off the hot path, then switches atomically.

Validation of a large config can take a noticeable fraction of a second; doing it here keeps the
manager routing increases meanwhile. Only a fully valid config becomes a limit table, and the
table reaches the manager as one message, so every increase is judged under the old table or
the new one, never a mix. Applies are serialised by this actor (one at a time, in the order
asked), and the manager publishes the config with the table it enforces, so the config a
manager reports is the one it enforces whatever concurrent `update_config` calls do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quotactor.actors.manager import ManagerActor
from quotactor.actors.messages import SwitchTable
from quotactor.actors.runtime import Actor, WorkerPool, call
from quotactor.config.limit_table import limit_table
from quotactor.config.model import SchedulerConfig
from quotactor.core.limits import LimitTable


@dataclass(frozen=True, slots=True)
class ApplyConfig:
    """Asked; the answer is `(loaded config, limit table)`, or the `ConfigError` raised.
    `timeout` bounds the wait for the manager's switch; `pause_collector` is `load_config`'s."""

    source: Any
    timeout: float
    pause_collector: bool = False


class ConfigActor(Actor[ApplyConfig]):
    """Turns configs into limit tables for one partition and hands them to its manager.

    An actor of the package's runtime on a pool of its own (daemon threads, so that a host
    process can always exit). Its handler waits for the manager's switch, which the runtime
    allows because the manager's handlers never wait (invariant 6). A failing apply is answered
    with its error and the actor lives on.
    """

    def __init__(self, pool: WorkerPool, manager: ManagerActor, partition: str) -> None:
        super().__init__(pool)
        self.manager = manager
        self.partition = partition

    def handle(self, message: ApplyConfig) -> tuple[SchedulerConfig | None, LimitTable]:
        if not isinstance(message, ApplyConfig):
            raise TypeError(f"unexpected message {type(message).__name__}")
        loaded, table = limit_table(message.source, self.partition, message.pause_collector)
        call(self.manager, SwitchTable(table, loaded), message.timeout)
        return loaded, table


__all__ = ["ApplyConfig", "ConfigActor", "LimitTable"]
