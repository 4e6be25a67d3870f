"""`KueueManager`: Kueue's admission of workloads through ClusterQueues, as a library.

Apply the objects (`apply`), submit workloads (`submit`) and run scheduling cycles
(`schedule` for one, `admit_pending` until nothing more happens); `finish` a workload to
release its quota. A cycle does what Kueue's scheduler does:

1. takes the head of every ClusterQueue (highest priority, then oldest; under
   `BestEffortFIFO` a head found inadmissible is set aside until quota is released in its
   cohort, letting the next one through; under `StrictFIFO` it keeps blocking);
2. assigns flavors to each head and, when it needs preemption, chooses victims;
3. processes the heads in Kueue's order (those not borrowing first, then by priority and age;
   with fair sharing, by a tournament on dominant resource share) and admits each that still
   fits, all of its pod sets or none.

One simplification: preemption is instantaneous. Kueue evicts the victims and admits the
preemptor once they are gone (a later cycle); here the victims go back to their queues and the
preemptor is admitted in the cycle that chose them.

A host that decides the order itself (a replay trying jobs one by one) uses `attempt` instead
of cycles. Every public method either does all it promises or raises `KueueError` with
nothing changed.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from quotactor.kueue.api import (
    ANY,
    STRICT_FIFO,
    ClusterQueue,
    Cohort,
    FlavorResource,
    LocalQueue,
    ResourceFlavor,
    Workload,
    WorkloadPriorityClass,
)
from quotactor.kueue.cluster import Admission, Cluster, PodSetAdmission, Record
from quotactor.kueue.errors import KueueError
from quotactor.kueue.flavors import NO_FIT, PREEMPT_MODE, Assignment, assign
from quotactor.kueue.preemption import (
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    Target,
    get_targets,
)
from quotactor.kueue.status import (
    ClusterQueueUsage,
    CohortUsage,
    WorkloadStatus,
    cluster_queue_usage,
    cohort_usage,
)
from quotactor.kueue.tree import (
    DRS,
    Node,
    add_usage,
    available,
    compare_drs,
    dominant_resource_share,
    potential_available,
    remove_usage,
)
from quotactor.kueue.validation import (
    validate_cluster_queue,
    validate_cohort,
    validate_local_queue,
    validate_priority_class,
    validate_resource_flavor,
    validate_workload,
)

__all__ = ["Attempt", "CycleResult", "KueueManager", "KueueObject", "Preempted"]

KueueObject = ResourceFlavor | ClusterQueue | Cohort | LocalQueue | WorkloadPriorityClass
_KINDS = {
    "ResourceFlavor": "flavors", "ClusterQueue": "cluster_queues", "Cohort": "cohorts",
    "LocalQueue": "local_queues", "WorkloadPriorityClass": "priority_classes",
}
_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)


@dataclass(frozen=True, slots=True)
class Preempted:
    """`workload` (of `cluster_queue`) was preempted to admit `by`, for `reason`."""

    workload: str
    cluster_queue: str
    by: str
    reason: str


@dataclass(frozen=True, slots=True)
class CycleResult:
    """What one or more scheduling cycles did, in order."""

    admitted: tuple[str, ...] = ()
    preempted: tuple[Preempted, ...] = ()
    cycles: int = 0

    def __add__(self, other: CycleResult) -> CycleResult:
        return CycleResult(self.admitted + other.admitted, self.preempted + other.preempted,
                           self.cycles + other.cycles)


@dataclass(frozen=True, slots=True)
class Attempt:
    """What `KueueManager.attempt` did: admitted (with its victims), or why not."""

    admitted: bool
    reason: str
    preempted: tuple[Preempted, ...] = ()
    blocked_by: str = ""
    """Why not, as a category: `quota` (the ClusterQueue has no room, even preempting),
    `head` (a StrictFIFO queue admits its head only), `queue` (no ClusterQueue, an inactive
    one, or a namespace it does not select) or `room` (the host's room check)."""


@dataclass(slots=True)
class _Entry:
    record: Record
    cluster_queue: str
    assignment: Assignment
    targets: list[Target] = field(default_factory=list)


class KueueManager:
    """Kueue's admission engine; see the module docstring.

    Args:
        fair_sharing: order heads and choose victims by dominant resource share (Kueue's
            `fairSharing` configuration) instead of the classical rules.
        fair_sharing_strategies: the preemption strategies of fair sharing, in order
            (`LessThanOrEqualToFinalShare`, `LessThanInitialShare`).
    """

    def __init__(self, fair_sharing: bool = False,
                 fair_sharing_strategies: tuple[str, ...] = _STRATEGIES) -> None:
        if not fair_sharing_strategies or any(
                s not in _STRATEGIES for s in fair_sharing_strategies):
            raise KueueError("fair_sharing_strategies: expected LessThanOrEqualToFinalShare "
                             f"and/or LessThanInitialShare, got {fair_sharing_strategies!r}")
        self._cluster = Cluster(fair_sharing)
        self._strategies = tuple(fair_sharing_strategies)
        self._records: dict[str, Record] = {}
        self._queues: dict[str, list[Record]] = {}
        self._homeless: dict[str, Record] = {}
        self._seq = 0
        self.now = 0.0
        self._cluster.rebuild()

    @property
    def fair_sharing(self) -> bool:
        return self._cluster.fair_sharing

    # -- objects -----------------------------------------------------------------------

    def apply(self, *objects: KueueObject) -> None:
        """Create or replace objects (all or none): each is validated with Kueue's rules,
        and together they must leave the cohorts without a cycle. Pending workloads are
        looked at again, as Kueue requeues them when a queue changes."""
        cluster = self._cluster
        staged: dict[str, dict[object, object]] = {
            attr: dict(getattr(cluster, attr)) for attr in _KINDS.values()}
        for obj in objects:
            if isinstance(obj, ResourceFlavor):
                validate_resource_flavor(obj)
                staged["flavors"][obj.name] = obj
            elif isinstance(obj, ClusterQueue):
                validate_cluster_queue(obj)
                staged["cluster_queues"][obj.name] = obj
            elif isinstance(obj, Cohort):
                validate_cohort(obj)
                staged["cohorts"][obj.name] = obj
            elif isinstance(obj, LocalQueue):
                validate_local_queue(obj)
                staged["local_queues"][(obj.namespace, obj.name)] = obj
            elif isinstance(obj, WorkloadPriorityClass):
                validate_priority_class(obj)
                staged["priority_classes"][obj.name] = obj
            else:
                raise KueueError(f"cannot apply {type(obj).__name__}: not a Kueue object")
        _check_cohort_cycles(staged["cohorts"])  # type: ignore[arg-type]
        self._commit(staged)

    def delete(self, kind: str, name: str, namespace: str = "default") -> None:
        """Delete an object by kind and name (a LocalQueue by namespace too). A ClusterQueue
        still holding admitted workloads is refused (Kueue keeps it until they finish)."""
        attr = _KINDS.get(kind)
        if attr is None:
            raise KueueError(f"unknown kind {kind!r}: expected one of {', '.join(_KINDS)}")
        key: object = (namespace, name) if kind == "LocalQueue" else name
        table = getattr(self._cluster, attr)
        if key not in table:
            raise KueueError(f"{kind} {name} not found")
        if kind == "ClusterQueue" and self._cluster.admitted.get(name):
            raise KueueError(f"ClusterQueue {name} still has admitted workloads")
        staged: dict[str, dict[object, object]] = {
            a: dict(getattr(self._cluster, a)) for a in _KINDS.values()}
        del staged[attr][key]
        self._commit(staged)

    def set_namespace(self, name: str, labels: dict[str, str] | None = None) -> None:
        """Declare a namespace's labels (what ClusterQueue namespace selectors match)."""
        if not name:
            raise KueueError("namespace name must not be empty")
        self._cluster.namespaces[name] = dict(labels or {})
        self._requeue_all()

    def _commit(self, staged: dict[str, dict[object, object]]) -> None:
        cluster = self._cluster
        for attr, table in staged.items():
            setattr(cluster, attr, table)
        cluster.rebuild()
        self._rehome()
        self._requeue_all()

    # -- workloads ---------------------------------------------------------------------

    def submit(self, workload: Workload) -> None:
        """Queue a workload (refused: invalid, a duplicate key, or an unknown priority
        class). It waits in its LocalQueue's ClusterQueue until a cycle admits it."""
        record = self._new_record(workload)
        self._records[workload.key] = record
        self._enqueue(record)

    def restore(self, workload: Workload, cluster_queue: str,
                flavors: Mapping[str, Mapping[str, str]] | None = None,
                admitted_at: float | None = None) -> None:
        """Record a workload Kueue already admitted (a cluster's `status.admission`): it holds
        quota in `cluster_queue` with `flavors[pod set][resource]` (default: the first flavor
        of each resource's group), even above the quota, as Kueue's cache does.
        `admitted_at` orders it among victims (default: now)."""
        record = self._new_record(workload)
        spec = self._cluster.cluster_queues.get(cluster_queue)
        if spec is None:
            raise KueueError(f"Workload {workload.key}: ClusterQueue {cluster_queue} not found")
        first = {r: g.flavors[0].name for g in spec.resource_groups for r in g.covered_resources}
        usage: dict[FlavorResource, int] = {}
        pod_sets = []
        for pod_set in workload.pod_sets:
            chosen = (flavors or {}).get(pod_set.name, {})
            requests = pod_set.total()
            if "pods" in first:
                requests["pods"] = pod_set.count
            given: list[tuple[str, str]] = []
            for resource, amount in sorted(requests.items()):
                flavor = chosen.get(resource, first.get(resource))
                if flavor is None or spec.quota(flavor, resource) is None:
                    if amount == 0:
                        continue
                    raise KueueError(f"Workload {workload.key}: pod set {pod_set.name}: "
                                     f"ClusterQueue {cluster_queue} has no quota for "
                                     f"{resource} in flavor {flavor}")
                given.append((resource, flavor))
                usage[(flavor, resource)] = usage.get((flavor, resource), 0) + amount
            pod_sets.append(PodSetAdmission(pod_set.name, pod_set.count, tuple(given)))
        self._records[workload.key] = record
        record.cluster_queue = cluster_queue
        record.usage = usage
        record.admission = Admission(cluster_queue, tuple(pod_sets), tuple(sorted(usage.items())))
        record.admitted_at = self.now if admitted_at is None else admitted_at
        record.message = "Admitted"
        self._cluster.admitted.setdefault(cluster_queue, {})[record.key] = record
        self._cluster.charge(record)

    def _new_record(self, workload: Workload) -> Record:
        """A record for a new workload, or the refusal (nothing is changed but the sequence
        number, which only orders records)."""
        validate_workload(workload)
        if workload.key in self._records:
            raise KueueError(f"Workload {workload.key} already exists")
        if (workload.priority is None and workload.priority_class is not None
                and workload.priority_class not in self._cluster.priority_classes):
            raise KueueError(f"Workload {workload.key}: spec.priorityClassName: "
                             f"WorkloadPriorityClass {workload.priority_class} not found")
        self._seq += 1
        return Record(workload, self._seq, self._cluster.priority_of(workload))

    def finish(self, key: str) -> None:
        """The workload is done (or deleted): its quota is released and it is forgotten."""
        record = self._record(key)
        if record.admission is not None:
            self._release(record)
        else:
            self._dequeue(record)
        del self._records[key]

    def evict(self, key: str) -> None:
        """Take an admitted workload's quota back and queue it again (as Kueue does for an
        eviction); refused for a workload that is not admitted."""
        record = self._record(key)
        if record.admission is None:
            raise KueueError(f"Workload {key} is not admitted")
        self._release(record)
        record.message = "Evicted"
        self._enqueue(record)

    def schedule(self) -> CycleResult:
        """Run one scheduling cycle (see the module docstring)."""
        heads = self._heads()
        if not heads:
            return CycleResult()
        entries = []
        for record, cq_name in heads:
            problem = self._inadmissible(record, cq_name)
            if problem is not None:
                record.message = problem
                record.inadmissible = True
                continue
            entries.append(self._nominate(record, cq_name))
        admitted: list[str] = []
        preempted: list[Preempted] = []
        gone: set[str] = set()
        reserved: list[tuple[Node, dict[FlavorResource, int]]] = []
        try:
            for entry in self._iterate(entries):
                self._process(entry, admitted, preempted, gone, reserved)
        finally:
            for node, usage in reserved:
                for fr, amount in usage.items():
                    remove_usage(node, fr, amount)
        return CycleResult(tuple(admitted), tuple(preempted), 1)

    def attempt(self, key: str, room: Callable[[tuple[str, ...]], bool] | None = None
                ) -> Attempt:
        """Try to admit one pending workload now, as a cycle would if it were the only head:
        flavors, then victims, then `room(victim keys)` (a host's own check, say the nodes),
        then the admission and the evictions, or nothing. Under `StrictFIFO` only the queue's
        head may be admitted. Set-aside marks are neither read nor changed."""
        record = self._record(key)
        if record.admission is not None:
            raise KueueError(f"Workload {key} is already admitted")
        cq_name = record.cluster_queue
        if cq_name is None:
            return Attempt(False, record.message, blocked_by="queue")
        problem = self._inadmissible(record, cq_name)
        if problem is not None:
            return Attempt(False, problem, blocked_by="queue")
        spec = self._cluster.cluster_queues[cq_name]
        head = self._queues[cq_name][0]
        if spec.queueing_strategy == STRICT_FIFO and head is not record:
            return Attempt(False, f"waits behind {head.key}, the head of StrictFIFO "
                                  f"ClusterQueue {cq_name}", blocked_by="head")
        entry = self._nominate(record, cq_name)
        mode = entry.assignment.mode
        if mode == NO_FIT:
            return Attempt(False, "; ".join(entry.assignment.reasons())
                           or "couldn't assign flavors", blocked_by="quota")
        if mode == PREEMPT_MODE and not entry.targets:
            return Attempt(False, "; ".join([*entry.assignment.reasons(),
                                             "no workloads can be preempted"]),
                           blocked_by="quota")
        if room is not None and not room(tuple(t.record.key for t in entry.targets)):
            return Attempt(False, "no room", blocked_by="room")
        return Attempt(True, "", tuple(self._carry_out(entry)))

    def never_fits(self, workload: Workload) -> str | None:
        """Why `workload` could never be admitted where its LocalQueue points, whatever else
        runs (None if it could): no queue, a namespace its ClusterQueue does not select, or a
        request beyond the most its ClusterQueue could ever hold (flavors tried in order, as
        on an empty cluster)."""
        cluster = self._cluster
        cq_name = self._resolve(workload)
        if cq_name is None:
            return (f"LocalQueue {workload.namespace}/{workload.queue_name} doesn't exist or "
                    "points to a missing ClusterQueue")
        spec = cluster.cluster_queues[cq_name]
        selector = spec.namespace_selector
        if selector is None or not selector.matches(cluster.namespace_labels(workload.namespace)):
            return f"namespace {workload.namespace} is not selected by ClusterQueue {cq_name}"
        node = cluster.node(cq_name)
        groups = {r: g for g in spec.resource_groups for r in g.covered_resources}
        assumed: dict[FlavorResource, int] = {}
        for pod_set in workload.pod_sets:
            requests = pod_set.total()
            if "pods" in groups:
                requests["pods"] = pod_set.count
            for resource, amount in sorted(requests.items()):
                if resource not in groups and amount:
                    return f"ClusterQueue {cq_name} has no quota for {resource}"
            for group in {id(g): g for g in groups.values()}.values():
                wanted = {r: requests[r] for r in group.covered_resources if requests.get(r)}
                if not wanted:
                    continue
                flavor = next((f.name for f in group.flavors if all(
                    assumed.get((f.name, r), 0) + a <= potential_available(node, (f.name, r))
                    for r, a in wanted.items())), None)
                if flavor is None:
                    most = {r: max(potential_available(node, (f.name, r)) for f in group.flavors)
                            for r in wanted}
                    return (f"exceeds the most ClusterQueue {cq_name} can ever hold of "
                            + ", ".join(f"{r} ({most[r]})" for r in sorted(wanted)))
                for r, a in wanted.items():
                    assumed[(flavor, r)] = assumed.get((flavor, r), 0) + a
        return None

    def admit_pending(self, max_cycles: int | None = None) -> CycleResult:
        """Run cycles until one changes nothing (or `max_cycles`); what they did."""
        total = CycleResult()
        limit = max_cycles if max_cycles is not None else 4 * len(self._records) + 8
        for _ in range(limit):
            before = self._waiting_state()
            result = self.schedule()
            total = total + result
            if not result.admitted and not result.preempted and self._waiting_state() == before:
                break
        return total

    # -- reads -------------------------------------------------------------------------

    def workload(self, key: str) -> WorkloadStatus:
        record = self._record(key)
        return WorkloadStatus(key, "Admitted" if record.admission else "Pending",
                              record.cluster_queue, record.priority, record.admission,
                              record.message, record.preemptions)

    def workloads(self) -> list[WorkloadStatus]:
        return [self.workload(key) for key in sorted(self._records)]

    def pending(self, cluster_queue: str | None = None) -> list[str]:
        """Pending workload keys, in queue order (all queues, or one)."""
        if cluster_queue is not None:
            return [r.key for r in self._queues.get(cluster_queue, [])]
        keys = [r.key for q in sorted(self._queues) for r in self._queues[q]]
        return keys + sorted(self._homeless)

    def inadmissible(self, cluster_queue: str | None = None) -> list[str]:
        """Pending workloads set aside until quota is released in their cohort (Kueue's
        inadmissible list), in queue order."""
        names = [cluster_queue] if cluster_queue is not None else sorted(self._queues)
        return [r.key for n in names for r in self._queues.get(n, []) if r.inadmissible]

    def admitted(self, cluster_queue: str | None = None) -> list[str]:
        names = [cluster_queue] if cluster_queue is not None else sorted(self._cluster.admitted)
        return sorted(k for n in names for k in self._cluster.admitted.get(n, {}))

    def cluster_queue_usage(self, name: str) -> ClusterQueueUsage:
        if name not in self._cluster.cluster_queues:
            raise KueueError(f"ClusterQueue {name} not found")
        return cluster_queue_usage(self._cluster, name, len(self._queues.get(name, [])))

    def cluster_queue_usages(self) -> list[ClusterQueueUsage]:
        return [self.cluster_queue_usage(n) for n in sorted(self._cluster.cluster_queues)]

    def cohort_usage(self, name: str) -> CohortUsage:
        if name not in self._cluster.cohort_nodes:
            raise KueueError(f"Cohort {name} not found")
        return cohort_usage(self._cluster, name)

    def cohort_usages(self) -> list[CohortUsage]:
        return [self.cohort_usage(n) for n in sorted(self._cluster.cohort_nodes)]

    def share(self, name: str) -> float:
        """The weighted dominant resource share of a ClusterQueue or Cohort (0: not
        borrowing; infinite: borrowing with weight 0)."""
        node = self._cluster.nodes.get(name) or self._cluster.cohort_nodes.get(name)
        if node is None:
            raise KueueError(f"no ClusterQueue or Cohort named {name}")
        return dominant_resource_share(node).weighted()

    def objects(self) -> list[KueueObject]:
        """Every applied object, kind by kind."""
        c = self._cluster
        found: list[KueueObject] = [*c.flavors.values(), *c.cohorts.values(),
                                    *c.cluster_queues.values(), *c.local_queues.values(),
                                    *c.priority_classes.values()]
        return found

    @property
    def cluster(self) -> Cluster:
        """The objects, tree and admitted workloads (read only: change them through the
        manager)."""
        return self._cluster

    # -- queues ------------------------------------------------------------------------

    def _record(self, key: str) -> Record:
        record = self._records.get(key)
        if record is None:
            raise KueueError(f"Workload {key} not found")
        return record

    def _resolve(self, workload: Workload) -> str | None:
        queue = self._cluster.local_queues.get((workload.namespace, workload.queue_name))
        if queue is None or queue.cluster_queue not in self._cluster.cluster_queues:
            return None
        return queue.cluster_queue

    def _enqueue(self, record: Record) -> None:
        record.inadmissible = False
        cq = self._resolve(record.workload)
        record.cluster_queue = cq
        if cq is None:
            record.message = (f"LocalQueue {record.workload.queue_name} doesn't exist or "
                              "points to a missing ClusterQueue")
            self._homeless[record.key] = record
            return
        bisect.insort(self._queues.setdefault(cq, []), record, key=lambda r: r.order)

    def _dequeue(self, record: Record) -> None:
        if record.key in self._homeless:
            del self._homeless[record.key]
            return
        assert record.cluster_queue is not None
        queue = self._queues[record.cluster_queue]
        queue.remove(record)
        if not queue:
            del self._queues[record.cluster_queue]

    def _rehome(self) -> None:
        """Put every pending workload in the queue its LocalQueue now points to."""
        pending = [*self._homeless.values(), *(r for q in self._queues.values() for r in q)]
        self._homeless = {}
        self._queues = {}
        for record in pending:
            self._enqueue(record)

    def _requeue_all(self) -> None:
        for queue in self._queues.values():
            for record in queue:
                record.inadmissible = False

    def _requeue_tree(self, cluster_queue: str) -> None:
        """Quota was released in `cluster_queue`: its cohort tree's set-aside heads get
        another chance (Kueue's QueueInadmissibleWorkloads)."""
        node = self._cluster.nodes.get(cluster_queue)
        names = [n.name for n in node.root().subtree_cqs()] if node else [cluster_queue]
        for name in names:
            for record in self._queues.get(name, []):
                record.inadmissible = False

    def _waiting_state(self) -> tuple[int, int]:
        return (sum(1 for q in self._queues.values() for r in q if r.inadmissible),
                sum(len(q) for q in self._queues.values()))

    def _heads(self) -> list[tuple[Record, str]]:
        heads = []
        for name in sorted(self._queues):
            head = next((r for r in self._queues[name] if not r.inadmissible), None)
            if head is not None:
                heads.append((head, name))
        return heads

    def _inadmissible(self, record: Record, cq_name: str) -> str | None:
        cluster = self._cluster
        spec = cluster.cluster_queues[cq_name]
        missing = sorted({f.name for g in spec.resource_groups for f in g.flavors}
                         - set(cluster.flavors))
        if missing:
            return f"ClusterQueue {cq_name} is inactive: flavor {missing[0]} not found"
        selector = spec.namespace_selector
        if selector is None or not selector.matches(
                cluster.namespace_labels(record.workload.namespace)):
            return (f"Workload namespace doesn't match ClusterQueue selector "
                    f"({record.workload.namespace} is not selected by {cq_name})")
        return None

    # -- the cycle ---------------------------------------------------------------------

    def _nominate(self, record: Record, cq_name: str) -> _Entry:
        assignment = assign(self._cluster, record, cq_name, self._strategies)
        entry = _Entry(record, cq_name, assignment)
        if assignment.mode == PREEMPT_MODE:
            entry.targets = get_targets(self._cluster, record, cq_name,
                                        assignment.needing_preemption(), assignment.usage,
                                        self._strategies)
        return entry

    def _iterate(self, entries: list[_Entry]) -> Iterator[_Entry]:
        if not self._cluster.fair_sharing:
            yield from sorted(entries, key=lambda e: (
                e.assignment.borrowing, -e.record.priority, e.record.workload.created,
                e.record.seq))
            return
        remaining = sorted(entries, key=lambda e: e.cluster_queue)
        while remaining:
            first = remaining[0]
            node = self._cluster.node(first.cluster_queue)
            chosen = first if node.parent is None else _tournament(
                self._cluster, node.root(), remaining)
            remaining.remove(chosen)
            yield chosen

    def _process(self, entry: _Entry, admitted: list[str], preempted: list[Preempted],
                 gone: set[str], reserved: list[tuple[Node, dict[FlavorResource, int]]]
                 ) -> None:
        record = entry.record
        if any(t.record.key in gone for t in entry.targets):
            entry = self._nominate(record, entry.cluster_queue)
        mode = entry.assignment.mode
        if mode == NO_FIT:
            record.message = "; ".join(entry.assignment.reasons()) or "couldn't assign flavors"
            self._set_aside(record, entry.cluster_queue)
            return
        if mode == PREEMPT_MODE and not entry.targets:
            record.message = ("; ".join(entry.assignment.reasons())
                              + "; no workloads can be preempted").lstrip("; ")
            self._reserve(entry, reserved)
            self._set_aside(record, entry.cluster_queue)
            return
        node = self._cluster.node(entry.cluster_queue)
        victims = [t.record for t in entry.targets]
        with self._cluster.without(victims):
            fits = all(amount <= max(0, available(node, fr))
                       for fr, amount in entry.assignment.usage.items())
        if not fits:
            record.message = "Workload no longer fits after processing another workload"
            return
        done = self._carry_out(entry)
        preempted.extend(done)
        gone.update(p.workload for p in done)
        admitted.append(record.key)

    def _carry_out(self, entry: _Entry) -> list[Preempted]:
        """Evict the entry's victims (back to their queues) and admit it."""
        record = entry.record
        done = []
        for target in entry.targets:
            victim = target.record
            assert victim.cluster_queue is not None
            done.append(Preempted(victim.key, victim.cluster_queue, record.key, target.reason))
            self._release(victim)
            victim.preemptions += 1
            victim.message = f"Preempted to accommodate {record.key} ({target.reason})"
            self._enqueue(victim)
        self._admit(record, entry)
        return done

    def _set_aside(self, record: Record, cq_name: str) -> None:
        if self._cluster.cluster_queues[cq_name].queueing_strategy != STRICT_FIFO:
            record.inadmissible = True

    def _reserve(self, entry: _Entry, reserved: list[tuple[Node, dict[FlavorResource, int]]]
                 ) -> None:
        """Hold, for the rest of the cycle, the quota a workload waiting for preemption could
        not be sure to get back later (Kueue does so unless reclaimWithinCohort is Any)."""
        spec = self._cluster.cluster_queues[entry.cluster_queue]
        if spec.preemption.reclaim_within_cohort == ANY:
            return
        node = self._cluster.node(entry.cluster_queue)
        usage: dict[FlavorResource, int] = {}
        for fr, amount in entry.assignment.usage.items():
            used = node.usage.get(fr, 0)
            quota = node.quotas.get(fr)
            nominal = quota.nominal if quota else 0
            if entry.assignment.borrowing > 0:
                if quota is None or quota.borrowing_limit is None:
                    usage[fr] = amount
                else:
                    usage[fr] = min(amount, nominal + quota.borrowing_limit - used)
            else:
                usage[fr] = max(0, min(amount, nominal - used))
        usage = {fr: a for fr, a in usage.items() if a > 0}
        for fr, amount in usage.items():
            add_usage(node, fr, amount)
        reserved.append((node, usage))

    def _admit(self, record: Record, entry: _Entry) -> None:
        self._dequeue(record)
        pod_sets = tuple(
            PodSetAdmission(p.name, p.count, tuple((c.resource, c.flavor) for c in p.flavors))
            for p in entry.assignment.pod_sets)
        usage = dict(entry.assignment.usage)
        record.admission = Admission(entry.cluster_queue, pod_sets, tuple(sorted(usage.items())))
        record.usage = usage
        record.cluster_queue = entry.cluster_queue
        record.admitted_at = self.now
        record.message = ("Admitted" if entry.assignment.borrowing == 0
                          else "Admitted, borrowing from the cohort")
        record.inadmissible = False
        self._cluster.admitted.setdefault(entry.cluster_queue, {})[record.key] = record
        self._cluster.charge(record)

    def _release(self, record: Record) -> None:
        assert record.cluster_queue is not None and record.admission is not None
        self._cluster.release(record)
        cq = record.cluster_queue
        del self._cluster.admitted[cq][record.key]
        if not self._cluster.admitted[cq]:
            del self._cluster.admitted[cq]
        record.admission = None
        record.usage = {}
        self._requeue_tree(cq)


def _check_cohort_cycles(cohorts: dict[str, Cohort]) -> None:
    for start in sorted(cohorts):
        seen = [start]
        parent = cohorts[start].parent
        while parent is not None and parent in cohorts:
            if parent in seen:
                raise KueueError(f"Cohort {start}: spec.parentName: the cohorts "
                                 f"{' -> '.join([*seen, parent])} form a cycle")
            seen.append(parent)
            parent = cohorts[parent].parent


def _tournament(cluster: Cluster, root: Node, entries: list[_Entry]) -> _Entry:
    """The entry to process next among those under `root`: at every cohort, the child whose
    share after admitting its candidate is lowest (not borrowing on the candidate's flavors
    first; then priority, then age)."""
    by_cq = {e.cluster_queue: e for e in entries}
    shares: dict[tuple[int, str], DRS] = {}
    for cq in root.subtree_cqs():
        entry = by_cq.get(cq.name)
        if entry is None:
            continue
        with cluster.adding(cq.name, entry.assignment.usage):
            drs = dominant_resource_share(cq)
            for ancestor in cq.ancestors():
                shares[(id(ancestor), entry.record.key)] = drs
                drs = dominant_resource_share(ancestor)

    def better(a: _Entry, b: _Entry, cohort: Node) -> bool:
        a_drs = shares[(id(cohort), a.record.key)]
        b_drs = shares[(id(cohort), b.record.key)]
        a_borrows = a_drs.borrowing_on(a.assignment.usage)
        b_borrows = b_drs.borrowing_on(b.assignment.usage)
        if a_borrows != b_borrows:
            return not a_borrows
        order = compare_drs(a_drs, b_drs)
        if order != 0:
            return order < 0
        if a.record.priority != b.record.priority:
            return a.record.priority > b.record.priority
        return (a.record.workload.created, a.record.seq) < (b.record.workload.created,
                                                             b.record.seq)

    def play(cohort: Node) -> _Entry | None:
        candidates = [w for w in map(play, cohort.child_cohorts) if w is not None]
        candidates += [by_cq[cq.name] for cq in sorted(cohort.child_cqs, key=lambda n: n.name)
                       if cq.name in by_cq]
        if not candidates:
            return None
        best = candidates[0]
        for candidate in candidates[1:]:
            if better(candidate, best, cohort):
                best = candidate
        return best

    winner = play(root)
    assert winner is not None
    return winner
