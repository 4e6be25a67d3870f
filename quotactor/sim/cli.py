"""`quotactor simulate` and `quotactor demo`: the command-line face of the replay.

`add_parser` registers both subcommands on the `quotactor` command's subparsers; each sets
`func`, which returns the exit code: 0 on success, 2 when an input (config, workload, cluster)
is unusable, 1 when the run itself fails (for example a port in use for `--serve`), 3 when
`--verify` finds a result breaking an invariant (`quotactor.sim.models.verify`).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from quotactor.sim.inputs.cluster import ClusterError, ClusterSpec, load_cluster, uniform_cluster
from quotactor.sim.inputs.jobs import Workload, WorkloadError
from quotactor.sim.model_runs import MODELS, ModelRun, load_model_runs
from quotactor.sim.models.replay import GANG_STYLES, PLACEMENTS, ReplayOptions
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.reports.checks import Check, CheckError, judge, parse_check
from quotactor.sim.reports.citation import credit_lines
from quotactor.sim.reports.compare import format_comparison
from quotactor.sim.reports.summary import format_summary
from quotactor.sim.session import (
    ConfigRun,
    InputError,
    Outputs,
    check_out_folder,
    load_runs,
    os_error_text,
    run_config,
    start_scheduler,
    write_comparison,
    write_outputs,
)

__all__ = ["add_parser", "run_demo", "run_simulate"]

DEFAULT_SIMULATE_OUT = "quotactor-simulate-out"
DEFAULT_DEMO_OUT = "quotactor-demo-out"
_MODEL_DEMOS = {"elastic": "normal is guaranteed 96 cores and borrows the system group's idle "
                           "32, which are revoked when system jobs arrive",
                "quotatree": "a hard root of 128 cores over soft normal (96) and system (32) "
                             "nodes; borrowers are preempted when the owners' jobs come",
                "kueue": "ClusterQueues normal (96 cores, borrowing and lending up to 32) "
                         "and system (32) in one cohort; system reclaims what normal "
                         "borrowed"}
_INPUT_ERRORS = (InputError, WorkloadError, ClusterError, CheckError)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `simulate` and `demo`."""
    simulate = subparsers.add_parser(
        "simulate",
        help="replay a workload through the embedded scheduler under a queue config",
        description="Replay a workload (SWF, CSV, JSONL or synthetic) in virtual time through "
        "the embedded YuniKorn-like scheduler, then print per-user and per-group waits and "
        "the time limits held jobs back, and write a JSON report and PNG plots.",
    )
    simulate.add_argument("--model", choices=MODELS, default=MODELS[0],
                          help="quota model to replay under: the embedded YuniKorn scheduler "
                          "(default), Koordinator's elastic quota, MCAD's quota trees or "
                          "Kueue's ClusterQueues")
    simulate.add_argument("--config", action="append", type=Path, default=[],
                          metavar="QUEUES.yaml",
                          help="YuniKorn queue config, or ElasticQuota YAML (--model elastic) "
                          "or QuotaTree JSON (--model quotatree) or Kueue YAML (--model "
                          "kueue); give it twice to compare "
                          "two (required unless --target)")
    simulate.add_argument("--compare", type=Path, metavar="OTHER.yaml",
                          help="a second config to replay the same workload under and compare")
    simulate.add_argument("--compare-model", choices=MODELS, metavar="MODEL",
                          help="the quota model of --compare's config when it is not --model's: "
                          "two models on one workload, side by side (e.g. --model yunikorn "
                          "--config queues.yaml --compare kueue.yaml --compare-model kueue)")
    simulate.add_argument("--workload", required=True, metavar="FILE|synthetic[:k=v,...]",
                          help="an SWF/CSV/JSONL file (optionally .gz) or `synthetic` with "
                          "options such as synthetic:jobs=2000,users=20,seed=7")
    simulate.add_argument("--format", choices=("swf", "csv", "jsonl"),
                          help="workload format (default: from the file name or contents)")
    simulate.add_argument("--swf-groups", default="", metavar="ID=NAME,...",
                          help="names for SWF group ids, e.g. 1=normal,2=system (default g<id>)")
    simulate.add_argument("--with-memory", action="store_true",
                          help="SWF: ask for each job's memory as well as its processors")
    _cluster_args(simulate)
    simulate.add_argument("--placement", choices=PLACEMENTS, default=PLACEMENTS[0],
                          help="a parallel job's tasks: all at once or none (whole, default: "
                               "as the machine's own scheduler and co-scheduling do), one "
                               "by one (tasks, as YuniKorn places pods; partly placed jobs "
                               "can deadlock), or as a YuniKorn gang (gang: placeholders hold "
                               "capacity until all are placed or they time out)")
    simulate.add_argument("--gang-style", choices=GANG_STYLES, metavar="{Soft,Hard}",
                          help="--placement gang: when the placeholders time out, the job "
                               "goes on task by task (Soft, default) or is given up (Hard)")
    simulate.add_argument("--gang-timeout", type=_timeout, metavar="SECONDS",
                          help="--placement gang: seconds placeholders wait for the rest of "
                               "their gang (default 900, as YuniKorn)")
    simulate.add_argument("--packing", choices=("dense", "none"), default="dense",
                          help="tasks per ask: as many as fit on a node (dense, default) or one")
    simulate.add_argument("--no-reservations", dest="reservations", action="store_false",
                          help="never reserve a node for a waiting ask (YuniKorn reserves)")
    simulate.add_argument("--partition", default="",
                          help="partition to submit to (default: the config's first)")
    simulate.add_argument("--jobs", type=int, metavar="N",
                          help="replay only the first N jobs (in submit order)")
    victims = simulate.add_argument_group("preemption (the replay acts as the shim)")
    victims.add_argument("--kill-preempted", action="store_true",
                         help="count a preempted job as killed (it never finishes) instead of "
                         "restarting it from scratch (the default, its work lost)")
    victims.add_argument("--preemption-grace", type=_seconds, default=0.0, metavar="SECONDS",
                         help="yunikorn model: confirm each release the scheduler asks for "
                         "this many seconds later, as a pod's termination grace (default 0)")
    _output_args(simulate, DEFAULT_SIMULATE_OUT)
    remote = simulate.add_argument_group("against a running service (quotactor serve)")
    remote.add_argument("--target", metavar="URL",
                        help="replay through the shim API of the service at URL, in "
                        "accelerated real time, instead of in-process (needs the shim token "
                        "in $QUOTACTOR_SHIM_TOKEN)")
    remote.add_argument("--speed", type=float, default=1000.0,
                        help="--target: trace seconds per wall second (default 1000)")
    remote.add_argument("--timeout", type=float, default=600.0,
                        help="--target: give up after this many wall seconds (default 600)")
    simulate.set_defaults(func=run_simulate, sim_command="simulate")

    demo = subparsers.add_parser(
        "demo",
        help="replay the bundled NASA iPSC/860 trace (1993) under example limits",
        description="Replay the NASA Ames iPSC/860 log of Oct-Dec 1993 (18,239 jobs, 69 "
        "users, from the Parallel Workloads Archive) on its 128 processors under an example "
        "config with user, wildcard, group and queue limits; print the summary and write the "
        "report and plots.",
    )
    demo.add_argument("--jobs", type=int, metavar="N",
                      help="replay only the first N jobs of the trace (default: all)")
    demo.add_argument("--model", choices=MODELS, default=MODELS[0],
                      help="quota model: YuniKorn limits (default), Koordinator elastic "
                      "quotas, an MCAD quota tree or Kueue ClusterQueues (normal borrowing the "
                      "system group's idle share)")
    _output_args(demo, DEFAULT_DEMO_OUT)
    demo.set_defaults(func=run_demo, sim_command="demo")


