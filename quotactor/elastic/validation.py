"""The admission rules of Koordinator's quota webhook, checked before any change is made.

The engine only ever holds trees that these rules accept, so the runtime computation can rely
on them: mins within maxes, children's mins within their parent's (below the first level),
dimensions of a child within its parent's, parents that run no pods, no cycles.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from quotactor.core.resources import Resource
from quotactor.elastic.errors import QuotaError
from quotactor.elastic.spec import (
    DEFAULT_QUOTA,
    ROOT_QUOTA,
    SPECIAL_QUOTAS,
    SYSTEM_QUOTA,
    QuotaSpec,
)

__all__ = ["TreeView", "check_remove", "check_upsert"]


class TreeView(Protocol):
    """What the rules need to know about the current tree."""

    def spec_of(self, name: str) -> QuotaSpec | None: ...

    def children_of(self, name: str) -> Iterable[QuotaSpec]: ...

    def has_pods(self, name: str) -> bool: ...


def check_upsert(tree: TreeView, spec: QuotaSpec) -> None:
    """Raise `QuotaError` unless Koordinator's webhook would accept `spec` into `tree`."""
    if spec.name in (ROOT_QUOTA, SYSTEM_QUOTA):
        raise QuotaError(f"quota {spec.name} is managed by the engine and cannot be modified")
    if spec.name == DEFAULT_QUOTA and (spec.parent is not None or spec.is_parent):
        raise QuotaError(f"quota {spec.name} must stay a leaf directly under the root")
    _check_self(spec)
    old = tree.spec_of(spec.name)
    children = list(tree.children_of(spec.name)) if old is not None else []
    if old is not None:
        _check_parent_flag(tree, old, spec, children)
    if spec.parent is not None:
        parent = _check_parent(tree, spec)
        _check_keys_within(spec, parent)
        siblings = [c for c in tree.children_of(parent.name) if c.name != spec.name]
        _check_min_sum(parent, [*siblings, spec])
    for child in children:
        _check_keys_within(child, spec)
    if children:
        _check_min_sum(spec, children)


def check_remove(tree: TreeView, name: str) -> None:
    """Raise `QuotaError` unless the quota may be deleted."""
    if name in SPECIAL_QUOTAS:
        raise QuotaError(f"quota {name} is managed by the engine and cannot be removed")
    if tree.spec_of(name) is None:
        raise QuotaError(f"quota {name} does not exist")
    if any(True for _ in tree.children_of(name)):
        raise QuotaError(f"quota {name} still has child quotas")
    if tree.has_pods(name):
        raise QuotaError(f"quota {name} still has pods")


def _check_self(spec: QuotaSpec) -> None:
    for what, values in (("min", spec.min), ("max", spec.max),
                         ("shared weight", spec.shared_weight or {})):
        negative = sorted(k for k, v in values.items() if v < 0)
        if negative:
            raise QuotaError(f"quota {spec.name} has a negative {what} for {negative[0]}")
    for key, low in sorted(spec.min.items()):
        if key not in spec.max:
            raise QuotaError(f"resourceKey {key} of quota {spec.name} is included in min, "
                             f"which is not included in max")
        if low > spec.max[key]:
            raise QuotaError(f"resourceKey {key} of quota {spec.name} min {low} > max "
                             f"{spec.max[key]}")


def _check_parent_flag(tree: TreeView, old: QuotaSpec, new: QuotaSpec,
                       children: list[QuotaSpec]) -> None:
    if old.is_parent and not new.is_parent and children:
        raise QuotaError(f"quota {new.name} has child quotas, so it must stay a parent")
    if not old.is_parent and new.is_parent and tree.has_pods(new.name):
        raise QuotaError(f"quota {new.name} has pods, so it cannot become a parent")


def _check_parent(tree: TreeView, spec: QuotaSpec) -> QuotaSpec:
    assert spec.parent is not None
    parent = tree.spec_of(spec.parent)
    if parent is None:
        raise QuotaError(f"parent {spec.parent} of quota {spec.name} does not exist")
    if parent.name in SPECIAL_QUOTAS or not parent.is_parent:
        raise QuotaError(f"parent {spec.parent} of quota {spec.name} is not a parent quota")
    ancestor: QuotaSpec | None = parent
    while ancestor is not None:
        if ancestor.name == spec.name:
            raise QuotaError(f"quota {spec.name} cannot move under {spec.parent}: "
                             f"that would make a cycle")
        ancestor = tree.spec_of(ancestor.parent) if ancestor.parent is not None else None
    return parent


def _check_keys_within(child: QuotaSpec, parent: QuotaSpec) -> None:
    extra = sorted(set(child.max) - set(parent.max))
    if extra:
        raise QuotaError(f"resourceKey {extra[0]} of quota {child.name} is included in max, "
                         f"which is not included in the max of its parent {parent.name}")


def _check_min_sum(parent: QuotaSpec, children: list[QuotaSpec]) -> None:
    total = sum((c.min for c in children), Resource())
    if not total.fits_within_strict(parent.min):
        over = sorted(k for k, v in total.items() if v > parent.min.get(k, 0))
        raise QuotaError(f"the children's min of quota {parent.name} add up to {over[0]} "
                         f"{total[over[0]]}, more than its min {parent.min.get(over[0], 0)}")
