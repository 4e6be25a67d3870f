"""Concurrent `update_config` calls: the config a manager reports is the one it enforces."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from quotactor import UserGroup

SUE = UserGroup("sue")


def config(limit: int) -> str:
    return f"""
partitions:
  - name: default
    queues:
      - name: root
        limits:
          - limit: sue
            users: [sue]
            maxresources: {{m: {limit}}}
"""


def reported_limit(ugm) -> tuple[int, int]:
    """The limit as `limit_table` and as `config` name it."""
    table = ugm.limit_table.user_limit("root", "sue").max_resources["m"]
    (queue,) = ugm.config.partition("default").queues
    (limit,) = queue.limits
    return table, limit.max_resources["m"]


@pytest.mark.timeout(120)
def test_concurrent_switches_leave_the_reported_config_enforced(start_ugm) -> None:
    ugm = start_ugm(config(100))
    with ThreadPoolExecutor(4) as callers:
        for round_ in range(40):
            limits = [1000 + 10 * round_ + i for i in range(4)]
            futures = [callers.submit(ugm.update_config, config(limit)) for limit in limits]
            for future in futures:
                future.result(timeout=30)
            enforced = ugm.headroom("root", "probe", SUE)
            assert enforced is not None
            table_limit, config_limit = reported_limit(ugm)
            assert table_limit == config_limit == enforced["m"], f"round {round_}"
            assert enforced["m"] in limits


@pytest.mark.parametrize("pause", [False, True])
def test_the_collector_is_paused_for_loads_only_when_the_host_opts_in(
    start_ugm, monkeypatch, pause: bool,
) -> None:
    from quotactor.config import limit_table as module

    seen: list[bool] = []
    real = module.load_config

    def load_config(source, *, pause_collector=False):
        seen.append(pause_collector)
        return real(source, pause_collector=pause_collector)

    monkeypatch.setattr(module, "load_config", load_config)
    ugm = start_ugm()
    ugm.pause_collector = pause
    ugm.update_config(config(5))
    assert seen == [pause]
