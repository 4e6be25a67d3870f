"""How a quota's request is formed and what its parent sees of it (bottom-up, seed 002).

Shared by the incremental engine and the full recompute, so that both apply the same rules:

* a quota only counts the resource names of its `max` (Koordinator masks pod requests);
* a quota that does not lend asks for at least its min, so that its ancestors keep it;
* the parent sees `min(request, max)` (the *limited* request): a child can never make its
  parent borrow for more than the child may use.

The root, system and default groups are unbounded: they mask nothing unless given a `max`,
and the system and default groups pass their whole request up.
"""

from __future__ import annotations

from quotactor.core.resources import Resource
from quotactor.elastic.spec import DEFAULT_QUOTA, ROOT_QUOTA, SYSTEM_QUOTA, QuotaSpec

__all__ = ["contribution", "is_special", "limited", "masked", "own_request"]


def is_special(name: str) -> bool:
    """The system and default groups: outside the runtime split, their used off the total."""
    return name in (SYSTEM_QUOTA, DEFAULT_QUOTA)


def masked(spec: QuotaSpec, amount: Resource) -> Resource:
    """`amount` restricted to the quota's dimensions."""
    if spec.name == ROOT_QUOTA or (is_special(spec.name) and not spec.max):
        return amount
    return amount.restricted_to(spec.max)


def own_request(spec: QuotaSpec, child_request: Resource) -> Resource:
    """Koordinator's `Request`: the children's (and own pods') demand, raised to min when the
    quota does not lend."""
    return child_request if spec.allow_lent else child_request.component_max(spec.min)


def limited(request: Resource, limit: Resource) -> Resource:
    """min(request, max) per name; names absent from `limit` are not capped."""
    if not any(name in limit and q > limit[name] for name, q in request.items()):
        return request
    return Resource({name: min(q, limit[name]) if name in limit else q
                     for name, q in request.items()})


def contribution(spec: QuotaSpec, request: Resource) -> Resource:
    """What the parent adds up: the limited request (the whole request for special groups)."""
    return request if is_special(spec.name) else limited(request, spec.max)
