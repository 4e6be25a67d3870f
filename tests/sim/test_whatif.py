"""The figures that answer "what if": causes, obstacles, queues, fairness, slowdown, plots."""

from __future__ import annotations

from dataclasses import replace

import pytest

from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.fmt import humanize, resources_text
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.models.preemptions import PreemptionStats
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.reports.report import build_report
from quotactor.sim.reports.summary import format_summary
from quotactor.sim.reports.whatif import analyse, jain

CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: work
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 1
                maxresources: {vcore: "8"}
"""


def _run(config: str = CONFIG) -> SimulationResult:
    lines = [
        '{"job_id": "a1", "user": "u2", "queue": "root.work", "submit": 0, "duration": 100,'
        ' "tasks": 4}',
        '{"job_id": "a2", "user": "u2", "queue": "root.work", "submit": 0, "duration": 100,'
        ' "tasks": 4}',
        '{"job_id": "b1", "user": "u11", "queue": "root.work", "submit": 0, "duration": 100,'
        ' "tasks": 4}',
        '{"job_id": "big", "user": "u11", "queue": "root.work", "submit": 5, "duration": 10,'
        ' "tasks": 12}',
        '{"job_id": "big2", "user": "u2", "queue": "root.work", "submit": 5, "duration": 10,'
        ' "tasks": 16}',
    ]
    workload = parse_jsonl(lines)
    with Scheduler.start(config, clock=VirtualClock(0)) as scheduler:
        return replay(scheduler, workload, uniform_cluster(1, {"vcore": "64"}),
                      ReplayOptions(progress=False, label="t"))


def test_never_started_jobs_are_counted_by_cause_and_obstacles_ranked() -> None:
    result = _run()
    w = analyse(result)
    assert w.never_causes == (("exceeds user u11's limit: 8 vcore at root.work", 1),
                              ("exceeds user u2's limit: 8 vcore at root.work", 1))
    # a2 waited 100 s behind a1 for u2's one running job
    assert w.held_by == (("user u2's applications limit at root.work", 100.0, 1),)
    assert [(q.path, q.jobs, q.completed) for q in w.queues] == [("root.work", 5, 3)]
    # 3 jobs of 4 vcore for 100 s each over 200 s on 64 vcore
    assert abs(w.queues[0].utilization - 1200 / (64 * 200)) < 1e-9
    assert w.preemptions.victims == 0 and w.preemptions.reservations == 0
    summary = format_summary(result)
    assert "2 jobs never started:" in summary
    assert "1  exceeds user u2's limit: 8 vcore at root.work" in summary
    assert "held back most by" in summary and "preemptions" not in summary
    report = build_report(result)
    assert report["neverStartedCauses"][0] == {
        "cause": "exceeds user u11's limit: 8 vcore at root.work", "jobs": 1}
    assert report["preemptions"]["victims"] == 0


def test_preemptions_show_when_the_model_counts_them() -> None:
    stats = PreemptionStats(victims=3, restarted=3, work_lost_core_hours=1.5, reservations=2,
                            reserved_node_hours=0.25)
    result = replace(_run(), preemptions=stats)
    assert analyse(result).preemptions == stats
    assert ("preemptions 3 (1.5 core-hours lost), reservations 2 (0.2 node-hours)"
            in format_summary(result))
    assert build_report(result)["preemptions"]["victims"] == 3


def test_jain_index_and_bounded_slowdown() -> None:
    assert jain([]) is None
    assert jain([1.0, 1.0, 1.0]) == 1.0
    assert jain([1.0, 0.0]) == 0.5
    w = analyse(_run())
    # a1, b1: no wait (slowdown 1); a2: 100 s wait, 100 s run (slowdown 2)
    assert w.mean_slowdown is not None and abs(w.mean_slowdown - 4 / 3) < 1e-9
    assert w.p95_slowdown == 2.0
    assert w.fairness_users is not None and 0.5 < w.fairness_users < 1.0


def test_reasons_are_printed_in_human_units() -> None:
    assert resources_text({"vcore": 64000, "memory": 4 * 2**30}) == "4Gi memory, 64 vcore"
    assert humanize("vcore usage 0 + 64000 above maxResources 32000") == (
        "vcore usage 0 + 64 above max 32 vcore")
    assert humanize("no node has {memory: 1610612736, vcore: 500} available") == (
        "no node has 1.5Gi memory, 0.5 vcore available")
    assert humanize("nothing to change here") == "nothing to change here"


def test_bucketing_gives_time_weighted_means_and_maxima() -> None:
    from quotactor.sim.reports.plots import bucketed

    starts, means, tops = bucketed([0, 5, 10, 30], [1, 3, 0, 2], 0, 40, 10)
    assert starts == [0, 10, 20, 30]
    assert means == [2.0, 0.0, 0.0, 2.0] and tops == [3, 0.0, 0.0, 2]


@pytest.mark.slow
def test_held_users_are_ranked_by_time_held_back_and_plots_are_written(tmp_path) -> None:
    from quotactor.sim.reports.plots import plot_all, plot_comparison, top_held_users

    a = _run()
    assert top_held_users(a, 5) == ["u2"]  # u11 was never held back: it is not listed
    paths = plot_all(a, tmp_path, users=3)
    assert {p.name for p in paths} == {"utilization.png", "queues.png", "held-back-users.png",
                                       "usage-groups.png", "usage-top-users.png",
                                       "wait-times.png"}
    for path in [*paths, plot_comparison(a, _run(CONFIG.replace("maxapplications: 1",
                                                                "maxapplications: 2")),
                                         tmp_path)]:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
