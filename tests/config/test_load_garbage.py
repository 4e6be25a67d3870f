"""A large load must leave the cyclic collector nothing to walk but the config itself."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from quotactor.config import load_config

LIMITS = 1_000


def _config(limits: int) -> str:
    lines = ["partitions:", "  - name: default", "    queues:", "      - name: root",
             "        limits:"]
    for n in range(limits):
        lines += [f"          - limit: l{n}", f"            users: [u{n}]",
                  "            maxresources: {memory: 1Gi}"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def young_counts() -> Iterator[list[int]]:
    """The young-generation count at the start of every collection while the test runs."""
    counts: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            counts.append(gc.get_count()[0])

    gc.collect()
    gc.callbacks.append(record)
    yield counts
    gc.callbacks.remove(record)


def test_the_node_tree_is_freed_before_the_collector_resumes(young_counts: list[int]) -> None:
    config = load_config(_config(LIMITS))
    gc.collect()
    assert config.partition("default") is not None
    # The model keeps a handful of objects per limit; the composed tree had ~40 per limit,
    # all of which the first collection after the load had to walk.
    assert max(young_counts) < 15 * LIMITS, young_counts


def test_a_load_leaves_the_collector_alone_unless_asked(young_counts: list[int]) -> None:
    """A library call must not switch the process-wide collector off: collections go on
    during a default load; only `pause_collector=True` holds them, and restores the switch."""
    load_config(_config(LIMITS))
    assert len(young_counts) > 1, "the collector was switched off during the load"
    assert gc.isenabled()
    young_counts.clear()
    load_config(_config(LIMITS), pause_collector=True)
    assert len(young_counts) <= 1  # the one collection when it resumes
    assert gc.isenabled()
    gc.disable()
    try:
        load_config(_config(10), pause_collector=True)
        assert not gc.isenabled()
    finally:
        gc.enable()
