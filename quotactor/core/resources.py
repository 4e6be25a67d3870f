"""Resource values and YuniKorn quantity parsing.

A `Resource` is the currency of every quota model in quotactor: an immutable mapping from a
resource name to an integer quantity in base units. Zero entries are pruned so that two values
that mean the same thing compare (and hash) equal, and so that snapshots never show noise.
"""

from __future__ import annotations

import re
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from operator import itemgetter
from typing import Any, Final, TypeAlias, cast

__all__ = [
    "Resource",
    "ResourceLike",
    "QuantityError",
    "parse_quantity",
    "parse_resource_map",
    "sum_of",
]

ResourceLike: TypeAlias = "Resource | Mapping[str, int]"

_INT64_MAX = 2**63 - 1


_STR = frozenset({str})
_INT = frozenset({int})
_QUANTITY_OF = itemgetter(1)


class QuantityError(ValueError):
    """A quantity string or value that YuniKorn would not accept."""


class Resource:
    """Immutable `name -> int` mapping with per-name arithmetic; a missing name is 0.

    Plain dicts are accepted wherever a `Resource` is; `Resource.of` converts them once at the
    boundary so that the hot paths work on validated values only.

    It is a registered `Mapping` (`isinstance` says so) and offers the whole read-only mapping
    protocol, but does not inherit from `Mapping`: the module is compiled with mypyc, and a
    class with a Python base would not compile to a native class. Annotations that take one
    say `ResourceLike`. No method changes a value; its attributes are private. In a compiled
    module, ask `container.__contains__(r)`, not `r in container`: mypyc compiles the latter as
    `r.__contains__(container)` for a compiled class that defines `__contains__`.
    """

    __slots__ = ("_hash", "_values")

    _values: dict[str, int]
    _hash: int | None

    def __init__(self, values: Mapping[str, int] | Iterable[tuple[str, int]] | None = None):
        if values is None:
            self._values = {}
            self._hash = None
            return
        if (type(values) is dict and _STR.issuperset(map(type, values))
                and _INT.issuperset(map(type, values.values())) and "" not in values):
            # the common case, checked without a step per item: names and plain integers
            self._values = (dict(values) if all(values.values())
                            else dict(filter(_QUANTITY_OF, values.items())))
            self._hash = None
            return
        # entries typed as objects: each is checked below (a compiled loop over pairs would
        # check it as a pair itself, with a TypeError)
        items: Iterable[object]
        if isinstance(values, Mapping):
            items = cast("Iterable[object]", values.items())
        elif isinstance(values, Iterable) and not isinstance(values, (str, bytes)):
            items = cast("Iterable[object]", values)
        else:
            raise QuantityError("a resource must be a mapping of names to quantities, got "
                                f"{type(values).__name__}")
        clean: dict[str, int] = {}
        for item in items:
            if not isinstance(item, tuple) or len(item) != 2:
                raise QuantityError(f"a resource entry must be a (name, quantity) pair, got"
                                    f" {item!r}")
            name, quantity = item
            if not isinstance(name, str) or not name:
                raise QuantityError(f"resource name must be a non-empty string, got {name!r}")
            if isinstance(quantity, bool) or not isinstance(quantity, int):
                raise QuantityError(
                    f"quantity of {name!r} must be an integer, got {type(quantity).__name__}"
                    f" {quantity!r}"
                )
            if quantity:
                clean[name] = int(quantity)
        self._values = clean
        self._hash = None

    @staticmethod
    def _trusted(values: dict[str, int]) -> Resource:
        """Wrap an already pruned dict of ints without copying or checking it (an empty one is
        the shared empty value)."""
        if not values:
            return EMPTY
        res = Resource()
        res._values = values
        return res

    @classmethod
    def of(cls, value: ResourceLike | None) -> Resource:
        """Return `value` as a `Resource` (None is the empty resource)."""
        if type(value) is dict:  # the common case: non-empty names and non-zero plain
            for name, quantity in value.items():  # integers, copied without `__init__`
                if (type(name) is not str or type(quantity) is not int or not name
                        or not quantity):
                    return cls(value)  # checked (and zeros pruned) there
            return Resource._trusted(dict(value))
        if isinstance(value, Resource):
            return value
        if value is None:
            return EMPTY
        if not isinstance(value, Mapping):
            raise QuantityError(f"a resource must be a mapping, got {type(value).__name__}")
        return cls(value)

    def __copy__(self) -> Resource:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Resource:
        """Immutable, so a deep copy of a structure holding it shares it."""
        return self

    def __getitem__(self, name: str) -> int:
        return self._values[name]

    def get(self, name: str, default: Any = 0) -> Any:
        return self._values.get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def items(self) -> ItemsView[str, int]:
        return self._values.items()

    def keys(self) -> KeysView[str]:
        return self._values.keys()

    def values(self) -> ValuesView[int]:
        return self._values.values()

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Resource):
            return self._values == other._values
        if isinstance(other, Mapping):
            return self._values == {k: v for k, v in other.items() if v}
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._values.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"Resource({dict(sorted(self._values.items()))!r})"

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(self._values.items())) + "}"

    def __bool__(self) -> bool:
        return bool(self._values)

    def __add__(self, other: ResourceLike) -> Resource:
        items: Iterable[tuple[str, int]]
        if type(other) is Resource:  # values are immutable: a sum with nothing is shared
            if not other._values:
                return self
            if not self._values:
                return other
            items = other._values.items()  # its own dict, without a call to its `items`
        else:
            items = other.items()
        out = dict(self._values)
        for name, quantity in items:
            total = out.get(name, 0) + quantity
            if total:
                out[name] = total
            else:
                out.pop(name, None)
        return Resource._trusted(out)

    def __sub__(self, other: ResourceLike) -> Resource:
        items: Iterable[tuple[str, int]]
        if type(other) is Resource:
            if not other._values:
                return self
            items = other._values.items()  # its own dict, without a call to its `items`
        else:
            items = other.items()
        out = dict(self._values)
        for name, quantity in items:
            total = out.get(name, 0) - quantity
            if total:
                out[name] = total
            else:
                out.pop(name, None)
        return Resource._trusted(out)

    def __neg__(self) -> Resource:
        return Resource._trusted({k: -v for k, v in self._values.items()})

    def scaled(self, factor: int) -> Resource:
        """Every quantity multiplied by an integer factor (this value itself for 1)."""
        if factor == 1:
            return self
        return Resource._trusted({k: v * factor for k, v in self._values.items() if v * factor})

    def to_dict(self) -> dict[str, int]:
        """A plain, name-sorted dict copy (the REST JSON shape)."""
        return dict(sorted(self._values.items()))

    def is_empty(self) -> bool:
        return not self._values

    def has_negative(self) -> bool:
        values = self._values  # `min` runs in C: no generator per call (every decrease asks)
        return bool(values) and min(values.values()) < 0

    def fits_within(self, limit: ResourceLike) -> bool:
        """True when no name that `limit` sets is exceeded; names absent from it are unlimited."""
        for name, quantity in self._values.items():
            if name in limit and quantity > limit[name]:
                return False
        return True

    def exceeded_names(self, limit: ResourceLike) -> tuple[str, ...]:
        """The sorted names on which `self` is above `limit` (absent from limit: unlimited)."""
        return tuple(
            sorted(n for n, q in self._values.items() if n in limit and q > limit[n])
        )

    def fits_within_strict(self, limit: ResourceLike) -> bool:
        """True when every name of `self` is within `limit`, absent names of limit being 0."""
        return all(q <= limit.get(n, 0) for n, q in self._values.items())

    def restricted_to(self, names: Iterable[str]) -> Resource:
        """Only the given names (a projection)."""
        return Resource._trusted({n: self._values[n] for n in names if n in self._values})

    def component_min(self, other: ResourceLike) -> Resource:
        """Per-name minimum over the union of names (a missing name counts as 0)."""
        names = set(self._values) | set(other)
        return Resource._trusted(
            {n: m for n in names if (m := min(self._values.get(n, 0), other.get(n, 0)))}
        )

    def component_max(self, other: ResourceLike) -> Resource:
        """Per-name maximum over the union of names (a missing name counts as 0)."""
        names = set(self._values) | set(other)
        return Resource._trusted(
            {n: m for n in names if (m := max(self._values.get(n, 0), other.get(n, 0)))}
        )

    def clamp_non_negative(self) -> Resource:
        return Resource._trusted({k: v for k, v in self._values.items() if v > 0})


