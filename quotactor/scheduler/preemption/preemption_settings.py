"""The queue properties that steer preemption, read the way YuniKorn reads them.

`preemption.policy` (`default`, `fence`, `disabled`): a `fence` only bounds the queue it is set
on, while `disabled` reaches every queue below unless a child sets a policy of its own (YuniKorn
passes only `disabled` down to children). `preemption.delay` (default 30s) is how long an ask
must wait before it may preempt; `quota.preemption.delay` (default 0: never) is how long a
queue may stay above a lowered maximum before its work is preempted. Durations are Go duration
strings (`30s`, `1m30s`, `1.5h`); a value that is not a positive duration falls back to the
default, as YuniKorn does (the config checker reports it).
"""

from __future__ import annotations

import re
from functools import lru_cache

from quotactor.scheduler.objects.queue import Queue

__all__ = [
    "ATTEMPT_INTERVAL",
    "DEFAULT_PREEMPTION_DELAY",
    "PREEMPTION_DELAY",
    "PREEMPTION_POLICY",
    "QUOTA_PREEMPTION_DELAY",
    "RESERVATION_DELAY",
    "RESERVATION_WAIT_TIMEOUT",
    "is_fence",
    "parse_duration",
    "preemption_delay",
    "quota_preemption_delay",
    "victims_disabled",
]

PREEMPTION_POLICY = "preemption.policy"
PREEMPTION_DELAY = "preemption.delay"
QUOTA_PREEMPTION_DELAY = "quota.preemption.delay"
DEFAULT_PREEMPTION_DELAY = 30.0
ATTEMPT_INTERVAL = 15.0
"""An ask tries preemption at most this often (YuniKorn's attempt frequency)."""
RESERVATION_DELAY = 2.0
"""An ask must have waited this long before it may reserve a node."""
RESERVATION_WAIT_TIMEOUT = 3600.0
"""A reservation whose ask a limit holds back this long is cancelled."""

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
          "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


@lru_cache(maxsize=256)
def parse_duration(text: str) -> float | None:
    """Seconds in a Go duration string (`1h2m3.5s`), None if it is not one."""
    value = text.strip()
    sign = 1.0
    if value[:1] in "+-" and value:
        sign = -1.0 if value[0] == "-" else 1.0
        value = value[1:]
    if value == "0":
        return 0.0
    total = 0.0
    position = 0
    while position < len(value):
        match = _PART.match(value, position)
        if match is None:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    return sign * total if position else None


def _positive(queue: Queue, name: str, default: float) -> float:
    text = queue.properties.get(name)
    if text is None:
        return default
    seconds = parse_duration(text)
    return seconds if seconds is not None and seconds > 0 else default


def preemption_delay(queue: Queue) -> float:
    """How long an ask of this leaf waits before it may preempt."""
    return _positive(queue, PREEMPTION_DELAY, DEFAULT_PREEMPTION_DELAY)


def quota_preemption_delay(queue: Queue) -> float:
    """How long usage may stay above a lowered maximum (0: quota preemption is off)."""
    return _positive(queue, QUOTA_PREEMPTION_DELAY, 0.0)


def _own_policy(queue: Queue) -> str | None:
    value = queue.own_properties.get(PREEMPTION_POLICY)
    return value.lower() if value is not None else None


def is_fence(queue: Queue) -> bool:
    """`preemption.policy: fence` set on this very queue (a fence is not inherited)."""
    return _own_policy(queue) == "fence"


def victims_disabled(queue: Queue) -> bool:
    """Whether the work of this queue may never be taken: the nearest queue, upwards, that
    sets a policy says `disabled`."""
    for level in queue.lineage():
        policy = _own_policy(level)
        if policy is not None:
            return policy == "disabled"
    return False
