"""Every resource reported in human units, the utilization split, per node class, the plots."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from quotactor.core.resources import Resource
from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.cluster import ClusterSpec, uniform_cluster
from quotactor.sim.inputs.jobfile import parse_csv, parse_jsonl
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.usage import Series, UsageTimeline, combined
from quotactor.sim.models.utilization import (
    ResourceUse,
    busy_series,
    class_use,
    node_class_of,
    node_classes,
    resource_names,
    resource_use,
)
from quotactor.sim.reports.report import build_report, write_report
from quotactor.sim.reports.summary import format_summary
from quotactor.sim.reports.whatif import analyse

QUEUE = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: work
"""
GPU_JOBS = """\
job_id,user,groups,queue,submit,duration,tasks,resources
train,ann,vision,root.work,0,3600,2,vcore=4;memory=24Gi;nvidia.com/gpu=2
tune,bob,speech,root.work,60,1800,1,vcore=2;memory=8Gi;nvidia.com/gpu=1
etl,cat,data,root.work,120,600,3,vcore=2;memory=3Gi
"""


def _cluster() -> ClusterSpec:
    cpu = uniform_cluster(2, {"vcore": "8", "memory": "32Gi"}, "cpu").nodes
    gpu = uniform_cluster(2, {"vcore": "16", "memory": "64Gi", "nvidia.com/gpu": "4"},
                          "gpu").nodes
    return ClusterSpec(cpu + gpu)


def _replay(workload: Workload, cluster: ClusterSpec, config: str = QUEUE,
            **options: Any) -> SimulationResult:
    with Scheduler.start(config, clock=VirtualClock(workload.jobs[0].submit)) as scheduler:
        return replay(scheduler, workload, cluster,
                      ReplayOptions(progress=False, label="t", **options))


@pytest.fixture(scope="module")
def gpu_run() -> SimulationResult:
    return _replay(parse_csv(GPU_JOBS.splitlines(keepends=True)), _cluster())


def test_summary_names_every_resource_in_human_units(gpu_run: SimulationResult) -> None:
    text = format_summary(gpu_run)
    assert "cluster: 4 nodes, 48 vcore, 192Gi memory, 8 nvidia.com/gpu" in text
    group_header = next(line for line in text.splitlines() if line.startswith("GROUP"))
    assert group_header.endswith("PEAK VCORE  PEAK MEMORY  PEAK GPU")
    vision = next(line for line in text.splitlines() if line.startswith("vision"))
    assert vision.split()[-3:] == ["8", "48Gi", "4"]  # peaks: cores, Gi, whole GPUs
    resources = text[text.index("RESOURCE"):].splitlines()
    assert resources[1].split()[:3] == ["vcore", "48", "16"]
    assert resources[2].split()[:3] == ["memory", "192Gi", "65Gi"]
    assert resources[3].split()[:3] == ["nvidia.com/gpu", "8", "5"]
    assert "641758308335616" not in text and "Gi memory" in text


def test_report_names_every_resource_with_units(gpu_run: SimulationResult, tmp_path) -> None:
    report = json.loads(write_report(gpu_run, tmp_path).read_text(encoding="utf-8"))
    assert report["units"] == {"vcore": "millicores", "memory": "bytes",
                               "nvidia.com/gpu": "count"}
    assert report["cluster"]["capacityText"] == {"vcore": "48", "memory": "192Gi",
                                                 "nvidia.com/gpu": "8"}
    by_name = {r["name"]: r for r in report["resources"]}
    assert list(by_name) == ["vcore", "memory", "nvidia.com/gpu"]
    gpu = by_name["nvidia.com/gpu"]
    assert gpu["unit"] == "count" and gpu["capacity"] == 8 and gpu["peakUsedText"] == "5"
    span = gpu_run.end_time - gpu_run.start_time
    assert gpu["quantitySeconds"]["busy"] == 2 * 2 * 3600 + 1 * 1800
    assert gpu["utilization"]["busy"] == round((4 * 3600 + 1800) / (8 * span), 4)
    assert by_name["memory"]["peakUsedText"] == "65Gi"
    assert report["totals"]["peakUsage"]["nvidia.com/gpu"] == 5


