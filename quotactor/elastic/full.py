"""The whole computation from scratch: the reference the incremental engine must agree with.

It walks the tree twice (requests up, runtimes down) with the same rules and the same split
as the engine but none of its bookkeeping, so it is easy to check by eye. Tests compare the
engine against it after random changes, and the benchmark uses it as the baseline.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from quotactor.core.resources import Resource
from quotactor.elastic.demand import contribution, is_special, masked, own_request
from quotactor.elastic.pods import Pod
from quotactor.elastic.spec import (
    DEFAULT_QUOTA,
    ROOT_QUOTA,
    SYSTEM_QUOTA,
    QuotaSpec,
    effective_weight,
    engine_specs,
)
from quotactor.elastic.waterfill import Claim, redistribute, scaled_mins

__all__ = ["Figures", "compute_figures"]


@dataclass(frozen=True, slots=True)
class Figures:
    """The derived figures of one quota."""

    request: Resource
    limited_request: Resource
    used: Resource
    runtime: Resource
    effective_min: Resource


def compute_figures(specs: Iterable[QuotaSpec], pods: Iterable[Pod],
                    total: Resource | Mapping[str, int], scale_min: bool = True,
                    ) -> dict[str, Figures]:
    """Every quota's figures for a valid tree (`specs` in any order) and its pods."""
    total = Resource.of(total)
    by_name = {spec.name: spec for spec in engine_specs()}
    by_name.update({spec.name: spec for spec in specs})
    children: dict[str, list[str]] = defaultdict(list)
    for spec in by_name.values():
        if spec.name != ROOT_QUOTA:
            children[spec.parent_name].append(spec.name)
    order = [ROOT_QUOTA]
    for name in order:
        order.extend(sorted(children[name]))

    own_requests: dict[str, Resource] = defaultdict(Resource)
    own_used: dict[str, Resource] = defaultdict(Resource)
    for pod in pods:
        own_requests[pod.quota] += pod.request
        if pod.assigned:
            own_used[pod.quota] += pod.request

    request: dict[str, Resource] = {}
    limited: dict[str, Resource] = {}
    used: dict[str, Resource] = {}
    for name in reversed(order):
        spec = by_name[name]
        demand = masked(spec, own_requests[name])
        usage = masked(spec, own_used[name])
        for child in children[name]:
            demand += limited[child]
            usage += used[child]
        request[name] = own_request(spec, demand)
        limited[name] = contribution(spec, request[name])
        used[name] = usage

    runtime = {name: by_name[name].max for name in (SYSTEM_QUOTA, DEFAULT_QUOTA)}
    runtime[ROOT_QUOTA] = (total - used[SYSTEM_QUOTA] - used[DEFAULT_QUOTA]).clamp_non_negative()
    effective = {name: spec.min for name, spec in by_name.items()}
    for name in order:
        members = [by_name[c] for c in children[name] if not is_special(c)]
        shares: dict[str, dict[str, int]] = {c.name: {} for c in members}
        mins_in_effect: dict[str, dict[str, int]] = {c.name: {} for c in members}
        for dim in sorted({d for c in members for d in c.max}):
            stake = [c for c in members if dim in c.max]
            amount = runtime[name].get(dim, 0)
            mins = {c.name: c.min.get(dim, 0) for c in stake}
            in_effect = scaled_mins(amount, mins) if scale_min else mins
            weights = {c.name: effective_weight(c)[dim] for c in stake}
            split = redistribute(amount, [
                Claim(c.name, limited[c.name].get(dim, 0), in_effect[c.name],
                      weights[c.name], c.allow_lent)
                for c in stake
            ])
            for child, share in split.items():
                shares[child][dim] = share
                mins_in_effect[child][dim] = in_effect[child]
        for member in members:
            runtime[member.name] = Resource(shares[member.name])
            effective[member.name] = Resource(mins_in_effect[member.name])

    return {
        name: Figures(request[name], limited[name], used[name], runtime[name], effective[name])
        for name in order
    }

