"""Credit for traces: the Parallel Workloads Archive asks every use of its logs to cite it and
to thank the log's contributor, so every report and summary of an archive trace does."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ARCHIVE_CITATION", "ARCHIVE_URL", "acknowledgement", "credit_lines"]

ARCHIVE_URL = "https://www.cs.huji.ac.il/labs/parallel/workload/"
ARCHIVE_CITATION = (
    "D. G. Feitelson, D. Tsafrir, D. Krakov, \"Experience with using the Parallel Workloads "
    "Archive\", Journal of Parallel and Distributed Computing 74(10), 2014, pp. 2967-2982."
)


def credit_lines(header: Mapping[str, str], source: str = "") -> list[str]:
    """Lines to print before results of an SWF trace (none for other workloads)."""
    if not header:
        return []
    machine = ", ".join(v for v in (header.get("Computer"), header.get("Installation")) if v)
    name = source.rsplit("/", 1)[-1]
    trace = f"{name} ({machine})" if name and machine else name or machine or "the log"
    lines = [f"Trace: {trace}, from the Parallel Workloads Archive, {ARCHIVE_URL}"]
    who = header.get("Acknowledge")
    if who:
        where = header.get("Installation")
        lines.append(f"Thanks to {who}{f' ({where})' if where else ''} for contributing the log.")
    lines.append(f"Cite: {ARCHIVE_CITATION}")
    return lines


def acknowledgement(header: Mapping[str, str], source: str = "") -> str | None:
    """The credit as one string, for reports (None for a workload not from an SWF log)."""
    lines = credit_lines(header, source)
    return " ".join(lines) if lines else None