def test_a_heterogeneous_cluster_is_reported_per_node_class(gpu_run: SimulationResult) -> None:
    classes = node_classes(gpu_run.cluster)
    assert [(c.name, len(c.node_ids)) for c in classes] == [("cpu", 2), ("gpu", 2)]
    assert classes[1].capacity == Resource({"vcore": 32000, "memory": 128 * 2**30,
                                            "nvidia.com/gpu": 8})
    text = format_summary(gpu_run)
    table = text[text.index("NODE CLASS"):].splitlines()
    assert table[1].split()[:2] == ["cpu", "2"] and "8 vcore, 32Gi memory" in table[1]
    assert "16 vcore, 64Gi memory, 4 nvidia.com/gpu" in table[2]
    report = build_report(gpu_run)
    assert [c["name"] for c in report["cluster"]["nodeClasses"]] == ["cpu", "gpu"]
    assert report["cluster"]["nodeClasses"][1]["perNodeText"] == {
        "vcore": "16", "memory": "64Gi", "nvidia.com/gpu": "4"}


def test_usage_per_node_class_from_allocations_per_node(gpu_run: SimulationResult) -> None:
    gpus = Resource({"vcore": 8000, "nvidia.com/gpu": 4})
    timeline = UsageTimeline(node_class_of(gpu_run.cluster))
    timeline.on_node(0, "a", "gpu-001", gpus)
    timeline.on_node(0, "a", "gpu-002", Resource({"nvidia.com/gpu": 2}), placeholder=True)
    timeline.on_node(0, "b", "cpu-001", Resource({"vcore": 4000}))
    timeline.on_node(0, "b", "cpu-002", Resource({"vcore": 4000}))
    timeline.off_nodes(1800, "a", placeholders_only=True)  # a gang's placeholders time out
    timeline.on_node(1800, "b", "cpu-002", -Resource({"vcore": 4000}))  # one task released
    timeline.off_nodes(2700, "b")
    timeline.off_nodes(3600, "a")
    assert timeline.leftover() == {}
    result = replace(gpu_run, node_class_series=timeline.series("nodeclass"), start_time=0,
                     end_time=3600)
    shares = {c.name: s for c, s in class_use(result)}
    assert shares["gpu"]["nvidia.com/gpu"] == (4 * 3600 + 2 * 1800) / (8 * 3600)
    assert shares["gpu"]["vcore"] == 8000 * 3600 / (32000 * 3600)
    assert shares["cpu"]["vcore"] == (4000 * 2700 + 4000 * 1800) / (16000 * 3600)
    assert "nvidia.com/gpu" not in shares["cpu"]  # the class offers none
    text = format_summary(result)
    table = text[text.index("NODE CLASS"):].splitlines()
    assert table[0].split()[-3:] == ["USED", "GPU", "USED"]
    assert table[2].split()[-3:] == ["25%", "0%", "62%"]  # gpu: vcore, memory, gpu
    assert build_report(result)["cluster"]["nodeClasses"][1]["utilization"] == {
        "vcore": 0.25, "memory": 0.0, "nvidia.com/gpu": 0.625}


def test_a_timeline_without_classes_records_no_nodes() -> None:
    timeline = UsageTimeline()
    timeline.on_node(0, "a", "n1", Resource({"vcore": 1000}))
    timeline.off_nodes(1, "a")
    assert not timeline.tracks_nodes and timeline.series("nodeclass") == {}


def test_node_classes_of_alike_nodes_and_names() -> None:
    alike = uniform_cluster(3, {"vcore": "4"})
    assert node_class_of(alike) == {} and len(node_classes(alike)) == 1
    mixed = ClusterSpec(uniform_cluster(1, {"vcore": "4"}, "a").nodes
                        + uniform_cluster(1, {"vcore": "4"}, "b").nodes
                        + uniform_cluster(2, {"vcore": "8"}, "a2").nodes)
    assert [c.name for c in node_classes(mixed)] == ["a+b", "a2"]
    assert node_class_of(mixed) == {"a": "a+b", "b": "a+b", "a2-001": "a2", "a2-002": "a2"}


