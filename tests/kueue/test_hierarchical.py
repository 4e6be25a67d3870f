"""Preemption in hierarchical cohorts, re-expressed from Kueue's
pkg/scheduler/preemption/preemption_hierarchical_test.go `TestHierarchicalPreemptions`
(kueue ff69552e). A ClusterQueue Kueue's test declares with a flavor and no resources has a
nominal quota of 0 here (the same quota; this engine validates that groups cover something).
"prefer to preempt evicted workloads" and "reclaim in complex hierarchy" are not here: victims
are evicted at once in this engine, and the latter's queues are built in a loop this file does
not re-express.
Names use hyphens where Kueue's use underscores.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from quotactor.kueue import Cohort
from quotactor.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
)

LP, ANY = "LowerPriority", "Any"


@dataclass(frozen=True)
class Tree:
    cohorts: tuple[tuple[str, str | None, dict[str, str]], ...]
    queues: tuple[tuple[str, str, dict[str, str], str], ...]
    """name, cohort, quota, reclaimWithinCohort (`+bwc`: and borrowWithinCohort
    LowerPriority with maxPriorityThreshold 0)."""


@dataclass(frozen=True)
class Case:
    kueue_case: str
    tree: Tree
    admitted: tuple[tuple[str, str, int, dict[str, str]], ...]  # name, cq, priority, usage
    incoming: tuple[int, dict[str, str]]
    want: dict[str, str]


def c_under_r(c_cpu: str, *queues: tuple[str, str, dict[str, str], str],
              r_quota: dict[str, str] | None = None,
              c_quota: dict[str, str] | None = None) -> Tree:
    return Tree((("r", None, r_quota or {}), ("c", "r", c_quota or {"cpu": c_cpu})), queues)


Q = ("q", "c", {}, ANY)
Q_BWC = ("q", "c", {}, ANY + "+bwc")
Q_LP_BWC = ("q", "c", {}, LP + "+bwc")
Q_BORROWING = ("q-borrowing", "r", {}, ANY)
Q_NOMINAL = ("q-nominal", "r", {"cpu": "2"}, ANY)
Q_SAME = ("q-same-cohort", "c", {}, ANY)

CASES = [
    Case("preempt with hierarchical advantage", c_under_r("2", Q, Q_BORROWING),
         (("admitted2", "q-borrowing", 0, {"cpu": "2"}),), (0, {"cpu": "2"}),
         {"admitted2": IN_COHORT_RECLAMATION}),
    Case("avoid queues within nominal quota", c_under_r("2", Q_NOMINAL, Q, Q_BORROWING),
         (("admitted1", "q-nominal", -10, {"cpu": "2"}),
          ("admitted2", "q-borrowing", 0, {"cpu": "2"})), (0, {"cpu": "2"}),
         {"admitted2": IN_COHORT_RECLAMATION}),
    Case("preempt multiple with hierarchical advantage", c_under_r("2", Q, Q_BORROWING),
         (("admitted1", "q-borrowing", 1, {"cpu": "1"}),
          ("admitted2", "q-borrowing", 2, {"cpu": "1"})), (0, {"cpu": "2"}),
         {"admitted1": IN_COHORT_RECLAMATION, "admitted2": IN_COHORT_RECLAMATION}),
    Case("preempt in cohort and own CQ", c_under_r("3", Q_BWC, Q_SAME),
         (("admitted-not-preemptible", "q-same-cohort", 1, {"cpu": "1"}),
          ("admitted-preemptible", "q-same-cohort", 0, {"cpu": "2"}),
          ("admitted-own-queue", "q", -1, {"cpu": "1"})), (1, {"cpu": "2"}),
         {"admitted-own-queue": IN_CLUSTER_QUEUE,
          "admitted-preemptible": IN_COHORT_RECLAIM_WHILE_BORROWING}),
    Case("prefer to preempt hierarchical candidate", c_under_r("2", Q, Q_BORROWING),
         (("admitted-borrowing", "q-borrowing", 1, {"cpu": "1"}),
          ("admitted-same-queue", "q", -2, {"cpu": "1"})), (0, {"cpu": "1"}),
         {"admitted-borrowing": IN_COHORT_RECLAMATION}),
    Case("forced to preempt priority candidate", c_under_r("2", Q_BWC, Q_NOMINAL, Q_SAME),
         (("admitted-nominal", "q-nominal", -10, {"cpu": "2"}),
          ("admitted-same-cohort", "q-same-cohort", -1, {"cpu": "2"})), (0, {"cpu": "2"}),
         {"admitted-same-cohort": IN_COHORT_RECLAIM_WHILE_BORROWING}),
    Case("incoming workload fits in CQ nominal quota",
         c_under_r("2", ("q", "c", {"cpu": "4"}, ANY), Q_BORROWING, Q_SAME),
         (("admitted-borrowing", "q-borrowing", 10, {"cpu": "3"}),
          ("admitted-same-cohort", "q-same-cohort", 10, {"cpu": "3"})), (0, {"cpu": "4"}),
         {"admitted-borrowing": IN_COHORT_RECLAMATION,
          "admitted-same-cohort": IN_COHORT_RECLAMATION}),
    Case("preempt hierarchical and priority candidates",
         c_under_r("4", Q_LP_BWC, Q_BORROWING, Q_SAME, r_quota={"cpu": "1"}),
         (("admitted-borrowing", "q-borrowing", -1, {"cpu": "2"}),
          ("admitted-same-cohort-preemptible", "q-same-cohort", -1, {"cpu": "1"}),
          ("admitted-borrowing-not-preemptible", "q-borrowing", 1, {"cpu": "2"})),
         (0, {"cpu": "3"}),
         {"admitted-borrowing": IN_COHORT_RECLAMATION,
          "admitted-same-cohort-preemptible": IN_COHORT_RECLAIM_WHILE_BORROWING}),
    Case("preempt hierarchical candidates and inside CQ",
         c_under_r("4", Q_LP_BWC, Q_BORROWING, Q_SAME, r_quota={"cpu": "1"}),
         (("admitted-borrowing", "q-borrowing", -1, {"cpu": "2"}),
          ("admitted-same-queue-preemptible", "q", -1, {"cpu": "1"}),
          ("admitted-borrowing-not-preemptible", "q-borrowing", 1, {"cpu": "2"})),
         (0, {"cpu": "3"}),
         {"admitted-borrowing": IN_COHORT_RECLAMATION,
          "admitted-same-queue-preemptible": IN_CLUSTER_QUEUE}),
    Case("reclaim nominal quota from lowest priority workload, excluding non-borrowing",
         c_under_r("3", Q, Q_BORROWING, Q_NOMINAL),
         (("admitted-borrowing-prio-8", "q-borrowing", 8, {"cpu": "1"}),
          ("admitted-borrowing-prio-9", "q-borrowing", 9, {"cpu": "1"}),
          ("admitted-borrowing-prio-10", "q-borrowing", 9, {"cpu": "1"}),
          ("admitted-nominal", "q-nominal", -2, {"cpu": "2"})), (0, {"cpu": "1"}),
         {"admitted-borrowing-prio-8": IN_COHORT_RECLAMATION}),
    Case("infeasible preemption all available workloads in pruned subtrees",
         Tree((("r", None, {}), ("c", "r", {"cpu": "2"}), ("c-other", "r", {"cpu": "2"})),
              (("q-other", "c-other", {}, ANY), Q, Q_SAME)),
         (("admitted-other-1", "q-other", -10, {"cpu": "1"}),
          ("admitted-other-2", "q-other", -10, {"cpu": "1"}),
          ("admitted-same-cohort", "q-same-cohort", 0, {"cpu": "2"})), (0, {"cpu": "2"}), {}),
    Case("hiearchical preemption with multiple resources",
         c_under_r("4", ("q", "c", {"cpu": "0", "memory": "0"}, ANY),
                   ("q-borrowing", "r", {"cpu": "0", "memory": "0"}, ANY),
                   ("q-same-cohort", "c", {"cpu": "0", "memory": "0"}, ANY),
                   r_quota={"cpu": "3", "memory": "0"}, c_quota={"cpu": "4", "memory": "4Gi"}),
         (("admitted-borrowing", "q-borrowing", 0, {"cpu": "3", "memory": "1Gi"}),
          ("admitted-same-cohort", "q-same-cohort", -2, {"cpu": "1", "memory": "3Gi"})),
         (-2, {"cpu": "2", "memory": "1Gi"}), {"admitted-borrowing": IN_COHORT_RECLAMATION}),
    Case("respect lending limits",
         Tree((("r", None, {}), ("c", "r", {"cpu": "2"})),
              (("q", "c", {"cpu": "3:2"}, ANY), Q_BORROWING)),
         (("admitted-borrowing", "q-borrowing", 0, {"cpu": "4"}),), (-2, {"cpu": "5"}),
         {"admitted-borrowing": IN_COHORT_RECLAMATION}),
]


def group(k: SimpleNamespace, quota: dict[str, str]) -> tuple[object, ...]:
    """One resource group of flavor `default` (`"3:2"`: nominal 3, lending limit 2)."""
    if not quota:
        quota = {"cpu": "0"}
    limits = {r: (v.split(":")[0], None, v.split(":")[1]) if ":" in v else v
              for r, v in quota.items()}
    return (k.rg(k.fq("default", limits)),)


@pytest.mark.parametrize("case", CASES, ids=[c.kueue_case for c in CASES])
def test_hierarchical_preemption(k: SimpleNamespace, case: Case) -> None:
    """Kueue: TestHierarchicalPreemptions, the case of the same name."""
    cohorts = tuple(Cohort(name, parent, group(k, quota) if quota else ())
                    for name, parent, quota in case.tree.cohorts)
    queues = []
    for name, cohort, quota, reclaim in case.tree.queues:
        policy, _, bwc = reclaim.partition("+")
        extra = {"borrow": LP, "threshold": 0} if bwc else {}
        queues.append(k.cq(name, *group(k, quota), cohort=cohort, within=LP, reclaim=policy,
                           **extra))
    m = k.manager(*queues, cohorts=cohorts, flavors=("default",))
    for name, cq, priority, usage in case.admitted:
        k.admit(m, k.wl(name, priority=priority, **usage), cq)
    priority, request = case.incoming
    incoming = k.wl("in", priority=priority, **request)
    assignment = {r: ("default", "Preempt") for r in request}
    assert k.targets(m, incoming, "q", assignment) == case.want
