"""Resource quantities as a config states them, explicit zeros included.

`Resource` prunes zeros because in usage arithmetic a zero means nothing. In a config it does
mean something: `maxresources: {gpu: 0}` allows no GPU at all, while leaving `gpu` out leaves
it unlimited, and YuniKorn's checks ("does the child fit in the parent?") look at exactly the
names a limit states. So the config model keeps quantities in this zero-keeping mapping and
converts to a `Resource` only where arithmetic needs one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from quotactor.config.frozen import FrozenMap
from quotactor.core.resources import Resource

__all__ = ["Quantities", "EMPTY_QUANTITIES", "format_value"]

_VCORE = "vcore"
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6),
            ("k", 10**3))
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20),
           ("Ki", 2**10))


class Quantities(FrozenMap[str, int]):
    """`name -> int` in base units (vcore in millicores), zeros kept; a missing name is unset."""

    __slots__ = ()

    def __init__(self, items: Mapping[str, int] | Iterable[tuple[str, int]] | None = None):
        super().__init__(items)
        for name, quantity in self._data.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"resource name must be a non-empty string, got {name!r}")
            if isinstance(quantity, bool) or not isinstance(quantity, int):
                raise ValueError(f"quantity of {name!r} must be an integer, got {quantity!r}")

    @classmethod
    def of(cls, value: Mapping[str, int] | None) -> Quantities:
        """`value` as `Quantities` (None is the empty set of quantities)."""
        if isinstance(value, Quantities):
            return value
        return EMPTY_QUANTITIES if not value else cls(value)

    @property
    def resource(self) -> Resource:
        """The same quantities as a `Resource` (zeros pruned), for arithmetic."""
        return Resource(self._data)

    def is_zero(self) -> bool:
        """True when nothing is stated or every stated quantity is 0 (YuniKorn's `IsZero`)."""
        return not any(self._data.values())

    def exceeded_by(self, smaller: Mapping[str, int]) -> tuple[str, ...]:
        """Names on which `smaller` is above this maximum; names this one leaves out are
        unlimited (YuniKorn's `FitInMaxUndef`: empty means it fits)."""
        return tuple(sorted(
            name for name, quantity in smaller.items()
            if name in self._data and quantity > max(0, self._data[name])
        ))

    def min_with(self, other: Mapping[str, int] | None) -> Quantities:
        """Per-name minimum where both state a name, else whichever states it (YuniKorn's
        `ComponentWiseMinPermissive`): the tightest of two maximums."""
        if not other:
            return self
        merged = dict(other)
        for name, quantity in self._data.items():
            merged[name] = min(quantity, merged[name]) if name in merged else quantity
        return Quantities(merged)

    def __add__(self, other: Mapping[str, int]) -> Quantities:
        total = dict(self._data)
        for name, quantity in other.items():
            total[name] = total.get(name, 0) + quantity
        return Quantities(total)

    def __str__(self) -> str:
        return "{" + ", ".join(f"{n}: {format_value(n, q)}" for n, q in sorted(self.items())) + "}"


EMPTY_QUANTITIES = Quantities()


def format_value(name: str, quantity: int) -> str:
    """`quantity` of resource `name` as a person would write it in a config (`300G`, `500m`)."""
    if name == _VCORE:
        if quantity % 1000:
            return f"{quantity}m"
        quantity //= 1000
    if quantity == 0:
        return "0"
    for suffix, size in (*_DECIMAL, *_BINARY):
        if quantity % size == 0:
            return f"{quantity // size}{suffix}"
    return str(quantity)
