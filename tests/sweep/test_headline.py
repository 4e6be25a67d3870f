"""The adapter from a replay's result to the headline figures, checked against the replay's
own statistics and against hand-computed cases."""

from __future__ import annotations

import pytest

from quotactor.config import load_config
from quotactor.sim import ReplayOptions, generate, uniform_cluster
from quotactor.sim.session import ConfigRun, run_config
from quotactor.sim.synthetic import SyntheticSpec
from quotactor.sweep import figures_for, headline, jain

CONFIG = """\
partitions:
  - name: default
    placementrules: [{name: fixed, value: root.work}]
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: work
            limits:
              - {limit: each, users: ["*"], maxresources: {vcore: "4"}}
"""


def test_jain_index() -> None:
    assert jain([1.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert jain([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert jain([]) is None
    assert jain([0.0, 0.0]) == 1.0


def test_figures_agree_with_the_replay() -> None:
    workload = generate(SyntheticSpec(jobs=60, users=5, groups=2, seed=4, max_tasks=4,
                                      interarrival=20, duration=200))
    result = run_config(ConfigRun("t", "t", load_config(CONFIG)), workload,
                        uniform_cluster(1, {"vcore": "8"}), ReplayOptions(progress=False))
    figures = headline(result)
    assert list(figures) == [f.name for f in figures_for("yunikorn")]
    assert figures["jobs"] == 60 and figures["never"] == 0
    assert figures["mean_wait"] == pytest.approx(result.everybody.mean_wait, abs=1e-5)
    assert figures["p95_wait"] == pytest.approx(result.everybody.p95_wait, abs=1e-5)
    assert figures["max_wait"] == pytest.approx(result.everybody.max_wait, abs=1e-5)
    assert figures["held_user"] == pytest.approx(result.everybody.held["user"], abs=1e-3)
    waits = [figures[n] for n in ("p50_wait", "p90_wait", "p95_wait", "p99_wait", "max_wait")]
    assert waits == sorted(waits)  # type: ignore[type-var]
    assert 0.0 < figures["utilization"] <= 1.0  # type: ignore[operator]
    assert 0.0 < figures["fairness_users"] <= 1.0  # type: ignore[operator]
    assert figures["mean_bounded_slowdown"] >= 1.0  # type: ignore[operator]
    assert headline(result) == figures  # deterministic
