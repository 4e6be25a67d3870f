"""A config with 10,000 limit entries loads and validates in well under a second."""

from __future__ import annotations

import time

from quotactor.config import limit_entries, load_config


def ten_thousand_limits() -> str:
    """100 queues under root, each with 100 user limits, all within their queue's limits."""
    lines = ["partitions:", "  - name: default", "    queues:", "      - name: root",
             "        limits:", "          - limit: everyone", "            users: ['*']",
             "            maxresources: {memory: 20G, vcore: 4}", "        queues:"]
    for queue in range(100):
        lines += [f"          - name: team{queue}", "            maxapplications: 50",
                  "            resources:", "              max: {memory: 1T, vcore: 100}",
                  "            limits:"]
        for user in range(100):
            lines += [f"              - limit: user {user}", f"                users: [user{user}]",
                      "                maxresources: {memory: 10G, vcore: 2}",
                      "                maxapplications: 5"]
    return "\n".join(lines) + "\n"


def test_ten_thousand_limit_entries_load_in_well_under_a_second() -> None:
    text = ten_thousand_limits()
    load_config(text)
    timings = []
    for _ in range(3):
        started = time.process_time()
        config = load_config(text)
        timings.append(time.process_time() - started)
    entries = limit_entries(config.partitions[0])
    assert sum(len(limits) for limits in entries.values()) == 10_001
    # CPU time, not wall time, so that other work on a busy runner does not count: about
    # 0.5 s here; the bound is loose for slower machines.
    assert min(timings) < 2.0, timings
