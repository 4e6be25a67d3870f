"""Sweep fixtures: a tiny sweep file, and one local Ray per test module that asks for it.

Ray takes seconds to start, so it starts once per module (the first test that asks for it) and
shuts down when the module's tests are done, so that no other module runs beside its processes;
the executor sees Ray already initialised and leaves it running.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from quotactor.actors.runtime import live_actors

TINY = """\
config:
  partitions:
    - name: default
      placementrules:
        - name: fixed
          value: root.work
      queues:
        - name: root
          submitacl: "*"
          queues:
            - name: work
              maxapplications: 8
              limits:
                - limit: each user
                  users: ["*"]
                  maxresources: {vcore: "8"}
                - limit: group a
                  groups: [group-a]
                  maxapplications: ${group_apps}
workloads:
  - name: tiny
    source: synthetic:jobs=40,users=4,groups=2,seed=3,max_tasks=8,interarrival=30,duration=300
cluster: {nodes: 2, resources: {vcore: "16"}}
parameters:
  user_vcore:
    path: partitions[0].queues[0].queues[0].limits[0].maxresources.vcore
    values: [8, 16]
  queue_apps:
    path: partitions[0].queues[0].queues[0].maxapplications
    range: {from: 2, to: 6, step: 4}
  group_apps:
    template: group_apps
    values: [2, 0]
"""
"""2 x 2 x 2 = 8 points, of which the 4 with group_apps 0 are invalid (a limit of nothing)."""


@pytest.fixture
def tiny_sweep(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray  # in the test extra: the Ray tests run for real, never skipped

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(autouse=True)
def no_leftover_actors() -> Iterator[None]:
    """Replays in this process (one worker) must stop every scheduler they start."""
    yield
    assert live_actors() == {}
