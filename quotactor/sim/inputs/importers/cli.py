"""`quotactor import SOURCE ...`: a cluster's own history as files `quotactor simulate` replays.

`add_parser` registers the command on the `quotactor` command's subparsers. Exit codes: 0 when
the files are written, 2 when the input is unusable (nothing is written), 1 when a server
cannot be reached or answers badly, or the files cannot be written.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from quotactor.sim.inputs.importers.imported import FetchError, Imported, Written, write_imported
from quotactor.sim.inputs.jobs import WorkloadError

__all__ = ["DEFAULT_OUT", "add_parser", "run_import"]

DEFAULT_OUT = "quotactor-import-out"
_SHOWN_PROBLEMS = 5


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `import` with its sources `yunikorn`, `pods` and `alibaba-gpu`."""
    command = subparsers.add_parser(
        "import",
        help="turn a cluster's history into a workload, a cluster and a queue config to replay",
        description="Read a cluster's history (a running YuniKorn's REST API, `kubectl get "
        "pods -o json` output, or Alibaba's GPU trace) and write workload, cluster and queue "
        "config files that `quotactor simulate` replays.",
    )
    sources = command.add_subparsers(dest="source", required=True, metavar="SOURCE")
    yunikorn = sources.add_parser(
        "yunikorn", help="a running YuniKorn's (or quotactor serve's) REST API",
        description="Read one partition of a running YuniKorn (or `quotactor serve`): its "
        "nodes, its active and completed applications with their allocations and asks, its "
        "event records and its config. Writes workload.jsonl, cluster.yaml and queues.yaml.")
    yunikorn.add_argument("url", metavar="URL", help="the REST API, e.g. http://host:9080")
    yunikorn.add_argument("--partition", help="the partition to read (default: the first)")
    yunikorn.add_argument("--timeout", type=_positive, default=30.0, metavar="SECONDS",
                          help="give up on a request after this long (default 30)")
    _running_arg(yunikorn)
    _out_arg(yunikorn)
    yunikorn.set_defaults(func=run_import)

    pods = sources.add_parser(
        "pods", help="`kubectl get pods -A -o json` output",
        description="Each pod that ran to its end becomes a job: its containers' requests "
        "(GPUs and other extended resources included), user and queue from YuniKorn's labels "
        "and annotations or the namespace, created/started/finished times. Writes "
        "workload.csv and queues.yaml, and cluster.yaml with --nodes.")
    pods.add_argument("file", type=Path, metavar="PODS.json",
                      help="the saved output (optionally gzipped)")
    pods.add_argument("--nodes", type=Path, metavar="NODES.json",
                      help="`kubectl get nodes -o json` output, for the cluster file")
    pods.add_argument("--user-label", metavar="LABEL",
                      help="the pod label naming the user (default: YuniKorn's, else the "
                      "namespace)")
    pods.add_argument("--queue-label", metavar="LABEL",
                      help="the pod label naming the queue (default: YuniKorn's)")
    _running_arg(pods)
    _out_arg(pods)
    pods.set_defaults(func=run_import)

    alibaba = sources.add_parser(
        "alibaba-gpu", help="Alibaba's cluster-trace-gpu-v2023 (pod and node CSV lists)",
        description="The pod list (openb_pod_list_*.csv) as the workload and the node list "
        "(openb_node_list_*.csv) as the cluster. Writes workload.csv, cluster.yaml and "
        "queues.yaml (one queue per QoS class).")
    alibaba.add_argument("pods", type=Path, metavar="PODS.csv")
    alibaba.add_argument("nodes", type=Path, metavar="NODES.csv")
    alibaba.add_argument("--gpu", choices=("milli", "whole"), default="milli",
                         help="GPUs as alibabacloud.com/gpu-milli, 1000 to a GPU, shared "
                         "fractions kept (default); or as whole nvidia.com/gpu, a shared "
                         "GPU counted whole")
    _out_arg(alibaba)
    alibaba.set_defaults(func=run_import)


def _running_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--include-running", action="store_true",
                        help="keep jobs still running, as if they ended now (default: left "
                        "out and counted)")


def _out_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), metavar="DIR",
                        help=f"folder for the files (default ./{DEFAULT_OUT})")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return value


def _import(args: argparse.Namespace) -> Imported:
    if args.source == "yunikorn":
        from quotactor.sim.inputs.importers.yunikorn import import_yunikorn

        return import_yunikorn(args.url, partition=args.partition,
                               include_running=args.include_running, now=time.time(),
                               timeout=args.timeout)
    if args.source == "pods":
        from quotactor.sim.inputs.importers.pods import import_pods

        return import_pods(args.file, nodes=args.nodes, user_label=args.user_label,
                           queue_label=args.queue_label, include_running=args.include_running,
                           now=time.time())
    from quotactor.sim.inputs.importers.alibaba import import_alibaba_gpu

    return import_alibaba_gpu(args.pods, args.nodes, gpu=args.gpu)


def run_import(args: argparse.Namespace) -> int:
    """`quotactor import SOURCE`: print what was imported and where it was written."""
    name = f"quotactor import {args.source}"
    try:
        imported = _import(args)
    except FetchError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    except WorkloadError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    try:
        written = write_imported(imported, args.out)
    except OSError as exc:
        print(f"{name}: cannot write to {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    _print(name, imported, written)
    return 0


def _print(name: str, imported: Imported, written: Written) -> None:
    print(f"{name}: {imported.source}: {imported.summary()}")
    for note in imported.notes:
        print(f"  {note}")
    workload = imported.workload
    if workload.bad_lines:
        print(f"{name}: skipped {workload.bad_lines} bad item"
              f"{'s' if workload.bad_lines != 1 else ''}:", file=sys.stderr)
        for problem in workload.problems[:_SHOWN_PROBLEMS]:
            print(f"  {problem}", file=sys.stderr)
        if workload.bad_lines > _SHOWN_PROBLEMS:
            print(f"  ... ({workload.bad_lines - _SHOWN_PROBLEMS} more)", file=sys.stderr)
    misfits = imported.unplaceable()
    if misfits:
        print(f"{name}: warning: {misfits} job{'s' if misfits != 1 else ''} ask for more "
              f"than any node offers; the replay will never start them", file=sys.stderr)
    print(f"workload: {written.workload}")
    replay = ["quotactor", "simulate", "--workload", str(written.workload)]
    if written.cluster is not None:
        nodes = sum(n.count for n in imported.nodes)
        print(f"cluster:  {written.cluster} ({nodes} node{'s' if nodes != 1 else ''} in "
              f"{len(imported.nodes)} class{'es' if len(imported.nodes) != 1 else ''})")
        replay += ["--cluster", str(written.cluster)]
    print(f"queues:   {written.config} ({imported.config_origin})")
    replay += ["--config", str(written.config)]
    command = shlex.join(replay)
    if written.cluster is None:
        command += " --nodes N --node-vcore CORES --node-memory MEMORY"
    print(f"replay:   {command}")
