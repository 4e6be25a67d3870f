"""`QuotaSpec`: what a user declares for one quota group, and the three special groups.

A spec is the in-memory form of one Koordinator `ElasticQuota` object. It is a value: the
engine derives everything else (request, runtime, used) and never writes into it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from quotactor.core.resources import QuantityError, Resource
from quotactor.elastic.errors import QuotaError

__all__ = [
    "DEFAULT_QUOTA",
    "ROOT_QUOTA",
    "SPECIAL_QUOTAS",
    "SYSTEM_QUOTA",
    "QuotaSpec",
    "effective_weight",
    "engine_specs",
]

ROOT_QUOTA = "koordinator-root-quota"
SYSTEM_QUOTA = "koordinator-system-quota"
DEFAULT_QUOTA = "koordinator-default-quota"
SPECIAL_QUOTAS = frozenset({ROOT_QUOTA, SYSTEM_QUOTA, DEFAULT_QUOTA})


@dataclass(frozen=True, slots=True, init=False)
class QuotaSpec:
    """One quota group as declared.

    Attributes:
        name: unique quota name.
        parent: the parent quota's name; None (or the root's name) puts it under the root.
        is_parent: a parent group holds children and can never run pods.
        min: guaranteed resources (names must be within `max`).
        max: upper limit; its names are the quota's resource dimensions.
        shared_weight: weight for sharing lent/free resources, per name. None means `max`;
            a name of `max` missing here takes max's value; an explicit 0 never borrows.
        allow_lent: whether unused min may be lent to siblings.
    """

    name: str
    parent: str | None
    is_parent: bool
    min: Resource
    max: Resource
    shared_weight: Mapping[str, int] | None
    allow_lent: bool

    def __init__(self, name: str, parent: str | None = None, is_parent: bool = False,
                 min: Resource | Mapping[str, int] | None = None,
                 max: Resource | Mapping[str, int] | None = None,
                 shared_weight: Mapping[str, int] | None = None,
                 allow_lent: bool = True) -> None:
        if not isinstance(name, str) or not name:
            raise QuotaError(f"quota name must be a non-empty string, got {name!r}")
        if parent in ("", ROOT_QUOTA):
            parent = None
        if parent is not None and not isinstance(parent, str):
            raise QuotaError(f"parent of quota {name} must be a string, got {parent!r}")
        weight = None if shared_weight is None else MappingProxyType(_weight(name, shared_weight))
        for attribute, value in (
            ("name", name), ("parent", parent), ("is_parent", bool(is_parent)),
            ("min", _resource(name, "min", min)), ("max", _resource(name, "max", max)),
            ("shared_weight", weight), ("allow_lent", bool(allow_lent)),
        ):
            object.__setattr__(self, attribute, value)

    def __hash__(self) -> int:
        weight = None if self.shared_weight is None else frozenset(self.shared_weight.items())
        return hash((self.name, self.parent, self.is_parent, self.min, self.max, weight,
                     self.allow_lent))

    @property
    def parent_name(self) -> str:
        """The parent's name, the root included (for display and tree walks)."""
        return self.parent if self.parent is not None else ROOT_QUOTA

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of the declaration (REST view, CLI `--json`)."""
        return {
            "name": self.name,
            "parent": self.parent_name,
            "isParent": self.is_parent,
            "allowLentResource": self.allow_lent,
            "min": self.min.to_dict(),
            "max": self.max.to_dict(),
            "sharedWeight": dict(sorted(effective_weight(self).items())),
        }


def effective_weight(spec: QuotaSpec) -> dict[str, int]:
    """The weight the water-filling uses, per name of `max` (zeros kept).

    Koordinator's webhook fills missing names from `max` and drops names `max` lacks; then a
    weight that is absent or all zero means `max` itself, while a partly zero one is kept.
    """
    given = spec.shared_weight
    if given is None:
        return dict(spec.max)
    filled = {name: given.get(name, limit) for name, limit in spec.max.items()}
    return filled if any(filled.values()) else dict(spec.max)


def _resource(name: str, what: str, value: object) -> Resource:
    try:
        return Resource.of(value)  # type: ignore[arg-type]
    except QuantityError as exc:
        raise QuotaError(f"{what} of quota {name}: {exc}") from None


def _weight(name: str, value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise QuotaError(f"shared weight of quota {name} must be a mapping")
    out: dict[str, int] = {}
    for key, quantity in value.items():
        if not isinstance(key, str) or not key:
            raise QuotaError(f"shared weight of quota {name}: bad resource name {key!r}")
        if isinstance(quantity, bool) or not isinstance(quantity, int):
            raise QuotaError(
                f"shared weight of quota {name}: {key} must be an integer, got {quantity!r}"
            )
        out[key] = quantity
    return out


def engine_specs() -> tuple[QuotaSpec, QuotaSpec, QuotaSpec]:
    """The root, system and default groups as every engine starts with them.

    Their `max` is empty, meaning unlimited: the system group is never limited, and the
    default group stays unlimited until a user declares a `max` for it.
    """
    return (
        QuotaSpec(ROOT_QUOTA, is_parent=True, allow_lent=False),
        QuotaSpec(SYSTEM_QUOTA),
        QuotaSpec(DEFAULT_QUOTA),
    )
