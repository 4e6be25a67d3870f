"""Kueue as a replay model: jobs are Workloads admitted through ClusterQueues.

The quota file holds Kueue manifests (`kueue.x-k8s.io/v1beta1`, as `quotactor kueue` reads
them): ResourceFlavors, ClusterQueues, Cohorts, LocalQueues, WorkloadPriorityClasses,
Namespaces, and Kueue's `Configuration` to turn fair sharing on. A job becomes a Workload in
its namespace (its `namespace` tag, else its first group, else its user), queued in the
LocalQueue its `kueue.x-k8s.io/queue-name` tag names (the label Kueue's jobs carry), else the
namespace's first LocalQueue by name; each task group is a pod set of that many pods, each
asking the group's per-task resources (vcore is Kueue's cpu, both in millicores). Its priority
is its `priority` tag. Its quota group is the ClusterQueue.

The replay tries waiting jobs one by one (priority, then submission), each as a Kueue cycle
would treat it if it were the only head: flavors in order with flavor fungibility, borrowing
within the limits, preemption by the ClusterQueue's policies, StrictFIFO queues admitting
their head only. A job starts when its ClusterQueue admits it and the cluster has room for
it, counting what its victims give back; the victims are revoked. A job the ClusterQueue
could never hold, or in a namespace no LocalQueue serves, is rejected at submission. The
replay drives the pure `KueueManager` directly (no actor: it is single-threaded).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from quotactor.core.resources import Resource, ResourceLike
from quotactor.kueue import (
    KueueError,
    KueueManager,
    PodSet,
    Workload,
    load_manifests,
)
from quotactor.kueue.preemption import LESS_THAN_INITIAL_SHARE, LESS_THAN_OR_EQUAL_TO_FINAL_SHARE
from quotactor.kueue.status import cluster_queue_usage, cohort_usage
from quotactor.kueue.tree import available, potential_available
from quotactor.sim.inputs.jobs import Job
from quotactor.sim.models.models import FULL_CLUSTER, GroupFigures, job_priority

__all__ = ["QUEUE_NAME_LABEL", "KueueModel", "load_kueue_model"]

QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
_TO_KUEUE = {"vcore": "cpu"}
_FROM_KUEUE = {"cpu": "vcore"}
_INVALID = re.compile(r"[^a-z0-9-]+")
_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)


def _rename(amount: ResourceLike, names: Mapping[str, str]) -> Resource:
    return Resource({names.get(k, k): v for k, v in amount.items() if v})


def _label(text: str, fallback: str) -> str:
    """`text` as a lowercase RFC 1123 label (Kubernetes names), or `fallback`."""
    label = _INVALID.sub("-", text.lower()).strip("-")[:63].strip("-")
    return label or fallback


class KueueModel:
    """A `KueueManager` with the objects of a quota file; jobs become its workloads."""

    name = "kueue"

    def __init__(self, manager: KueueManager, total: ResourceLike) -> None:
        self.manager = manager
        self._total = Resource(dict(total))
        self._keys: dict[str, str] = {}
        """job id -> workload key."""
        self._jobs: dict[str, str] = {}
        """workload key -> job id."""
        self._groups: dict[str, str] = {}
        self._totals: dict[str, Resource] = {}
        """workload key -> the job's total, for the running ones."""
        self._revoked: list[str] = []
        self._loose: set[str] = set()
        self._starts = 0
        self._serial = 0
        self._queues = {(q.namespace, q.name): q.cluster_queue
                        for q in manager.cluster.local_queues.values()}
        self._first_queue: dict[str, str] = {}
        for namespace, name in sorted(self._queues):
            self._first_queue.setdefault(namespace, name)
        self._preempting = {name for name, cq in manager.cluster.cluster_queues.items()
                            if cq.preemption.within_cluster_queue != "Never"
                            or cq.preemption.reclaim_within_cohort != "Never"}

    def _namespace(self, job: Job) -> str:
        raw = job.tags.get("namespace") or (job.groups[0] if job.groups else job.user)
        return _label(raw, "default")

    def _local_queue(self, job: Job, namespace: str) -> str:
        explicit = job.tags.get(QUEUE_NAME_LABEL)
        return explicit or self._first_queue.get(namespace, "")

    def group_of(self, job: Job) -> str:
        namespace = self._namespace(job)
        cq = self._queues.get((namespace, self._local_queue(job, namespace)))
        return cq if cq is not None else namespace

    def submit(self, job: Job) -> str | None:
        namespace = self._namespace(job)
        queue = self._local_queue(job, namespace)
        if not queue:
            return f"no LocalQueue in namespace {namespace}"
        if len(job.task_groups) > 18:
            return "more than 18 task groups (a Workload has at most 18 pod sets)"
        pod_sets = tuple(
            PodSet(_label(group.name, f"tasks-{i}") if group.name else f"tasks-{i}",
                   group.count, dict(_rename(group.resources, _TO_KUEUE).items()))
            for i, group in enumerate(job.task_groups))
        if len({p.name for p in pod_sets}) != len(pod_sets):
            pod_sets = tuple(PodSet(f"tasks-{i}", p.count, p.requests)
                             for i, p in enumerate(pod_sets))
        self._serial += 1
        workload = Workload(f"job-{self._serial}", queue, pod_sets, namespace,
                            priority=job_priority(job), created=job.submit)
        never = self.manager.never_fits(workload)
        if never is not None:
            return never
        try:
            self.manager.submit(workload)
        except KueueError as exc:
            return str(exc)
        self._keys[job.job_id] = workload.key
        self._jobs[workload.key] = job.job_id
        self._groups[job.job_id] = self.group_of(job)
        return None

    def try_start(self, job: Job, free: Resource) -> str | None:
        """The ClusterQueue's answer first (flavors, victims); then the cluster's room, its
        free room plus what the victims give back."""
        key = self._keys[job.job_id]
        total = job.total

        def room(victims: tuple[str, ...]) -> bool:
            back = Resource()
            for victim in victims:
                back = back + self._totals[victim]
            return total.fits_within_strict(free + back)

        fits = total.fits_within_strict(free)
        cq = self._groups[job.job_id]
        if not fits and cq not in self._preempting:
            return FULL_CLUSTER
        self._starts += 1
        self.manager.now = float(self._starts)
        attempt = self.manager.attempt(key, room)
        if attempt.blocked_by == "room" or (not attempt.admitted and not fits):
            return FULL_CLUSTER
        if attempt.blocked_by == "quota":
            return f"quota of ClusterQueue {cq}"
        if attempt.blocked_by == "head":
            return f"the StrictFIFO head of ClusterQueue {cq}"
        if not attempt.admitted:
            return f"ClusterQueue {cq}: {attempt.reason}"
        self._totals[key] = total
        if self.manager.cluster.cluster_queues[cq].queueing_strategy == "StrictFIFO":
            self._loose.add(cq)
        if self._preempting:
            self._loosen_tree(cq, only=self._preempting)
        for victim in attempt.preempted:
            self._revoked.append(self._jobs[victim.workload])
            self._totals.pop(victim.workload, None)
            self._loosen_tree(victim.cluster_queue)
        return None

    def end(self, job_id: str) -> None:
        key = self._keys.pop(job_id)
        del self._jobs[key]
        self._totals.pop(key, None)
        status = self.manager.workload(key)
        self.manager.finish(key)
        if status.cluster_queue is not None:
            self._loosen_tree(status.cluster_queue)

    def revoked(self) -> list[str]:
        out, self._revoked = self._revoked, []
        return out

    def loosened(self) -> list[str]:
        out = sorted(self._loose)
        self._loose.clear()
        return out

    def _loosen_tree(self, cq: str, only: set[str] | None = None) -> None:
        node = self.manager.cluster.nodes.get(cq)
        names = [n.name for n in node.root().subtree_cqs()] if node is not None else [cq]
        self._loose.update(n for n in names if only is None or n in only)

    def figures(self) -> dict[str, GroupFigures]:
        """Per ClusterQueue (job resource names, summed over flavors): used; runtime, what it
        may use now (used + available); min, its nominal quota; max, the most it could ever
        hold (nominal + borrowing within its limits and what the cohort has); borrowed, its
        usage above nominal (Kueue's figure); lent, quotactor's attribution of what its cohort
        tree borrows (see `quotactor.kueue.status`); cohort_quota, the nominal quota of its
        whole cohort tree (empty without a cohort)."""
        out: dict[str, GroupFigures] = {}
        cluster = self.manager.cluster
        cohorts: dict[str, dict[tuple[str, str], int]] = {}
        for name in sorted(cluster.cluster_queues):
            node = cluster.node(name)
            root = node.root()
            if root is not node and root.name not in cohorts:
                cohorts[root.name] = {(r.flavor, r.resource): r.subtree_quota
                                      for r in cohort_usage(cluster, root.name).resources}
            pool = cohorts.get(root.name, {}) if root is not node else {}
            sums: dict[str, dict[str, int]] = {k: {} for k in (
                "used", "runtime", "nominal", "most", "borrowed", "lent", "cohort")}
            for row in cluster_queue_usage(cluster, name, 0).resources:
                fr = (row.flavor, row.resource)
                for key, value in (
                        ("used", row.used),
                        ("runtime", row.used + max(0, available(node, fr))),
                        ("nominal", row.nominal), ("most", potential_available(node, fr)),
                        ("borrowed", row.borrowed), ("lent", row.lent),
                        ("cohort", pool.get(fr, 0))):
                    sums[key][row.resource] = sums[key].get(row.resource, 0) + value
            used, runtime, nominal, most, borrowed, lent, cohort = (
                _rename(sums[k], _FROM_KUEUE) for k in sums)
            out[name] = GroupFigures(used, runtime, nominal, most, borrowed, lent, cohort)
        return out


def load_kueue_model(yaml_text: str, total: ResourceLike) -> KueueModel:
    """Kueue manifests (YAML, `---` separated) on a cluster of `total` (job resource names);
    `KueueError` says what is wrong with the file (Workloads in it are refused: the trace
    supplies them)."""
    found = load_manifests(yaml_text)
    if found.workloads:
        raise KueueError("the quota file holds Workloads; the replay makes them from the jobs")
    manager = (KueueManager(True, found.fair_sharing_strategies or _STRATEGIES)
               if found.fair_sharing else KueueManager())
    manager.apply(*found.objects())
    for name, labels in found.namespaces.items():
        manager.set_namespace(name, labels)
    return KueueModel(manager, total)
