"""Remote shims against one `quotactor serve`, beside the same work done in-process.

    python bench/shim_bench.py [--seconds 10] [--shims 8] [--asks 8]

Each shim is a thread with its own `quotactor.client.Client` and rmID, as a scheduler front end
in another process would be: it submits an application with `--asks` asks in one request, waits
on the decision long-poll until all are allocated, releases them in one request, removes the
application, and starts over. The service is `quotactor serve` in a subprocess (its own GIL),
scheduling every 10 ms. The in-process baseline runs the same loop with the same number of
threads straight against an embedded `Scheduler` with the same background interval, learning
allocations from a cycle listener. Decisions/s counts allocations made and seen by their shim;
p99 is the time from sending the asks to seeing the allocation.
"""

from __future__ import annotations

import argparse
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markdown import header

from quotactor import UserGroup
from quotactor.client import Client
from quotactor.scheduler import Allocation, Ask, Scheduler

TOKEN = "bench-shim-token"
INTERVAL = 0.01
CONFIG = """\
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues:
      - name: root
        submitacl: '*'
"""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _remote_shim(url: str, index: int, asks: int, until: float) -> tuple[int, list[float]]:
    made = 0
    latencies: list[float] = []
    with Client(url, shim_token=TOKEN, rm_id=f"bench-{index}") as shim:
        for n in range(2):
            shim.add_node(f"node-{index}-{n}", {"vcore": 1_000_000})
        position = shim.decisions().position
        round_ = 0
        while time.monotonic() < until:
            app = f"app-{index}-{round_}"
            round_ += 1
            shim.add_application(app, f"user{index}", queue=f"root.t{index}")
            sent = time.monotonic()
            shim.allocation_request(allocations=[{
                "allocationKey": f"k{i}", "applicationID": app,
                "resourcePerAlloc": {"resources": {"vcore": {"value": 100}}}}
                for i in range(asks)])
            keys: list[str] = []
            while len(keys) < asks:
                page = shim.decisions(after=position, wait=5.0)
                position = page.position
                now = time.monotonic()
                for allocation in page.allocations():
                    keys.append(allocation["allocationKey"])
                    latencies.append(now - sent)
            made += len(keys)
            shim.allocation_request(releases=[{"applicationID": app, "allocationKey": k}
                                              for k in keys])
            shim.remove_application(app)
    return made, latencies


def run_remote(seconds: float, shims: int, asks: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "queues.yaml"
        config.write_text(CONFIG)
        process = subprocess.Popen(
            [sys.executable, "-m", "quotactor", "serve", "--config", str(config), "--port", "0",
             "--scheduling-interval", str(INTERVAL), "--watch-interval", "0",
             "--no-access-log"],
            stdout=subprocess.PIPE, text=True,
            env={**os.environ, "QUOTACTOR_SHIM_TOKEN": TOKEN})
        try:
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], 30.0)
            if not ready:
                raise RuntimeError("quotactor serve did not start")
            url = process.stdout.readline().split()[-1]
            start = time.monotonic()
            with ThreadPoolExecutor(shims) as pool:
                futures = [pool.submit(_remote_shim, url, i, asks, start + seconds)
                           for i in range(shims)]
                results = [f.result() for f in futures]
            elapsed = time.monotonic() - start
        finally:
            process.terminate()
            process.wait(timeout=30)
            if process.stdout is not None:
                process.stdout.close()
    latencies = [x for _, lat in results for x in lat]
    made = sum(m for m, _ in results)
    return made / elapsed, _percentile(latencies, 0.5), _percentile(latencies, 0.99)


def run_in_process(seconds: float, threads: int, asks: int) -> tuple[float, float, float]:
    done: dict[str, threading.Event] = {}
    counts: dict[str, int] = {}
    lock = threading.Lock()

    def on_cycle(made: list[Allocation]) -> None:
        seen = time.monotonic()
        with lock:
            for allocation in made:
                app = allocation.application_id
                counts[app] = counts.get(app, 0) + 1
                stamps[app].append(seen)
                if counts[app] == asks:
                    done[app].set()

    stamps: dict[str, list[float]] = {}

    def worker(scheduler: Scheduler, index: int, until: float) -> tuple[int, list[float]]:
        made = 0
        latencies: list[float] = []
        for n in range(2):
            scheduler.add_node(f"node-{index}-{n}", {"vcore": 1_000_000})
        round_ = 0
        while time.monotonic() < until:
            app = f"app-{index}-{round_}"
            round_ += 1
            with lock:
                done[app] = threading.Event()
                stamps[app] = []
            scheduler.submit(app, UserGroup(f"user{index}", []), queue=f"root.t{index}")
            sent = time.monotonic()
            for i in range(asks):
                scheduler.add_ask(app, Ask(f"k{i}", {"vcore": 100}))
            if not done[app].wait(30.0):
                raise RuntimeError(f"{app} was not allocated")
            latencies.extend(t - sent for t in stamps[app])
            made += asks
            for i in range(asks):
                scheduler.release(app, f"k{i}")
            scheduler.remove_application(app)
        return made, latencies

    with Scheduler.start(CONFIG) as scheduler:
        scheduler.add_cycle_listener(on_cycle)
        scheduler.start_background(INTERVAL)
        start = time.monotonic()
        with ThreadPoolExecutor(threads) as pool:
            futures = [pool.submit(worker, scheduler, i, start + seconds)
                       for i in range(threads)]
            results = [f.result() for f in futures]
        elapsed = time.monotonic() - start
    latencies = [x for _, lat in results for x in lat]
    made = sum(m for m, _ in results)
    return made / elapsed, _percentile(latencies, 0.5), _percentile(latencies, 0.99)


def table(seconds: float, shims: int, asks: int) -> str:
    rows = header("run", "shims", "asks/app", "decisions/s", "p50 ms", "p99 ms")
    for name, run in (("in-process (same threads, same cycle)", run_in_process),
                      ("remote shims over HTTP", run_remote)):
        rate, p50, p99 = run(seconds, shims, asks)
        rows.append(f"| {name} | {shims} | {asks} | {rate:,.0f} | {p50 * 1000:.1f} | "
                    f"{p99 * 1000:.1f} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--shims", type=int, default=8)
    parser.add_argument("--asks", type=int, default=8)
    args = parser.parse_args(argv)
    print(table(args.seconds, args.shims, args.asks))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
