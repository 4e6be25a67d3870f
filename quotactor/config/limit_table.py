"""From whatever a caller hands us as a configuration to the limit table of one partition.

It sits beside the config it reads: the core's `LimitTable` knows nothing of YAML or of the
config model, and the actors only receive the finished table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from quotactor.config.entries import limit_entries
from quotactor.config.errors import ConfigError
from quotactor.config.loader import load_config
from quotactor.config.model import SchedulerConfig
from quotactor.core.limits import EMPTY_TABLE, LimitEntry, LimitTable


def limit_table(
    source: Any, partition: str, pause_collector: bool = False
) -> tuple[SchedulerConfig | None, LimitTable]:
    """Return (loaded config or None, table) for `source`; raises `ConfigError` if invalid.

    `source` is None (no limits), a `LimitTable`, a mapping `queue path -> [LimitEntry]` (the
    minimal internal form, handy in tests), YAML text, a path, or a loaded config.
    """
    if source is None:
        return None, EMPTY_TABLE
    if isinstance(source, LimitTable):
        return None, source
    if isinstance(source, Mapping) and all(
        isinstance(v, Sequence) and all(isinstance(e, LimitEntry) for e in v)
        for v in source.values()
    ):
        return None, LimitTable(source)
    loaded = load_config(source, pause_collector=pause_collector)
    part = loaded.partition(partition)
    if part is None:
        raise ConfigError(reason=f"the config has no partition named {partition!r}",
                          location="partitions")
    return loaded, LimitTable(_as_entries(limit_entries(part)))


def _as_entries(entries: Mapping[str, Sequence[Any]]) -> dict[str, list[LimitEntry]]:
    return {
        path: [
            LimitEntry(tuple(lim.users), tuple(lim.groups), lim.max_resources,
                       lim.max_applications)
            for lim in limits
        ]
        for path, limits in entries.items()
    }
