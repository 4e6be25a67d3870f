"""Human-readable numbers for tables: durations, resource quantities, aligned columns."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from quotactor.core.resources import ResourceLike

__all__ = ["amount", "axis_unit", "duration", "humanize", "is_bytes", "ordered", "percent",
           "quantity", "render_table", "resources_text", "short_name", "unit_of"]

_BINARY = (("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def duration(seconds: float | None) -> str:
    """`42s`, `12.5m`, `3.2h`, `4.0d`: short enough for a table cell; `-` for None."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.1f}m"
    if seconds < 86400:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.1f}d"


def is_bytes(name: str) -> bool:
    """Whether resource `name` counts bytes (memory, ephemeral storage, huge pages)."""
    return name in ("memory", "ephemeral-storage") or name.startswith("hugepages-")


def unit_of(name: str) -> str:
    """The base unit quantities of resource `name` are counted in (as reports store them)."""
    if name == "vcore":
        return "millicores"
    return "bytes" if is_bytes(name) else "count"


def ordered(names: Iterable[str]) -> tuple[str, ...]:
    """Resource names as tables list them: vcore, memory, then the others by name."""
    first = ("vcore", "memory")
    unique = set(names)
    return (*(n for n in first if n in unique), *sorted(unique - set(first)))


def short_name(name: str) -> str:
    """A resource name for a column header: `nvidia.com/gpu` -> `gpu`."""
    return name.rsplit("/", 1)[-1]


def _decimal(value: float) -> str:
    """At most one decimal, none when it is zero: `535.8`, `64`, `0.5`."""
    text = f"{value:.1f}"
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def quantity(name: str, value: int | float | None) -> str:
    """A quantity of resource `name` (base units) in the unit people think in: cores for
    vcore (millicores inside), Ki/Mi/Gi/Ti for byte resources, plain counts for the rest
    (GPUs); at most one decimal everywhere, whole counts without one. `-` for None."""
    if value is None:
        return "-"
    if name == "vcore":
        return _decimal(value / 1000)
    if is_bytes(name):
        for suffix, size in _BINARY:
            if abs(value) >= size:
                return f"{_decimal(value / size)}{suffix}"
        return _decimal(value)
    return _decimal(value)


def axis_unit(name: str, largest: float) -> tuple[float, str]:
    """(divisor, label) for a plot axis of resource `name` whose values reach `largest`
    (base units): cores for vcore, the binary unit that suits `largest` for bytes."""
    if name == "vcore":
        return 1000.0, "cores"
    if is_bytes(name):
        for suffix, size in _BINARY:
            if largest >= size:
                return float(size), f"{short_name(name)} ({suffix})"
        return 1.0, f"{short_name(name)} (bytes)"
    return 1.0, short_name(name)


def percent(share: float) -> str:
    """A share (0 to 1) as a percentage: whole points, one decimal below 10 %, so that a
    small nonzero share never reads as 0 (`47%`, `2.5%`, `<0.1%`, `0%`)."""
    if share <= 0 or share >= 0.1:
        return f"{share:.0%}"
    return "<0.1%" if share < 0.0005 else f"{share:.1%}"


def amount(name: str, value: int | float) -> str:
    """`32 vcore`, `4Gi memory`, `3 nvidia.com/gpu`: a quantity with its name, for
    sentences."""
    return f"{quantity(name, value)} {name}"


def resources_text(resources: ResourceLike) -> str:
    """A resource set in human units: `64 vcore, 4Gi memory` (`nothing` when empty)."""
    return ", ".join(amount(n, v) for n, v in sorted(resources.items())) or "nothing"


_RESOURCE_SET = re.compile(r"\{((?:\s*[\w.\-/]+: -?\d+,?)+)\s*\}")
_ARITHMETIC = re.compile(r"\b([\w.\-/]+) (usage|allocated) (-?\d+) \+ (-?\d+) above "
                         r"(maxResources|max) (-?\d+)")


def humanize(text: str) -> str:
    """The scheduler's reasons with raw quantities (millicores, bytes) in human units.

    Rewrites resource sets (`{vcore: 64000}`) and limit arithmetic (`vcore usage 0 + 64000
    above maxResources 32000`); anything else is left as it is.
    """
    def resource_set(match: re.Match[str]) -> str:
        pairs = (p.split(":") for p in match.group(1).split(",") if p.strip())
        return resources_text({k.strip(): int(v) for k, v in pairs})

    def arithmetic(match: re.Match[str]) -> str:
        name, what, used, added, _, cap = match.groups()
        return (f"{name} {what} {quantity(name, int(used))} + {quantity(name, int(added))} "
                f"above max {amount(name, int(cap))}")

    return _ARITHMETIC.sub(arithmetic, _RESOURCE_SET.sub(resource_set, text))


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the first column left-aligned, the rest right."""
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        out = [str(cells[0]).ljust(widths[0])]
        out += [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join(out).rstrip()

    return "\n".join([line(header), *(line(r) for r in rows)])