def _cluster_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("cluster (give --cluster or --nodes)")
    group.add_argument("--cluster", type=Path, metavar="CLUSTER.yaml",
                       help="nodes and capacities (see quotactor.sim.inputs.cluster)")
    group.add_argument("--nodes", type=int, help="number of identical nodes")
    group.add_argument("--node-vcore", default="1", metavar="Q",
                       help="vcores per node, YuniKorn quantity (default 1)")
    group.add_argument("--node-memory", metavar="Q", help="memory per node, e.g. 64Gi")


def _output_args(parser: argparse.ArgumentParser, default_out: str) -> None:
    parser.add_argument("--out", type=Path, default=Path(default_out),
                        help=f"directory for report.json, jobs.csv and plots "
                        f"(default ./{default_out})")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--verify", action="store_true",
                        help="check every run's result against the invariants (usage within "
                        "the cluster, quotas and limits; jobs run as long as they last); exit "
                        "3 naming the first one broken")
    parser.add_argument("--users", type=int, default=15, metavar="N",
                        help="users listed in the summary, most held back first, and rows "
                        "per table of --compare, largest change first (0: all)")
    parser.add_argument("--check", action="append", default=[], metavar="EXPR",
                        help="a policy check on the results, e.g. \"p95_wait < 2h\", "
                        "\"never == 0\", \"held[user:u4] <= 1d\", \"utilization >= 60%%\"; "
                        "repeatable; exit 1 if any fails (see README, Policy checks); a "
                        "bound out of the field's range is refused. Waits and slowdowns "
                        "cover started jobs only: such a check fails when the run started "
                        "fewer of its jobs than the first config of --compare, and is WARN "
                        "(passed, with the count) when some did not start")
    parser.add_argument("--serve", action="store_true",
                        help="serve the REST API (usage and scheduler views) while replaying "
                        "and afterwards, until Ctrl-C")
    parser.add_argument("--host", default="127.0.0.1", help="--serve address (default loopback)")
    parser.add_argument("--port", type=int, default=9080, help="--serve port (default 9080)")


