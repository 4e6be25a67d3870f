"""`quotactor elastic FILE --total ... [--requests FILE]`: show a quota tree's runtimes.

Loads Koordinator `ElasticQuota` objects, charges the pods of a requests file, and prints
every quota's min, max, request, runtime and used per resource (or the REST view as JSON),
so that an admin can see who borrows what before applying a change to a cluster. The root and
system quota objects of a cluster export are skipped: the engine manages those itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from quotactor.core.resources import Resource
from quotactor.elastic.errors import QuotaError
from quotactor.elastic.loader import load_elastic_quotas, parent_first
from quotactor.elastic.manager import ElasticQuotaManager
from quotactor.elastic.pod_file import apply_pod_requests, load_pod_requests
from quotactor.elastic.quantity import format_quantity, parse_quantity
from quotactor.elastic.spec import DEFAULT_QUOTA, ROOT_QUOTA, SYSTEM_QUOTA
from quotactor.elastic.status import QuotaStatus

__all__ = ["add_parser", "parse_total", "render_table", "run"]

_EPILOG = """\
The --requests file is a YAML list of pods:
  - id: train-1                       # required, unique
    quota: team-a                     # optional; none or unknown: the default group
    request: {cpu: "4", memory: 8Gi}  # Kubernetes quantities
    priority: 100                     # optional, default 0
    preemptible: true                 # optional, default true
    assigned: true                    # optional, default false (pending: request only)
Quantities are Kubernetes': cpu in cores ("500m" allowed), memory in bytes ("8Gi")."""

T = TypeVar("T")

_COLUMNS = ("QUOTA", "RESOURCE", "MIN", "MAX", "REQUEST", "RUNTIME", "USED")


def add_parser(subparsers: Any) -> None:
    """Register the `elastic` subcommand on the `quotactor` parser's subparsers."""
    parser = subparsers.add_parser(
        "elastic",
        help="compute Koordinator elastic quota runtimes for a quota tree",
        description="Load Koordinator ElasticQuota objects and print each quota's min, max, "
                    "request, runtime and used.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="ElasticQuota objects, multi-document YAML")
    parser.add_argument("--total", required=True,
                        help="cluster allocatable, e.g. cpu=100,memory=400Gi")
    parser.add_argument("--requests", metavar="FILE", help="pods to charge (YAML, see below)")
    parser.add_argument("--no-min-scale", dest="scale_min", action="store_false",
                        help="do not scale mins down when they exceed what a parent has")
    parser.add_argument("--json", action="store_true", help="print the tree as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the table (or JSON); exit 1 with a message on stderr for any bad input."""
    try:
        manager = ElasticQuotaManager(parse_total(args.total), scale_min=args.scale_min)
        specs = _load(args.file, load_elastic_quotas)
        with _blame(args.file):
            for spec in parent_first(specs):
                if spec.name not in (ROOT_QUOTA, SYSTEM_QUOTA):
                    manager.upsert(spec)
        if args.requests:
            pods = _load(args.requests, load_pod_requests)
            with _blame(args.requests):
                apply_pod_requests(manager, pods)
    except QuotaError as exc:
        print(f"quotactor elastic: {exc}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(manager.view(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_table(manager.statuses(), manager.total))
    return 0


def _load(path: str, loader: Callable[[str], list[T]]) -> list[T]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise QuotaError(f"cannot read {path}: {exc.strerror or exc}") from None
    with _blame(path):
        return loader(text)


@contextmanager
def _blame(path: str) -> Iterator[None]:
    """Prefix refusals with the file they come from."""
    try:
        yield
    except QuotaError as exc:
        raise QuotaError(f"{path}: {exc}") from None


def parse_total(text: str) -> Resource:
    """`cpu=100,memory=400Gi` as a `Resource` in engine units."""
    values: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, quantity = item.partition("=")
        if not sep or not name.strip():
            raise QuotaError(f"--total: expected NAME=QUANTITY, got {item!r}")
        values[name.strip()] = parse_quantity(name.strip(), quantity.strip())
    total = Resource(values)
    if total.has_negative():
        raise QuotaError("--total: quantities must not be negative")
    return total


def render_table(statuses: list[QuotaStatus], total: Resource) -> str:
    """One row per quota and resource, the tree shown by indentation."""
    rows: list[tuple[str, ...]] = [_COLUMNS]
    for status in statuses:
        if not _shown(status):
            continue
        label = "  " * status.depth + status.name
        for dim in _dimensions(status, total) or ["-"]:
            rows.append((label, dim, *_cells(status, dim)))
            label = ""
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    lines = ["cluster total: " + (", ".join(f"{n} {format_quantity(n, v)}"
                                            for n, v in sorted(total.items())) or "-")]
    for row in rows:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [cell.rjust(width) for cell, width in zip(row[2:], widths[2:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _shown(status: QuotaStatus) -> bool:
    """The system and default groups only when something is charged to them or limits them."""
    if status.name not in (SYSTEM_QUOTA, DEFAULT_QUOTA):
        return True
    return bool(status.pods or status.spec.max)


def _dimensions(status: QuotaStatus, total: Resource) -> list[str]:
    spec = status.spec
    names = set(spec.max) | set(status.request) | set(status.used)
    if status.name == ROOT_QUOTA:
        names |= set(total)
    return sorted(names)


def _cells(status: QuotaStatus, dim: str) -> tuple[str, ...]:
    spec = status.spec
    bounded = bool(spec.max) and status.name != ROOT_QUOTA
    unlimited = status.name != ROOT_QUOTA and not bounded

    def show(amount: Resource, applies: bool = True) -> str:
        return format_quantity(dim, amount.get(dim, 0)) if applies else "-"

    return (
        show(spec.min, bounded),
        show(spec.max, bounded),
        show(status.request),
        "-" if unlimited else show(status.runtime),
        show(status.used),
    )