def test_busy_is_completed_work_over_capacity_and_span() -> None:
    jobs = parse_jsonl([
        '{"job_id": "a", "user": "u", "queue": "root.work", "submit": 0, "duration": 100,'
        ' "tasks": 2}',
        '{"job_id": "b", "user": "u", "queue": "root.work", "submit": 0, "duration": 50,'
        ' "tasks": 2}',
        '{"job_id": "c", "user": "v", "queue": "root.work", "submit": 10, "duration": 40,'
        ' "tasks": 4}',
    ])
    result = _replay(jobs, uniform_cluster(1, {"vcore": "4"}))
    assert (result.start_time, result.end_time) == (0, 140)  # c waits for a's end
    work = sum(j.duration * j.total["vcore"] for j in jobs.jobs)
    vcore = next(u for u in resource_use(result) if u.name == "vcore")
    assert vcore.busy == work and vcore.lost == 0 and vcore.reserved == 0
    assert vcore.busy_share == work / (4000 * 140)
    assert analyse(result).utilization == work / (4000 * 140)
    report = build_report(result)
    assert report["utilization"] == round(work / (4000 * 140), 4)
    share = round(work / (4000 * 140), 4)
    assert report["utilizationSplit"] == {"resource": "vcore", "busy": share, "lost": 0.0,
                                          "reservedIdle": 0.0, "allocated": share}
    assert "utilization 82% busy vcore (lost 0%, reserved/idle 0%)" in format_summary(result)


PREEMPTING = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        properties: {preemption.delay: 10s}
        queues:
          - name: gold
            resources: {guaranteed: {vcore: "2"}}
          - name: silver