def _seconds(text: str) -> float:
    """A non-negative, finite number of seconds (argparse turns the error into one line)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text!r}")
    return value


def _timeout(text: str) -> float:
    """A positive, finite number of seconds."""
    value = _seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return value


def _cluster(args: argparse.Namespace) -> ClusterSpec:
    if args.cluster is not None:
        if args.nodes is not None:
            raise ClusterError("give either --cluster or --nodes, not both")
        return load_cluster(args.cluster)
    if args.nodes is None:
        raise ClusterError("give --cluster FILE or --nodes N (with --node-vcore/--node-memory)")
    resources = {"vcore": args.node_vcore}
    if args.node_memory:
        resources["memory"] = args.node_memory
    return uniform_cluster(args.nodes, resources)


def _limit_jobs(workload: Workload, jobs: int | None) -> Workload:
    if jobs is None:
        return workload
    if jobs < 1:
        raise WorkloadError("--jobs must be at least 1")
    return Workload(workload.source, workload.jobs[:jobs], workload.bad_lines,
                    workload.problems, workload.header)


def run_simulate(args: argparse.Namespace) -> int:
    """`quotactor simulate`."""
    from quotactor.sim.inputs.workload import load_workload, parse_group_names

    if args.target:
        if args.model != "yunikorn":
            print(f"quotactor simulate: --target needs the yunikorn model, not {args.model}",
                  file=sys.stderr)
            return 2
        if args.kill_preempted or args.preemption_grace:
            # the remote service's shim (not this replay) confirms its releases
            print("quotactor simulate: --kill-preempted and --preemption-grace act on the "
                  "in-process replay only, not with --target", file=sys.stderr)
            return 2
        return _run_remote(args)
    if not args.config:
        print("quotactor simulate: give --config QUEUES.yaml (or --target URL)",
              file=sys.stderr)
        return 2
    gang = {k: v for k, v in (("gang_style", args.gang_style),
                              ("gang_timeout", args.gang_timeout)) if v is not None}
    if gang and args.placement != "gang":
        print("quotactor simulate: --gang-style and --gang-timeout need --placement gang",
              file=sys.stderr)
        return 2
    paths: list[Path] = list(args.config) + ([args.compare] if args.compare else [])
    try:
        check_out_folder(args.out)
        args.parsed_checks = [parse_check(text) for text in args.check]
        if len(paths) > 2:
            raise InputError("give at most two configs (--config twice, or --compare)")
        all_runs: list[ConfigRun | ModelRun]
        if args.compare_model and not args.compare:
            raise InputError("--compare-model needs --compare")
        if args.compare_model and args.compare_model != args.model:
            cluster = _cluster(args)
            all_runs = _two_models(args, paths, cluster)
        elif args.model == "yunikorn":
            runs = load_runs(paths)
            for run in runs:
                names = [p.name for p in run.config.partitions]
                if args.partition and args.partition not in names:
                    raise InputError(f"{run.source}: no partition {args.partition!r} "
                                     f"(it has {', '.join(names)})")
            cluster = _cluster(args)
            all_runs = [*runs]
        else:
            if args.serve:
                raise InputError(f"--serve needs the yunikorn model, not {args.model}")
            if args.preemption_grace:
                raise InputError(f"--preemption-grace needs the yunikorn model, not "
                                 f"{args.model} (its revocations take effect at once)")
            cluster = _cluster(args)
            all_runs = [*load_model_runs(args.model, paths, cluster)]
        workload = _limit_jobs(load_workload(args.workload, fmt=args.format,
                                             group_names=parse_group_names(args.swf_groups),
                                             with_memory=args.with_memory,
                                             progress=_generating), args.jobs)
    except _INPUT_ERRORS as exc:
        print(f"quotactor simulate: {exc}", file=sys.stderr)
        return 2
    _report_bad_lines(workload)
    options = ReplayOptions(partition=args.partition, placement=args.placement,
                            packing=args.packing, kill_preempted=args.kill_preempted,
                            preemption_grace=args.preemption_grace,
                            reservations=args.reservations, **gang)
    return _run(args, all_runs, workload, cluster, options, _simulate_preamble(workload))


def _two_models(args: argparse.Namespace, paths: list[Path], cluster: ClusterSpec
                ) -> list[ConfigRun | ModelRun]:
    """`--config` under `--model` and `--compare` under `--compare-model`."""
    if len(paths) != 2:
        raise InputError("--compare-model compares two configs: give --config once, and "
                         "--compare")
    if args.serve or args.preemption_grace:
        raise InputError("--serve and --preemption-grace need both configs under the "
                         "yunikorn model")
    runs: list[ConfigRun | ModelRun] = []
    for kind, path in zip((args.model, args.compare_model), paths, strict=True):
        if kind != "yunikorn":
            runs.extend(load_model_runs(kind, [path], cluster))
            continue
        run = load_runs([path])[0]
        names = [p.name for p in run.config.partitions]
        if args.partition and args.partition not in names:
            raise InputError(f"{run.source}: no partition {args.partition!r} (it has "
                             f"{', '.join(names)})")
        runs.append(run)
    return runs


def _run_remote(args: argparse.Namespace) -> int:
    """`simulate --target URL`: the workload through a running service's shim API."""
    import os

    import httpx

    from quotactor.client import Client, ServiceError
    from quotactor.sim.inputs.workload import load_workload, parse_group_names
    from quotactor.sim.remote import replay_remote

    try:
        cluster = _cluster(args)
        workload = _limit_jobs(load_workload(args.workload, fmt=args.format,
                                             group_names=parse_group_names(args.swf_groups),
                                             with_memory=args.with_memory), args.jobs)
    except _INPUT_ERRORS as exc:
        print(f"quotactor simulate: {exc}", file=sys.stderr)
        return 2
    token = os.environ.get("QUOTACTOR_SHIM_TOKEN") or None
    try:
        with Client(args.target, shim_token=token, rm_id=f"simulate-{os.getpid()}") as client:
            outcome = replay_remote(client, workload, cluster, speed=args.speed,
                                    timeout=args.timeout, partition=args.partition)
    except (ServiceError, httpx.HTTPError, ValueError) as exc:
        print(f"quotactor simulate: {args.target}: {exc}", file=sys.stderr)
        return 1
    print(outcome.format())
    return 0 if outcome.unfinished == 0 else 1


