"""Koordinator-style multi-hierarchy elastic quota (seed 002).

Quota groups form a tree; each declares a guaranteed `min` and a `max`. Idle guarantees are
lent to busy siblings, shared by weight, and taken back by revoking the borrowers' least
important pods when the lenders need them again. `ElasticQuotaManager` is the engine;
`ElasticQuotaActor` and its facade `ElasticQuotaService` serve it to concurrent callers.
"""

from quotactor.elastic.actor import ElasticQuotaActor
from quotactor.elastic.admission import Admission
from quotactor.elastic.errors import QuotaError
from quotactor.elastic.full import Figures, compute_figures
from quotactor.elastic.loader import load_elastic_quotas, parent_first
from quotactor.elastic.manager import ElasticQuotaManager
from quotactor.elastic.monitor import OveruseMonitor, OveruseReport
from quotactor.elastic.pod_file import PodRequest, load_pod_requests
from quotactor.elastic.pods import Pod
from quotactor.elastic.service import ElasticQuotaService
from quotactor.elastic.spec import DEFAULT_QUOTA, ROOT_QUOTA, SYSTEM_QUOTA, QuotaSpec
from quotactor.elastic.split import split_by_weight
from quotactor.elastic.status import QuotaStatus
from quotactor.elastic.view import quota_tree_view
from quotactor.elastic.waterfill import Claim, redistribute, scaled_mins

__all__ = [
    "DEFAULT_QUOTA",
    "ROOT_QUOTA",
    "SYSTEM_QUOTA",
    "Admission",
    "Claim",
    "ElasticQuotaActor",
    "ElasticQuotaManager",
    "ElasticQuotaService",
    "Figures",
    "OveruseMonitor",
    "OveruseReport",
    "Pod",
    "PodRequest",
    "QuotaError",
    "QuotaSpec",
    "QuotaStatus",
    "compute_figures",
    "load_elastic_quotas",
    "load_pod_requests",
    "parent_first",
    "quota_tree_view",
    "redistribute",
    "scaled_mins",
    "split_by_weight",
]
