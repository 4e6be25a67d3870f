"""Human-readable numbers for tables: durations, resource quantities, aligned columns."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["duration", "quantity", "render_table"]

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


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the first column left-aligned, the rest right."""
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        out = [str(cells[0]).ljust(widths[0])]
        out += [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join(out).rstrip()

    return "\n".join([line(header), *(line(r) for r in rows)])