def run_demo(args: argparse.Namespace) -> int:
    """`quotactor demo`."""
    from quotactor.sim.inputs.demo import (
        DEMO_GROUPS,
        copy_demo_inputs,
        demo_cluster,
        demo_workload,
    )

    try:
        check_out_folder(args.out)
        args.parsed_checks = [parse_check(text) for text in args.check]
        workload = demo_workload(args.jobs)
        if args.jobs is not None and args.jobs < 1:
            raise WorkloadError("--jobs must be at least 1")
        trace, config = copy_demo_inputs(args.out, args.model)
    except (InputError, WorkloadError, CheckError) as exc:
        print(f"quotactor demo: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"quotactor demo: {os_error_text(exc)}", file=sys.stderr)
        return 2
    cluster = demo_cluster()
    runs: list[ConfigRun | ModelRun] = (
        [*load_runs([config])] if args.model == "yunikorn"
        else [*load_model_runs(args.model, [config], cluster)])
    days = workload.span / 86400
    preamble = [
        f"quotactor demo: replaying the NASA Ames iPSC/860 log (Oct-Dec 1993: "
        f"{len(workload.jobs)} jobs, {len(workload.users)} users, {days:.0f} days)",
        f"on its 128 processors under {config.name} "
        + ("(wildcard user, named user, group and queue limits)." if args.model == "yunikorn"
           else f"({args.model} model: {_MODEL_DEMOS[args.model]})."),
        *credit_lines(workload.header, workload.source),
        "",
    ]
    label = "nasa-ipsc-demo" if args.model == "yunikorn" else f"nasa-ipsc-{args.model}"
    code = _run(args, runs, workload, cluster, ReplayOptions(label=label), preamble)
    if code == 0:
        groups = ",".join(f"{k}={v}" for k, v in sorted(DEMO_GROUPS.items()))
        model = "" if args.model == "yunikorn" else f"--model {args.model} "
        print(f"\nTry other limits: copy {config}, edit the copy, and compare:\n"
              f"  quotactor simulate {model}--config {config} --compare EDITED{config.suffix} "
              f"--workload {trace} --nodes 1 --node-vcore 128 --swf-groups {groups}")
    return code


def _generating(done: int, total: int) -> None:
    """Progress of a large synthetic workload's generation, on stderr."""
    print(f"quotactor simulate: generating synthetic jobs: {done:,} of {total:,}",
          file=sys.stderr, flush=True)


def _simulate_preamble(workload: Workload) -> list[str]:
    credit = credit_lines(workload.header, workload.source)
    return [*credit, ""] if credit else []


def _report_bad_lines(workload: Workload) -> None:
    if not workload.bad_lines:
        return
    print(f"quotactor simulate: {workload.source}: skipped {workload.bad_lines} bad "
          f"line{'s' if workload.bad_lines != 1 else ''}:", file=sys.stderr)
    for problem in workload.problems[:5]:
        print(f"  {problem}", file=sys.stderr)
    if workload.bad_lines > 5:
        print(f"  ... ({workload.bad_lines - 5} more)", file=sys.stderr)


def _run(args: argparse.Namespace, runs: list[ConfigRun | ModelRun], workload: Workload,
         cluster: ClusterSpec, options: ReplayOptions, preamble: list[str]) -> int:
    """Replay under each config, print, write; with `--serve`, keep the first run's
    scheduler and REST server up until Ctrl-C."""
    for line in preamble:
        print(line)
    served: list[Any] = []
    compare = len(runs) == 2
    results: list[SimulationResult] = []
    broken = 0
    try:
        for index, run in enumerate(runs):
            if isinstance(run, ModelRun):
                result = run.replay(workload, cluster, options.kill_preempted, options.progress)
            else:
                scheduler = None
                if args.serve and index == 0:
                    scheduler = start_scheduler(run, workload,
                                                reservations=options.reservations)
                    served.append(scheduler)
                    served.append(_serve(scheduler, args))
                result = run_config(run, workload, cluster, options, scheduler)
            results.append(result)
            if compare:
                print(f"== {'AB'[index]}: {result.label} ==")
            print(format_summary(result, args.users))
            print()
            folder = args.out / f"{'ab'[index]}-{result.label}" if compare else args.out
            _print_outputs(write_outputs(result, folder, plots=not args.no_plots))
            broken += _verify(result, args) if args.verify else 0
        if compare:
            print()
            print(format_comparison(results[0], results[1], args.users))
            written = write_comparison(results[0], results[1], args.out,
                                       plots=not args.no_plots)
            print(f"comparison: {written}")
        failed = _run_checks(args.parsed_checks, results, args.sim_command)
        if served:
            _wait_for_interrupt(served[1].url)
        return 3 if broken else 1 if failed else 0
    except KeyboardInterrupt:
        done = ", ".join(r.label for r in results)
        print(f"\nquotactor {args.sim_command}: interrupted; "
              + (f"results of {done} are in {args.out}" if results else "no replay finished"),
              file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise
    except OSError as exc:
        print(f"quotactor {args.sim_command}: {os_error_text(exc)}", file=sys.stderr)
        return 1
    finally:
        for item in reversed(served):
            item.stop()


def _run_checks(checks: list[Check], results: list[SimulationResult], command: str) -> int:
    """Print every check of every run, the second of two judged against the first (see
    `quotactor.sim.reports.checks`); returns how many failed (a line on stderr if any, and one for
    the checks passed on the started jobs only)."""
    if not checks:
        return 0
    failed: list[str] = []
    warned: list[str] = []
    for index, result in enumerate(results):
        print()
        print(f"checks ({result.label}):")
        for verdict in judge(checks, result, results[0] if index else None):
            status = "FAIL" if not verdict.passed else "WARN" if verdict.warning else "PASS"
            print(f"  {status}  {verdict.line}")
            if not verdict.passed:
                failed.append(f"{result.label}: {verdict.line}")
            elif verdict.warning:
                warned.append(f"{result.label}: {verdict.line}")
    if warned:
        print(f"quotactor {command}: warning: {len(warned)} check"
              f"{'s' if len(warned) != 1 else ''} passed on the jobs that started only: "
              f"{'; '.join(warned)}", file=sys.stderr)
    if failed:
        print(f"quotactor {command}: {len(failed)} check{'s' if len(failed) != 1 else ''} "
              f"failed: {'; '.join(failed)}", file=sys.stderr)
    return len(failed)


def _serve(scheduler: Any, args: argparse.Namespace) -> Any:
    from quotactor.sim.serve import serve_scheduler

    server = serve_scheduler(scheduler, args.host, args.port)
    print(f"serving {server.url} (partitions, queues, applications, nodes, usage) during "
          f"the replay", file=sys.stderr)
    return server


def _verify(result: SimulationResult, args: argparse.Namespace) -> int:
    """Check `result`'s invariants and say so in one line; returns 1 if one is broken."""
    from quotactor.sim.models.verify import check_result

    verification = check_result(result)
    if verification.first is None:
        print(f"{result.label}: {verification.summary()}")
        return 0
    print(f"quotactor {args.sim_command}: {result.label}: {verification.summary()}",
          file=sys.stderr)
    return 1


def _print_outputs(outputs: Outputs) -> None:
    print(f"report: {outputs.report}")
    print(f"jobs:   {outputs.jobs}")
    for plot in outputs.plots:
        print(f"plot:   {plot}")


def _wait_for_interrupt(url: str) -> None:
    """Block until SIGINT (Ctrl-C) or SIGTERM; both end the command normally."""
    print(f"\nstill serving {url} with the final state; Ctrl-C to stop", file=sys.stderr)
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not done.wait(1.0):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("stopped", file=sys.stderr)
