"""One entry point for every workload source: a file in any supported format, or `synthetic`.

The format comes from the file name (`.swf`, `.csv`, `.jsonl`/`.ndjson`, each optionally
`.gz`); a name that says nothing is sniffed from its first meaningful line, so a trace
downloaded under an odd name still works.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

from quotactor.sim.inputs.collect import open_text
from quotactor.sim.inputs.jobfile import parse_csv, parse_jsonl
from quotactor.sim.inputs.jobs import Workload, WorkloadError
from quotactor.sim.inputs.swf import SWF_FIELDS, parse_swf
from quotactor.sim.inputs.synthetic import PREFIX, generate, parse_synthetic

__all__ = ["WorkloadFormat", "detect_format", "load_workload", "parse_group_names"]

WorkloadFormat = Literal["swf", "csv", "jsonl"]
_SUFFIXES: dict[str, WorkloadFormat] = {
    ".swf": "swf", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
}


def load_workload(
    spec: str,
    *,
    fmt: WorkloadFormat | None = None,
    group_names: Mapping[int, str] | None = None,
    with_memory: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Workload:
    """The workload `spec` names: a file path, or `synthetic[:key=value,...]`.

    `group_names` and `with_memory` apply to SWF input (see `parse_swf`); `progress` to a
    synthetic one (see `generate`).
    """
    if spec == PREFIX or spec.startswith(PREFIX + ":"):
        return generate(parse_synthetic(spec), progress)
    path = Path(spec)
    if not path.is_file():
        reason = "not a file" if path.exists() else "No such file or directory"
        raise WorkloadError(f"cannot read {spec}: {reason}")
    kind = fmt or detect_format(path)
    lines = open_text(path)
    if kind == "swf":
        return parse_swf(lines, source=spec, group_names=group_names, with_memory=with_memory)
    if kind == "csv":
        return parse_csv(lines, source=spec)
    return parse_jsonl(lines, source=spec)


def detect_format(path: Path) -> WorkloadFormat:
    """By suffix (ignoring `.gz`), else by the first line that is not blank."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    if suffixes and suffixes[-1] in _SUFFIXES:
        return _SUFFIXES[suffixes[-1]]
    for line in open_text(path):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";") or len(text.split()) == SWF_FIELDS:
            return "swf"
        return "jsonl" if text.startswith("{") else "csv"
    raise WorkloadError(f"{path}: the file is empty")


def parse_group_names(text: str) -> dict[int, str]:
    """`1=normal,2=system` -> {1: "normal", 2: "system"} (names for SWF group ids)."""
    names: dict[int, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        number, sep, name = item.partition("=")
        if not sep or not number.strip().lstrip("-").isdigit() or not name.strip():
            raise WorkloadError(f"group names are id=name pairs, got {item!r}")
        names[int(number)] = name.strip()
    return names
