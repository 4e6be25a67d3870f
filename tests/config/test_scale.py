"""A config with 10,000 limit entries loads whole: every entry read and kept in its queue.

How fast it loads is a benchmark's claim, not a test's: `bench/config_load_bench.py`.
"""

from __future__ import annotations

import pytest

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


@pytest.mark.slow
def test_ten_thousand_limit_entries_load_whole() -> None:
    config = load_config(ten_thousand_limits())
    entries = limit_entries(config.partitions[0])
    assert sum(len(limits) for limits in entries.values()) == 10_001
    assert len(entries) == 101
    team = entries["root.team99"]
    assert len(team) == 100 and team[-1].limit == "user 99" and team[-1].users == ("user99",)
    assert team[-1].max_applications == 5
