"""Kubernetes resource quantities and names, as the YuniKorn shim turns them into YuniKorn's.

A pod asks for `cpu: 500m`, `memory: 1.5Gi`, `nvidia.com/gpu: 1`; YuniKorn (and every quota
model of quotactor) counts `vcore` in millicores and everything else in whole base units.
Fractions round up, as Kubernetes' `MilliValue()` and `Value()` do, so a request never shrinks
on the way in. Names the replay cannot place on nodes it was not told about (`pods`,
`ephemeral-storage`, `hugepages-*`) are dropped by `replayable`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction

from quotactor.core.resources import QuantityError, Resource, ResourceLike

__all__ = ["DROPPED_RESOURCES", "k8s_quantity", "k8s_resources", "replayable", "yunikorn_name"]

_INT64_MAX = 2**63 - 1
_MAX_TEXT = 64
_QUANTITY = re.compile(
    r"^(\d{1,40}(?:\.\d{0,40})?|\.\d{1,40})(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d{1,3}|[numkMGTPE])?$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
}
DROPPED_RESOURCES = ("pods", "ephemeral-storage", "hugepages-*")
"""Resource names left out of imported jobs and nodes (a trailing `*` matches a prefix)."""


def yunikorn_name(name: str) -> str:
    """The YuniKorn name of a Kubernetes resource: `cpu` is `vcore`, the rest keep theirs."""
    return "vcore" if name == "cpu" else name


def k8s_quantity(name: str, value: object) -> int:
    """`value` (a Kubernetes quantity string or a number) of YuniKorn resource `name` in base
    units: millicores for `vcore`, whole units otherwise, fractions rounded up.

    Raises `QuantityError` for anything Kubernetes would not accept as a request (negative,
    malformed, longer than 64 characters) and for values beyond int64.
    """
    if isinstance(value, bool):
        raise QuantityError(f"invalid quantity {value!r} for {name}")
    if isinstance(value, int):
        amount = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value) or value < 0:
            raise QuantityError(f"invalid quantity {value!r} for {name}")
        amount = Fraction(repr(value))
    elif isinstance(value, str):
        text = value.strip()
        match = _QUANTITY.match(text) if len(text) <= _MAX_TEXT else None
        if match is None:
            raise QuantityError(f"invalid quantity {value[:_MAX_TEXT]!r} for {name}")
        digits, suffix = match.group(1), match.group(2) or ""
        amount = Fraction(digits)
        if suffix in _BINARY:
            amount *= _BINARY[suffix]
        elif suffix[:1] in ("e", "E"):
            amount *= Fraction(10) ** int(suffix[1:])
        else:
            amount *= _DECIMAL[suffix]
    else:
        raise QuantityError(f"invalid quantity {value!r} for {name}: not a string or number")
    if amount < 0:
        raise QuantityError(f"invalid quantity {value!r} for {name}: negative")
    result = math.ceil(amount * 1000) if name == "vcore" else math.ceil(amount)
    if result > _INT64_MAX:
        raise QuantityError(f"quantity {value!r} for {name} is beyond int64")
    return result


def k8s_resources(values: object, what: str) -> Resource:
    """A Kubernetes `ResourceList` (`{"cpu": "500m", ...}`) in YuniKorn names and units, with
    the dropped names left out; `QuantityError` names `what` and the bad entry."""
    if values is None:
        return Resource()
    if not isinstance(values, Mapping):
        raise QuantityError(f"{what} must be a mapping of resource names to quantities")
    out: dict[str, int] = {}
    for raw_name, quantity in values.items():
        name = yunikorn_name(str(raw_name))
        if not _kept(name):
            continue
        try:
            out[name] = k8s_quantity(name, quantity)
        except QuantityError as exc:
            raise QuantityError(f"{what}: {exc}") from None
    return Resource(out)


def replayable(values: ResourceLike) -> Resource:
    """`values` without the dropped names (see `DROPPED_RESOURCES`)."""
    return Resource({n: q for n, q in values.items() if _kept(n)})


def _kept(name: str) -> bool:
    return name not in ("pods", "ephemeral-storage") and not name.startswith("hugepages-")
