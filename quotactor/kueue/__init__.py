"""Kueue's quota model (kubernetes-sigs/kueue): ClusterQueues with flavors, nominal quotas,
borrowing and lending limits, cohorts (hierarchical), preemption and fair sharing.

`KueueManager` is the admission engine; `KueueService` serves one to concurrent callers;
`load_manifests` reads `kueue.x-k8s.io/v1beta1` YAML. See docs/kueue.md for what is modelled.
"""

from quotactor.kueue.actor import KueueActor
from quotactor.kueue.api import (
    BorrowWithinCohort,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    LabelRequirement,
    LabelSelector,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Taint,
    Toleration,
    Workload,
    WorkloadPriorityClass,
)
from quotactor.kueue.cluster import Admission, PodSetAdmission
from quotactor.kueue.errors import KueueError
from quotactor.kueue.loader import Manifests, load_manifests
from quotactor.kueue.manager import CycleResult, KueueManager, Preempted
from quotactor.kueue.service import KueueService
from quotactor.kueue.status import ClusterQueueUsage, CohortUsage, ResourceUsage, WorkloadStatus

__all__ = [
    "Admission",
    "BorrowWithinCohort",
    "ClusterQueue",
    "ClusterQueueUsage",
    "Cohort",
    "CohortUsage",
    "CycleResult",
    "FlavorFungibility",
    "FlavorQuotas",
    "KueueActor",
    "KueueError",
    "KueueManager",
    "KueueService",
    "LabelRequirement",
    "LabelSelector",
    "LocalQueue",
    "Manifests",
    "PodSet",
    "PodSetAdmission",
    "Preempted",
    "Preemption",
    "ResourceFlavor",
    "ResourceGroup",
    "ResourceQuota",
    "ResourceUsage",
    "Taint",
    "Toleration",
    "Workload",
    "WorkloadPriorityClass",
    "WorkloadStatus",
    "load_manifests",
]