"""


def test_preempted_runs_are_lost_not_busy() -> None:
    jobs = parse_jsonl([
        '{"job_id": "long", "user": "sue", "queue": "root.silver", "submit": 0,'
        ' "duration": 100, "tasks": 4}',
        '{"job_id": "urgent", "user": "bob", "queue": "root.gold", "submit": 20,'
        ' "duration": 50, "tasks": 2}',
    ])
    result = _replay(jobs, uniform_cluster(1, {"vcore": "4"}), PREEMPTING, packing="none")
    lost = result.preemptions.work_lost["vcore"]
    assert lost == 4000 * 30  # 4 vcore for 30 s, in millicore-seconds
    assert lost == pytest.approx(1000 * 3600 * result.preemptions.work_lost_core_hours)
    vcore = next(u for u in resource_use(result) if u.name == "vcore")
    assert vcore.busy == 4000 * 100 + 2000 * 50 and vcore.lost == lost
    assert vcore.allocated == pytest.approx(vcore.busy + lost)  # the victim ran, then lost it
    span = result.end_time - result.start_time
    assert analyse(result).utilization == vcore.busy / (4000 * span)
    assert build_report(result)["preemptions"]["workLostQuantitySeconds"] == {"vcore": lost}


def test_capacity_held_without_work_is_reserved() -> None:
    use = ResourceUse("vcore", 4000, 100.0, 4000, allocated=300_000.0, busy=200_000.0,
                      lost=50_000.0)
    assert (use.busy_share, use.lost_share, use.reserved_share, use.allocated_share) == (
        0.5, 0.125, 0.125, 0.75)
    rounding = ResourceUse("vcore", 4000, 100.0, 4000, 200_000.0, 200_000.0000001, 0.0)
    assert rounding.reserved == 0.0
    assert ResourceUse("gpu", 0, 100.0, 0, 0.0, 0.0, 0.0).busy_share == 0.0


def test_held_capacity_beyond_the_work_shows_as_reserved(gpu_run: SimulationResult) -> None:
    extra = Series("cluster", "held", (0.0, 100.0), (Resource({"vcore": 8000}), Resource()),
                   (1, 0))
    padded = replace(gpu_run, total_series=combined("cluster", "cluster",
                                                    [gpu_run.total_series, extra]))
    before = {u.name: u for u in resource_use(gpu_run)}["vcore"]
    after = {u.name: u for u in resource_use(padded)}["vcore"]
    assert after.busy == before.busy and after.reserved == pytest.approx(
        before.reserved + 8000 * 100)
    assert "reserved/idle" in format_summary(padded)


def test_busy_series_integrates_to_busy_work(gpu_run: SimulationResult) -> None:
    busy = busy_series(gpu_run)
    for use in resource_use(gpu_run):
        assert busy.integral(use.name, gpu_run.end_time) == pytest.approx(use.busy)
    assert busy.values[-1] == Resource() and busy.running[-1] == 0


def test_combined_series_sum_their_parts() -> None:
    a = Series("user", "a", (0.0, 10.0), (Resource({"vcore": 1000}), Resource()), (1, 0))
    b = Series("user", "b", (5.0, 20.0), (Resource({"vcore": 2000}), Resource()), (1, 0))
    both = combined("user", "others", [a, b])
    assert both.times == (0.0, 5.0, 10.0, 20.0)
    assert [v.get("vcore", 0) for v in both.values] == [1000, 3000, 2000, 0]
    assert both.running == (1, 2, 1, 0)
    assert both.integral("vcore", 20.0) == a.integral("vcore", 20) + b.integral("vcore", 20)


def test_resources_named_by_jobs_or_cluster(gpu_run: SimulationResult) -> None:
    assert resource_names(gpu_run) == ("vcore", "memory", "nvidia.com/gpu")
    pods = ClusterSpec(tuple(replace(n, capacity=n.capacity + Resource({"pods": 110}))
                             for n in gpu_run.cluster.nodes))
    with_pods = replace(gpu_run, cluster=pods)
    assert resource_names(with_pods) == ("vcore", "memory", "nvidia.com/gpu", "pods")
    assert resource_names(with_pods, workload_only=True) == (
        "vcore", "memory", "nvidia.com/gpu")


# -- plots ----------------------------------------------------------------------------------

def _many_groups() -> SimulationResult:
    queues = "".join(f"          - name: q{i}\n" for i in range(12))
    config = QUEUE.replace("          - name: work\n", queues)
    lines = ["job_id,user,groups,queue,submit,duration,tasks,resources"]
    for i in range(60):
        lines.append(f"j{i},u{i % 30},g{i % 25},root.q{i % 12},{i * 30},{300 + 40 * (i % 7)},"
                     f"{1 + i % 3},vcore=1;memory=2Gi;nvidia.com/gpu={i % 2}")
    workload = parse_csv([line + "\n" for line in lines])
    cluster = uniform_cluster(2, {"vcore": "4", "memory": "16Gi", "nvidia.com/gpu": "2"})
    return _replay(workload, cluster, config)


@pytest.mark.slow
def test_every_figure_has_one_legend_with_the_top_series_and_others() -> None:
    import matplotlib.pyplot as plt

    from quotactor.sim.reports.plots import OTHERS, TOP_SERIES, figures

    result = _many_groups()
    assert len(result.group_series) == 25 and len(result.queue_series) == 12
    names = []
    for name, fig in figures(result, users=4):
        names.append(name)
        assert len(fig.legends) == 1, name
        assert all(ax.get_legend() is None for ax in fig.axes), name
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        assert len(labels) <= TOP_SERIES + 1, (name, labels)
        if name in ("queues.png", "wait-times.png"):
            assert labels[-1].startswith(f"{OTHERS} (")
        if name == "usage-groups.png":
            titles = {ax.get_title().split(":")[0] for ax in fig.axes if ax.get_title()}
            assert len(titles) == TOP_SERIES + 1 and "others (summed)" in titles
        if name == "utilization.png":
            assert [ax.get_ylabel() for ax in fig.axes[:3]] == [
                "vcore (% of cluster)", "memory (% of cluster)", "gpu (% of cluster)"]
            assert fig.axes[2].get_title().startswith("busy ")
        if name == "held-back-users.png":
            assert fig.axes[0].get_xscale() == "log"
        plt.close(fig)
    assert names == ["utilization.png", "queues.png", "held-back-users.png",
                     "usage-groups.png", "usage-top-users.png", "wait-times.png"]


def test_bands_spread_from_the_10th_to_the_90th_percentile_of_the_time() -> None:
    from quotactor.sim.reports.plots import spread

    # one bucket of 100 s: 0 for 5 s, 10 for 80 s, 50 for 15 s
    starts, means, lows, highs = spread([0, 5, 85], [0, 10, 50], 0, 100, 100)
    assert starts == [0] and means == [(10 * 80 + 50 * 15) / 100]
    assert (lows, highs) == ([10], [50])
    # a short spike does not set the band: 100 for 5 s of 100
    _, _, lows, highs = spread([0, 50, 55], [20, 100, 20], 0, 100, 100)
    assert (lows, highs) == ([20], [20])
    # before a series' first point it is 0
    _, means, lows, _ = spread([50], [4], 0, 100, 50)
    assert means == [0.0, 4.0] and lows == [0.0, 4.0]


@pytest.mark.slow
def test_reports_do_not_import_matplotlib() -> None:
    code = ("import sys, quotactor.sim.cli, quotactor.sim.reports.report, "
            "quotactor.sim.reports.summary; assert 'matplotlib' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
