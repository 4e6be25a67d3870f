"""The GPU example the README shows: the shipped cluster and queue files with a synthetic GPU
workload. GPUs are reported (the headline is about them), per node class, and the replay keeps
every invariant."""

from __future__ import annotations

from importlib import resources

import pytest

from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.cluster import load_cluster
from quotactor.sim.inputs.jobs import WorkloadError
from quotactor.sim.inputs.synthetic import GPU, generate, parse_synthetic
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.verify import verify
from quotactor.sim.reports.summary import format_summary

WORKLOAD = ("synthetic:jobs=300,users=30,groups=3,max_tasks=8,vcore=8,memory=32Gi,gpu=1,"
            "interarrival=240,duration=1800,queues=root.train;root.train;root.infer")


def _data(name: str) -> str:
    return resources.files("quotactor.sim").joinpath("data", name).read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_readme_gpu_example_reports_gpus(tmp_path) -> None:
    cluster_file = tmp_path / "cluster.yaml"
    cluster_file.write_text(_data("gpu-cluster.yaml"), encoding="utf-8")
    cluster = load_cluster(cluster_file)
    workload = generate(parse_synthetic(WORKLOAD))
    assert all(job.total.get(GPU, 0) == job.tasks for job in workload.jobs)
    with Scheduler.start(_data("gpu-queues.yaml"),
                         clock=VirtualClock(workload.jobs[0].submit)) as scheduler:
        result = replay(scheduler, workload, cluster, ReplayOptions(progress=False))
    assert verify(result) == []
    assert result.primary_resource == GPU
    peak_gpus = max(value.get(GPU, 0) for value in result.total_series.values)
    assert 0 < peak_gpus <= 64
    text = format_summary(result)
    headline = next(line for line in text.splitlines() if line.startswith("utilization"))
    assert headline.startswith("utilization ") and f"busy {GPU}" in headline
    assert "vcore" in headline and "memory" in headline
    assert "PEAK GPU" in text and "NODE CLASS" in text
    assert "GPU USED" in text


def test_gpus_per_task_are_bounded() -> None:
    with pytest.raises(WorkloadError, match="gpu"):
        parse_synthetic("synthetic:gpu=65")
    with pytest.raises(WorkloadError, match="gpu"):
        parse_synthetic("synthetic:gpu=-1")
