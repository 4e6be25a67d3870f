"""One config applied to several partitions, all of them or none.

Each manager validates and switches on its own; to keep the served partitions on one config,
the text is validated once up front, and a manager that still refuses it (it should not) makes
the ones already switched go back to what they had.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from quotactor.config import load_config
from quotactor.ugm import UserGroupManager

__all__ = ["ConfigFanout", "apply_everywhere", "load_for"]


def load_for(
    managers: Iterable[UserGroupManager],
    source: str | bytes,
    check: Callable[[Any], None] | None = None,
) -> Any:
    """`load_config(source)`, then `check(loaded)` (which may raise `ConfigError` too).

    A refused config counts as a failed reload of every manager: they never see it, so
    without this the failure would be missing from `quotactor_config_reloads_total`.
    """
    from quotactor.config import ConfigError

    try:
        loaded = load_config(source)
        if check is not None:
            check(loaded)
    except ConfigError:
        for manager in managers:
            manager.metrics.record_reload(False)
        raise
    return loaded


def apply_everywhere(managers: Iterable[UserGroupManager], loaded: Any) -> None:
    """`update_config(loaded)` on every manager; on a refusal, roll the others back, re-raise."""
    switched: list[tuple[UserGroupManager, Any]] = []
    try:
        for manager in managers:
            previous = manager.config if manager.config is not None else manager.limit_table
            manager.update_config(loaded)
            switched.append((manager, previous))
    except ValueError:
        for manager, previous in reversed(switched):
            manager.update_config(previous)
        raise


class ConfigFanout:
    """The `PUT /config` of a server embedded with a fixed set of managers.

    The new config must name every served partition; partitions it adds are ignored here
    (`serve` passes its own applier, which starts and stops managers as partitions come and go).
    """

    def __init__(self, managers: Mapping[str, UserGroupManager]) -> None:
        self._managers = managers
        self._lock = threading.Lock()

    def __call__(self, source: str | bytes) -> None:
        """Validate `source` (YAML) and apply it everywhere; `ConfigError` if invalid."""
        with self._lock:
            managers = dict(self._managers.items())

            def serves_all(loaded: Any) -> None:
                from quotactor.config import ConfigError

                present = {partition.name for partition in loaded.partitions}
                missing = sorted(set(managers) - present)
                if missing:
                    raise ConfigError(f"the config has no partition named {missing[0]!r}, "
                                      "which this server serves", "partitions")

            apply_everywhere(managers.values(), load_for(managers.values(), source, serves_all))
