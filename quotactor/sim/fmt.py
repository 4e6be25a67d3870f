"""Human-readable numbers for tables: durations, resource quantities, aligned columns."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["amount", "duration", "humanize", "quantity", "render_table", "resources_text"]

_GIB = 2**30


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


def quantity(name: str, value: int | float | None) -> str:
    """A resource quantity in the unit people think in: cores for vcore, GiB for memory."""
    if value is None:
        return "-"
    if name == "vcore":
        return f"{value / 1000:g}"
    if name == "memory":
        return f"{value / _GIB:.1f}Gi"
    return f"{value:g}"


def amount(name: str, value: int | float) -> str:
    """`32 vcore`, `4Gi memory`, `3 gpu`: a quantity with its unit, for sentences."""
    if name == "memory":
        gib = value / _GIB
        return f"{gib:.0f}Gi memory" if gib == int(gib) else f"{gib:.1f}Gi memory"
    return f"{quantity(name, value)} {name}"


def resources_text(resources: Mapping[str, int]) -> str:
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
