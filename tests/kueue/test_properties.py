"""Properties of admission under random queues, limits and workloads (hypothesis).

After any sequence of submissions, scheduling cycles, evictions and finishes:

- a ClusterQueue's usage is the sum of its admitted workloads' usage;
- no ClusterQueue uses more than nominal + borrowingLimit of any flavor and resource;
- lending limits hold: the other queues of a cohort never use more than their own nominal
  quota plus what a queue may lend (so each queue keeps nominal - lendingLimit for itself);
- a cohort never uses more than the quota of its whole tree;
- a workload is admitted whole: every pod set, every requested resource, exactly its request.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotactor.kueue import (
    ClusterQueue,
    FlavorQuotas,
    KueueManager,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)

FLAVORS = ("on-demand", "spot")
POLICIES = st.sampled_from(["Never", "LowerPriority", "LowerOrNewerEqualPriority"])
RECLAIM = st.sampled_from(["Never", "LowerPriority", "Any"])


@st.composite
def quotas(draw: Any, resource: str) -> ResourceQuota:
    nominal = draw(st.integers(0, 8))
    borrowing = draw(st.one_of(st.none(), st.integers(0, 6)))
    lending = draw(st.one_of(st.none(), st.integers(0, nominal)))
    return ResourceQuota(resource, nominal, borrowing, lending)


@st.composite
def cluster_queues(draw: Any, name: str) -> ClusterQueue:
    flavors = draw(st.lists(st.sampled_from(FLAVORS), min_size=1, max_size=2, unique=True))
    group = ResourceGroup(("cpu", "memory"), tuple(
        FlavorQuotas(f, (draw(quotas("cpu")), draw(quotas("memory")))) for f in flavors))
    return ClusterQueue(name, (group,), cohort="all", queueing_strategy=draw(
        st.sampled_from(["StrictFIFO", "BestEffortFIFO"])),
        preemption=Preemption(draw(POLICIES), draw(RECLAIM)))


@st.composite
def workloads(draw: Any, serial: int) -> Workload:
    sets = tuple(PodSet(f"ps{i}", draw(st.integers(0, 3)),
                        {"cpu": draw(st.integers(0, 3)), "memory": draw(st.integers(0, 3))})
                 for i in range(draw(st.integers(1, 2))))
    return Workload(f"w{serial}", f"q-{draw(st.sampled_from('abc'))}", sets,
                    priority=draw(st.integers(0, 2)), created=float(serial))


ACTIONS = st.lists(st.tuples(st.sampled_from(["submit", "submit", "cycle", "finish", "evict"]),
                             st.integers(0, 10**6)), min_size=1, max_size=30)


def check(m: KueueManager) -> None:
    cluster = m.cluster
    total_nominal: dict[tuple[str, str], int] = {}
    total_used: dict[tuple[str, str], int] = {}
    for name, spec in cluster.cluster_queues.items():
        records = list(cluster.admitted.get(name, {}).values())
        node = cluster.node(name)
        for group in spec.resource_groups:
            for flavor in group.flavors:
                for quota in flavor.resources:
                    fr = (flavor.name, quota.name)
                    used = sum(r.usage.get(fr, 0) for r in records)
                    assert node.usage.get(fr, 0) == used
                    if quota.borrowing_limit is not None:
                        assert used <= quota.nominal + quota.borrowing_limit
                    total_nominal[fr] = total_nominal.get(fr, 0) + quota.nominal
                    total_used[fr] = total_used.get(fr, 0) + used
        for record in records:
            assert record.admission is not None
            expected: dict[tuple[str, str], int] = {}
            for pod_set, given_flavors in zip(record.workload.pod_sets,
                                              record.admission.pod_sets, strict=True):
                flavor_of = dict(given_flavors.flavors)
                for resource, amount in pod_set.total().items():
                    assert resource in flavor_of, "a requested resource without a flavor"
                    key = (flavor_of[resource], resource)
                    expected[key] = expected.get(key, 0) + amount
            assert {k: v for k, v in record.usage.items() if v} == \
                   {k: v for k, v in expected.items() if v}
    for fr, used in total_used.items():
        assert used <= total_nominal[fr], "the cohort used more than its tree's quota"
    for name, spec in cluster.cluster_queues.items():
        for group in spec.resource_groups:
            for flavor in group.flavors:
                for quota in flavor.resources:
                    if quota.lending_limit is None:
                        continue
                    fr = (flavor.name, quota.name)
                    others_used = total_used.get(fr, 0) - cluster.node(name).usage.get(fr, 0)
                    others_nominal = total_nominal[fr] - quota.nominal
                    assert others_used <= others_nominal + quota.lending_limit


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.booleans())
def test_admission_invariants(data: Any, fair_sharing: bool) -> None:
    m = KueueManager(fair_sharing=fair_sharing)
    queues = [data.draw(cluster_queues(n)) for n in "abc"]
    m.apply(*(ResourceFlavor(f) for f in FLAVORS), *queues,
            *(LocalQueue("default", f"q-{q.name}", q.name) for q in queues))
    submitted: list[str] = []
    for serial, (action, pick) in enumerate(data.draw(ACTIONS)):
        if action == "submit":
            workload = data.draw(workloads(serial))
            m.submit(workload)
            submitted.append(workload.key)
        elif action == "cycle":
            m.admit_pending()
        elif submitted:
            key = submitted[pick % len(submitted)]
            if action == "finish":
                m.finish(key)
                submitted.remove(key)
            elif m.workload(key).state == "Admitted":
                m.evict(key)
        check(m)
    m.admit_pending()
    check(m)
