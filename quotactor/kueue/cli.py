"""`quotactor kueue FILE... [--workloads FILE]`: admit workloads as Kueue would.

Loads Kueue manifests (ResourceFlavors, ClusterQueues, Cohorts, LocalQueues,
WorkloadPriorityClasses, Namespaces and Workloads), submits the workloads in file order, runs
scheduling cycles until nothing more is admitted, and prints each ClusterQueue's and cohort's
usage (nominal, borrowed, lent, used) and where each workload went, or all of it as JSON, so
that an admin can try quotas before applying them to a cluster.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from quotactor.elastic.quantity import format_quantity
from quotactor.kueue.errors import KueueError
from quotactor.kueue.loader import COMPACT_FORM, MAX_BYTES, Manifests, load_manifests
from quotactor.kueue.manager import CycleResult, KueueManager
from quotactor.kueue.preemption import LESS_THAN_INITIAL_SHARE, LESS_THAN_OR_EQUAL_TO_FINAL_SHARE
from quotactor.kueue.status import ClusterQueueUsage, CohortUsage, WorkloadStatus

__all__ = ["add_parser", "render_tables", "run"]

_DEFAULT_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)


def add_parser(subparsers: Any) -> None:
    """Register the `kueue` subcommand on the `quotactor` parser's subparsers."""
    parser = subparsers.add_parser(
        "kueue",
        help="admit workloads through Kueue ClusterQueues and show quota usage",
        description="Load Kueue objects, admit the workloads as Kueue's scheduler would, and "
                    "print usage per ClusterQueue and cohort.",
        epilog=COMPACT_FORM,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="Kueue manifests, multi-document YAML (kueue.x-k8s.io/v1beta1)")
    parser.add_argument("--workloads", metavar="FILE", action="append", default=[],
                        help="more workloads (Workload objects or the short list form)")
    parser.add_argument("--fair-sharing", action="store_true",
                        help="order and preempt by dominant resource share (as a Kueue "
                             "Configuration with fairSharing.enable in the files does)")
    parser.add_argument("--json", action="store_true", help="print everything as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the tables (or JSON); exit 1 with one line on stderr for any bad input."""
    try:
        manifests = Manifests()
        for path in [*args.files, *args.workloads]:
            load_manifests(_read(path), manifests)
        manager = KueueManager(args.fair_sharing or manifests.fair_sharing,
                               manifests.fair_sharing_strategies or _DEFAULT_STRATEGIES)
        manager.apply(*manifests.objects())
        for name, labels in manifests.namespaces.items():
            manager.set_namespace(name, labels)
        for workload in manifests.workloads:
            manager.submit(workload)
        result = manager.admit_pending()
    except KueueError as exc:
        print(f"quotactor kueue: {exc}", file=sys.stderr)
        return 1
    queues = manager.cluster_queue_usages()
    cohorts = manager.cohort_usages()
    workloads = manager.workloads()
    if args.json:
        json.dump(_document(queues, cohorts, workloads, result), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_tables(queues, cohorts, workloads, result))
    return 0


def _read(path: str) -> str:
    try:
        file = Path(path)
        if file.stat().st_size > MAX_BYTES:
            raise KueueError(f"{path}: larger than {MAX_BYTES} bytes")
        return file.read_text(encoding="utf-8")
    except OSError as exc:
        raise KueueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise KueueError(f"{path}: not UTF-8 text") from None


def _document(queues: list[ClusterQueueUsage], cohorts: list[CohortUsage],
              workloads: list[WorkloadStatus], result: CycleResult) -> dict[str, Any]:
    return {
        "clusterQueues": [q.to_dict() for q in queues],
        "cohorts": [c.to_dict() for c in cohorts],
        "workloads": [w.to_dict() for w in workloads],
        "preempted": [{"workload": p.workload, "clusterQueue": p.cluster_queue, "by": p.by,
                       "reason": p.reason} for p in result.preempted],
        "cycles": result.cycles,
    }


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], numeric_from: int
           ) -> list[str]:
    everything = [header, *rows]
    widths = [max(len(row[i]) for row in everything) for i in range(len(header))]
    lines = []
    for row in everything:
        cells = [c.ljust(w) if i < numeric_from else c.rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return lines


def render_tables(queues: list[ClusterQueueUsage], cohorts: list[CohortUsage],
                  workloads: list[WorkloadStatus], result: CycleResult) -> str:
    """The ClusterQueue, cohort and workload tables, as text."""
    def q(resource: str, value: int | None) -> str:
        return "-" if value is None else format_quantity(resource, value)

    cq_rows = []
    for queue in queues:
        label = queue.name
        for r in queue.resources or ():
            cq_rows.append((label, queue.cohort or "-", r.flavor, r.resource,
                            q(r.resource, r.nominal), q(r.resource, r.borrowing_limit),
                            q(r.resource, r.lending_limit), q(r.resource, r.used),
                            q(r.resource, r.borrowed), q(r.resource, r.lent),
                            str(queue.admitted), str(queue.pending)))
            label = ""
    lines = _table(("CLUSTERQUEUE", "COHORT", "FLAVOR", "RESOURCE", "NOMINAL", "BORROW-LIMIT",
                    "LEND-LIMIT", "USED", "BORROWED", "LENT", "ADMITTED", "PENDING"),
                   cq_rows, 4)
    if cohorts:
        co_rows = [(c.name, c.parent or "-", r.flavor, r.resource,
                    q(r.resource, r.subtree_quota), q(r.resource, r.used),
                    q(r.resource, r.borrowed)) for c in cohorts for r in c.resources]
        lines += ["", *_table(("COHORT", "PARENT", "FLAVOR", "RESOURCE", "QUOTA", "USED",
                               "BORROWED"), co_rows, 4)]
    if workloads:
        wl_rows = []
        for w in workloads:
            flavors = "-"
            if w.admission is not None:
                flavors = " ".join(f"{p.name}:" + ",".join(f"{r}={f}" for r, f in p.flavors)
                                   for p in w.admission.pod_sets)
            wl_rows.append((w.key, w.state, w.cluster_queue or "-", str(w.priority), flavors,
                            w.message))
        lines += ["", *_table(("WORKLOAD", "STATE", "CLUSTERQUEUE", "PRIORITY", "FLAVORS",
                               "MESSAGE"), wl_rows, 99)]
    for p in result.preempted:
        lines.append(f"preempted {p.workload} ({p.cluster_queue}) for {p.by}: {p.reason}")
    return "\n".join(lines) + "\n"
