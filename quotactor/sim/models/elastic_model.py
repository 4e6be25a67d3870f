"""Koordinator's elastic quota as a replay model: jobs are pods charged to ElasticQuotas.

A job becomes one pod whose request is the job's total (vcore is Koordinator's cpu, both in
millicores). Its quota is found as Koordinator finds a pod's: the explicit form first (a
`quota` tag, Koordinator's `quota.scheduling.koordinator.sh/name` pod label), else the
quota named like the job's namespace, else the quota whose `namespaces` annotation lists it,
else the default group. A job's namespace is its `namespace` tag, else its first group,
else its user.

A pending job counts in its quota's request from submission, which is what makes idle
guarantees flow to busy siblings and back: a job may start when its quota's used plus its
request stays within the quota's runtime and the cluster has room for it (checked first: a
job the cluster has no room for waits for the cluster, whatever its quota says; the default
group, whose max is unlimited, is bounded by the cluster alone). When a lender's jobs arrive
its runtime grows, a borrower's shrinks, and the borrower's least important jobs are revoked
until it fits again. The replay drives the pure `ElasticQuotaManager` directly (no actor: it
is single-threaded).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from quotactor.core.resources import Resource, ResourceLike
from quotactor.elastic import (
    DEFAULT_QUOTA,
    ROOT_QUOTA,
    SYSTEM_QUOTA,
    ElasticQuotaManager,
    QuotaError,
    QuotaStatus,
    load_elastic_quotas,
    parent_first,
)
from quotactor.elastic.admission import is_over_runtime
from quotactor.sim.fmt import resources_text
from quotactor.sim.inputs.jobs import Job
from quotactor.sim.models.models import FULL_CLUSTER, GroupFigures, job_priority

__all__ = ["NAMESPACES_ANNOTATION", "ElasticModel", "load_elastic_model"]

NAMESPACES_ANNOTATION = "quota.scheduling.koordinator.sh/namespaces"
_TO_ELASTIC = {"vcore": "cpu"}
_FROM_ELASTIC = {"cpu": "vcore"}


def _rename(amount: ResourceLike, names: Mapping[str, str]) -> Resource:
    return Resource({names.get(k, k): v for k, v in amount.items()})


class ElasticModel:
    """An `ElasticQuotaManager` sized to the cluster, with the namespace bindings."""

    name = "elastic"

    def __init__(self, manager: ElasticQuotaManager, namespaces: Mapping[str, str]) -> None:
        self.manager = manager
        self._namespaces = dict(namespaces)
        self._quotas = set(manager.quota_names())
        self._bounds = _bounded_maxes(manager)
        self._version = 0
        """Counts the model's changes to the manager (it owns it: nobody else changes it)."""
        self._statuses: tuple[int, list[QuotaStatus]] = (-1, [])
        """The manager's statuses, and the version they were read at."""
        self._may_loosen = False
        """Whether a request, an end or a revocation changed the manager since the last
        `loosened` (a start only adds to its quota's used)."""
        self._may_revoke = False
        """Whether a request or an end changed runtimes since the last `revoked`."""
        self._refusals: dict[str, dict[str, int]] = {}
        """Per quota that refused a job since it last loosened, the least runtime - used
        on each name of its max it refused one at."""
        self._default_used = False
        """Whether a job ever ran in the default group (then it is a group of the report)."""

    def group_of(self, job: Job) -> str:
        explicit = job.tags.get("quota")
        if explicit:
            return explicit if explicit in self._quotas else DEFAULT_QUOTA
        namespace = job.tags.get("namespace") or (job.groups[0] if job.groups else job.user)
        if namespace in self._quotas and namespace not in (ROOT_QUOTA, SYSTEM_QUOTA):
            return namespace
        return self._namespaces.get(namespace, DEFAULT_QUOTA)

    def submit(self, job: Job) -> str | None:
        quota = self.group_of(job)
        request = _rename(job.total, _TO_ELASTIC)
        name: str | None = quota
        while name is not None and name != ROOT_QUOTA:
            spec = self.manager.status(name).spec
            over = [n for n in spec.max if request.get(n, 0) > spec.max.get(n, 0)]
            if over:
                limit = _rename(spec.max.restricted_to(over), _FROM_ELASTIC)
                return f"exceeds quota {name}'s max: {resources_text(limit)}"
            name = spec.parent
        try:
            self.manager.add_pod(job.job_id, quota, request, job_priority(job))
        except QuotaError as exc:
            return str(exc)
        self._version += 1
        self._may_loosen = self._may_revoke = True
        self._default_used = self._default_used or quota == DEFAULT_QUOTA
        return None

    def try_start(self, job: Job, free: Resource) -> str | None:
        """The cluster's free room first, then the quota: used + request within its
        runtime (a start takes nothing back: revocation is `revoked`'s)."""
        if not job.total.fits_within_strict(free):
            return FULL_CLUSTER
        decision = self.manager.reserve(job.job_id)
        if not decision.ok:
            room = _room(self.manager.status(decision.quota))
            least = self._refusals.setdefault(decision.quota, room)
            for name, value in room.items():
                least[name] = min(least[name], value)
            return f"quota {decision.quota}'s runtime"
        self._version += 1
        return None

    def end(self, job_id: str) -> None:
        self.manager.remove_pod(job_id)
        self._version += 1
        self._may_loosen = self._may_revoke = True

    def revoked(self) -> list[str]:
        """The least important jobs of every quota over its runtime, until it fits (only a
        request or an end changes runtimes: a start is admitted within them)."""
        if not self._may_revoke:
            return []
        self._may_revoke = False
        out: list[str] = []
        for status in self._read():
            spec = status.spec
            if spec.is_parent or spec.name in (ROOT_QUOTA, SYSTEM_QUOTA):
                continue
            if is_over_runtime(status):
                for pod_id in self.manager.revoke_list(spec.name):
                    self.manager.unassign_pod(pod_id)
                    out.append(pod_id)
        if out:
            self._version += 1
            self._may_loosen = True
        return out

    def loosened(self) -> list[str]:
        """The quotas whose runtime - used grew, on a name of their max, beyond what it was
        at one of their refusals since they last loosened (a request elsewhere shrank, or
        their own jobs ended or were revoked): used + request <= runtime may hold now."""
        if not (self._refusals and self._may_loosen):
            return []
        self._may_loosen = False
        rooms = {status.spec.name: _room(status) for status in self._read()}
        out = [quota for quota, least in self._refusals.items()
               if any(rooms[quota][n] > value for n, value in least.items())]
        for quota in out:
            del self._refusals[quota]
        return out

    def figures(self) -> dict[str, GroupFigures]:
        """Every quota but the root and system ones, parents included (their used and
        runtime cover their children); the default group once a job ran in it. A quota's
        max is what it can ever use: its own bounded by its parents' and the cluster."""
        out: dict[str, GroupFigures] = {}
        for status in self._read():
            spec = status.spec
            if spec.name in (ROOT_QUOTA, SYSTEM_QUOTA):
                continue
            if spec.name == DEFAULT_QUOTA and not self._default_used:
                continue
            out[spec.name] = GroupFigures(
                _rename(status.used, _FROM_ELASTIC), _rename(status.runtime, _FROM_ELASTIC),
                _rename(spec.min, _FROM_ELASTIC), self._bounds[spec.name])
        return out

    def _read(self) -> list[QuotaStatus]:
        """Every quota's status, read again only after the model changed the manager."""
        if self._statuses[0] != self._version:
            self._statuses = (self._version, self.manager.statuses())
        return self._statuses[1]


