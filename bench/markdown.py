"""The header of a benchmark table in Markdown, its columns right-aligned (they hold figures)."""

from __future__ import annotations


def header(*columns: str) -> list[str]:
    """The title row and the alignment row for `columns`."""
    return ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]
