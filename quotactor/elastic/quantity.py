"""Kubernetes quantities, as Koordinator reads them from `ElasticQuota` objects.

Koordinator computes runtime on integers: `cpu` in millicores (`Quantity.MilliValue`) and every
other resource in whole units (`Quantity.Value`), both rounding fractions *up*. Parsing with
exact fractions keeps `0.1` or `1.5Gi` free of float error before that rounding.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction

from quotactor.core.resources import Resource
from quotactor.elastic.errors import QuotaError

__all__ = ["CPU", "format_quantity", "parse_quantity", "parse_resource_list"]

CPU = "cpu"

_QUANTITY = re.compile(
    r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?$"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
}


def parse_quantity(name: str, value: object) -> int:
    """`value` for resource `name` in engine units: millicores for cpu, whole units otherwise.

    Accepts Kubernetes quantity strings (`"500m"`, `"1.5"`, `"40Gi"`, `"1e3"`) and YAML numbers;
    fractions round up, as Kubernetes' `Value()`/`MilliValue()` do. Negative values parse (the
    spec validation rejects them with a better message).
    """
    amount = _exact(name, value)
    if name == CPU:
        amount *= 1000
    return math.ceil(amount)


def _exact(name: str, value: object) -> Fraction:
    if isinstance(value, bool):
        raise QuotaError(f"invalid quantity {value!r} for {name}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuotaError(f"invalid quantity {value!r} for {name}")
        return Fraction(repr(value))
    if not isinstance(value, str):
        raise QuotaError(f"invalid quantity {value!r} for {name}: not a string or number")
    match = _QUANTITY.match(value.strip())
    if match is None:
        raise QuotaError(f"invalid quantity {value!r} for {name}")
    sign, digits, suffix = match.groups()
    number = Fraction(digits)
    suffix = suffix or ""
    if suffix in _BINARY:
        number *= _BINARY[suffix]
    elif suffix[:1] in ("e", "E") and len(suffix) > 1:
        number *= Fraction(10) ** int(suffix[1:])
    else:
        number *= _DECIMAL[suffix]
    return -number if sign == "-" else number


def parse_resource_list(values: object, what: str = "resources") -> Resource:
    """A Kubernetes `ResourceList` (`{name: quantity}`) as a `Resource` in engine units."""
    if values is None:
        return Resource()
    if not isinstance(values, Mapping):
        raise QuotaError(f"{what} must be a mapping of resource names to quantities")
    return Resource({str(name): parse_quantity(str(name), q) for name, q in values.items()})


def format_quantity(name: str, value: int) -> str:
    """The shortest exact Kubernetes spelling of an engine value (for people, not machines)."""
    if name == CPU:
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if value and abs(value) >= 2**10:
        for suffix, factor in reversed(_BINARY.items()):
            if value % factor == 0:
                return f"{value // factor}{suffix}"
    return str(value)
