"""The results of a sweep on disk: an append-only log of finished points, and the tables.

`points.jsonl` gets one line per point the moment its replay finishes, flushed, so a sweep
stopped by Ctrl-C, a crash or a lost machine keeps everything that finished; a rerun reads it
and replays only the points it lacks. A line cut short by a crash is ignored (that point is
replayed again). The tables (`results.csv`, `results.jsonl`: one row per point in grid order;
`invalid.jsonl`: the combinations the validator rejected) are rewritten from it at the end of
every run, so they never depend on the order points finished in.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from quotactor.sweep.executors import Finished

__all__ = ["INVALID_FILE", "LOG_FILE", "CSV_FILE", "JSONL_FILE", "PointLog", "read_log",
           "write_rows"]

LOG_FILE = "points.jsonl"
CSV_FILE = "results.csv"
JSONL_FILE = "results.jsonl"
INVALID_FILE = "invalid.jsonl"

Row = Mapping[str, Any]


def read_log(directory: Path) -> dict[str, Finished]:
    """Every finished point recorded in `directory`, by key (empty when there is none)."""
    path = directory / LOG_FILE
    found: dict[str, Finished] = {}
    if not path.is_file():
        return found
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
                found[entry["key"]] = Finished(entry["key"], entry["figures"], "",
                                               float(entry.get("seconds", 0.0)))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short when a run was killed: that point runs again
    return found


class PointLog:
    """Appends finished points to `points.jsonl`, each line flushed as it is written."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._handle: TextIO = (directory / LOG_FILE).open("a", encoding="utf-8")

    def add(self, finished: Finished) -> None:
        entry = {"key": finished.key, "figures": finished.figures,
                 "seconds": round(finished.seconds, 3)}
        self._handle.write(json.dumps(entry) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def write_rows(directory: Path, rows: Sequence[Row], invalid: Iterable[Row]) -> list[Path]:
    """`results.csv`, `results.jsonl` and `invalid.jsonl` in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / CSV_FILE, directory / JSONL_FILE, directory / INVALID_FILE]
    columns = list(rows[0]) if rows else []
    with paths[0].open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        if columns:
            writer.writerow(columns)
        for row in rows:
            writer.writerow([_cell(row[c]) for c in columns])
    _write_lines(paths[1], rows)
    _write_lines(paths[2], invalid)
    return paths


def _write_lines(path: Path, rows: Iterable[Row]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