Mapping.register(Resource)

EMPTY: Final = Resource()
"""The empty value: a sum, difference or projection that leaves nothing is this one."""

def sum_of(resources: Iterable[ResourceLike]) -> Resource:
    """The total of `resources`, summed in one dict (one new value, not one per term); a term
    that is not a `Resource` is checked as `Resource.of` checks it."""
    total: dict[str, int] = {}
    for resource in resources:
        values = resource._values if type(resource) is Resource else Resource.of(resource)._values
        for name, quantity in values.items():
            total[name] = total.get(name, 0) + quantity
    return Resource._trusted(total if all(total.values())
                             else {name: quantity for name, quantity in total.items() if quantity})


_QUANTITY = re.compile(r"^([0-9]+)\s*([A-Za-z]*)$")
_DECIMAL = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
VCORE = "vcore"


def parse_quantity(name: str, text: object) -> int:
    """Parse a YuniKorn config quantity for resource `name` into base units.

    `vcore` is in millicores (`"1"` -> 1000, `"500m"` -> 500); every other name is an integer
    with an optional decimal (`k M G T P E`) or binary (`Ki ... Ei`) suffix. Decimals, negative
    values and values beyond int64 are rejected, as YuniKorn rejects them.
    """
    if isinstance(text, bool):
        raise QuantityError(f"invalid quantity {text!r} for {name}")
    if isinstance(text, int):
        text = str(text)
    if not isinstance(text, str):
        raise QuantityError(f"invalid quantity {text!r} for {name}: not a string")
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise QuantityError(f"invalid quantity {text!r} for {name}")
    digits, suffix = match.groups()
    value = int(digits)
    if name == VCORE and suffix == "m":
        result = value
    else:
        multiplier = _DECIMAL.get(suffix) or _BINARY.get(suffix)
        if multiplier is None:
            raise QuantityError(f"invalid suffix {suffix!r} in quantity {text!r} for {name}")
        result = value * multiplier * (1000 if name == VCORE else 1)
    if result > _INT64_MAX:
        raise QuantityError(f"invalid quantity {text!r} for {name}: overflow")
    return result


def parse_resource_map(values: Mapping[str, object]) -> Resource:
    """Parse a YuniKorn `{name: quantity-string}` map into a `Resource`."""
    return Resource({name: parse_quantity(name, text) for name, text in values.items()})
