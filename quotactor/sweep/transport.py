"""Workloads and clusters as plain tuples, to cross process and machine boundaries.

The replay's values are frozen and keep their mappings behind read-only proxies, which pickle
cannot copy; rather than loosen them, a sweep packs a workload once into tuples, dicts and
strings (fast to pickle, and what Ray keeps in its object store) and each worker unpacks it
once into the same values the parser made.
"""

from __future__ import annotations

from typing import Any

from quotactor.core.resources import Resource
from quotactor.sim import ClusterSpec, Job, LineProblem, NodeSpec, TaskGroup, Workload
from quotactor.sim.inputs.collect import SharedParts

__all__ = ["PackedCluster", "PackedWorkload", "pack_cluster", "pack_workload",
           "unpack_cluster", "unpack_workload"]

PackedWorkload = tuple[Any, ...]
PackedCluster = tuple[tuple[str, dict[str, int]], ...]


def pack_workload(workload: Workload) -> PackedWorkload:
    jobs = tuple(
        (j.job_id, j.user, j.groups, j.queue, j.submit, j.duration,
         tuple((g.name, g.count, dict(g.resources.items())) for g in j.task_groups),
         dict(j.tags), j.line)
        for j in workload.jobs)
    problems = tuple((p.line, p.reason) for p in workload.problems)
    return (workload.source, jobs, workload.bad_lines, problems, dict(workload.header))


def unpack_workload(packed: PackedWorkload) -> Workload:
    """The workload `pack_workload` packed, its jobs sharing their equal parts as the
    parser's did (`SharedParts`)."""
    source, jobs, bad_lines, problems, header = packed
    shared = SharedParts()
    return Workload(
        source,
        tuple(shared.job(Job(job_id, user, groups, queue, submit, duration,
                             tuple(TaskGroup(name, count, Resource(resources))
                                   for name, count, resources in groups_of_tasks), tags,
                             line))
              for job_id, user, groups, queue, submit, duration, groups_of_tasks, tags, line
              in jobs),
        bad_lines,
        tuple(LineProblem(line, reason) for line, reason in problems),
        header,
    )


def pack_cluster(cluster: ClusterSpec) -> PackedCluster:
    return tuple((node.node_id, dict(node.capacity.items())) for node in cluster.nodes)


def unpack_cluster(packed: PackedCluster) -> ClusterSpec:
    return ClusterSpec(tuple(NodeSpec(node_id, Resource(capacity))
                             for node_id, capacity in packed))