def _room(status: QuotaStatus) -> dict[str, int]:
    """What more the quota admits now: runtime - used on each name of its max."""
    return {n: status.runtime.get(n, 0) - status.used.get(n, 0) for n in status.spec.max}


def _bounded_maxes(manager: ElasticQuotaManager) -> dict[str, Resource]:
    """Per quota (job resource names), what it can ever use: its max bounded by its
    parent's bound, the root's being the cluster (a name its max leaves out is bounded by
    the parent alone, so the default group's empty max is the cluster)."""
    bounds: dict[str, dict[str, int]] = {}
    for spec in manager.specs():
        above = bounds[spec.parent] if spec.parent is not None else manager.total
        bounds[spec.name] = {n: min(q, spec.max.get(n, q)) for n, q in above.items()}
    return {name: _rename(bound, _FROM_ELASTIC) for name, bound in bounds.items()}


def load_elastic_model(yaml_text: str, total: ResourceLike) -> ElasticModel:
    """ElasticQuota objects (YAML, `---` separated) on a cluster of `total` (job resource
    names); `QuotaError` says what is wrong with the file."""
    manager = ElasticQuotaManager(_rename(total, _TO_ELASTIC))
    for spec in parent_first(load_elastic_quotas(yaml_text)):
        manager.upsert(spec)
    return ElasticModel(manager, _namespace_bindings(yaml_text))


def _namespace_bindings(yaml_text: str) -> dict[str, str]:
    """namespace -> quota from each quota's `namespaces` annotation (a JSON list)."""
    bindings: dict[str, str] = {}
    for document in yaml.safe_load_all(yaml_text):
        items: list[Any] = document.get("items", [document]) if isinstance(
            document, dict) else []
        for item in items:
            metadata = item.get("metadata") if isinstance(item, dict) else None
            if not isinstance(metadata, dict):
                continue
            annotations = metadata.get("annotations") or {}
            text = annotations.get(NAMESPACES_ANNOTATION) if isinstance(
                annotations, dict) else None
            if not text:
                continue
            try:
                names = json.loads(text)
            except ValueError:
                names = None
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise QuotaError(f"quota {metadata.get('name')}: {NAMESPACES_ANNOTATION} must "
                                 f"be a JSON list of namespaces, got {text!r}")
            for namespace in names:
                if namespace in bindings:
                    raise QuotaError(f"namespace {namespace} is bound to both quota "
                                     f"{bindings[namespace]} and {metadata.get('name')}")
                bindings[namespace] = str(metadata.get("name"))
    return bindings

