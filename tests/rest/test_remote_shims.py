"""End to end: `quotactor serve` in a subprocess, fed by four remote shims at once.

Each shim (a thread with its own client and rmID) registers nodes, submits applications for
its user and asks for more than the user's limit allows, learns its allocations from the
decision long-poll, releases some, and learns the replacements. At the end the shims' books,
the scheduler's nodes and applications, the usage JSON, the queue views and the event records
must tell the same story, and no user may ever have held more than the limit.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from quotactor.client import Client

SHIM_TOKEN = "remote-shim-token"
LIMIT = 4
SHIMS = 4
CONFIG = f"""\
partitions:
  - name: default
    placementrules: [{{name: provided, create: true}}]
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: shared
            parent: true
            limits:
              - limit: each user
                users: ["*"]
                maxresources: {{slots: {LIMIT}}}
"""


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    config = tmp_path / "queues.yaml"
    config.write_text(CONFIG)
    token = tmp_path / "shim-token"
    token.write_text(SHIM_TOKEN)
    token.chmod(0o600)
    process = subprocess.Popen(
        [sys.executable, "-m", "quotactor", "serve", "--config", str(config), "--port", "0",
         "--shim-token-file", str(token), "--scheduling-interval", "0.02",
         "--watch-interval", "0", "--no-access-log"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30.0)
        assert ready, "quotactor serve printed nothing in time"
        line = process.stdout.readline()
        assert line.startswith("quotactor serving "), line
        yield line.split()[-1]
    finally:
        process.terminate()
        try:
            assert process.wait(timeout=20.0) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10.0)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


def _wait_for(client: Client, position: int, count: int, deadline: float
              ) -> tuple[int, list[dict[str, Any]]]:
    """Long-poll until `count` new allocations for this shim arrived after `position`."""
    got: list[dict[str, Any]] = []
    while len(got) < count:
        assert time.monotonic() < deadline, f"{client.rm_id}: only {len(got)} of {count}"
        page = client.decisions(after=position, wait=2.0)
        assert not page.missed
        position = page.position
        got.extend(page.allocations())
    return position, got


def _shim(url: str, index: int) -> dict[str, Any]:
    """One remote shim's whole session; returns what it believes it holds."""
    user = f"user{index}"
    deadline = time.monotonic() + 60.0
    with Client(url, shim_token=SHIM_TOKEN, rm_id=f"rm-{index}") as shim:
        start = shim.decisions().position
        for n in range(2):
            assert shim.add_node(f"node-{index}-{n}", {"slots": 8})["rejected"] == []
        apps = [f"app-{index}-{a}" for a in range(2)]
        for app in apps:
            assert shim.add_application(app, user, groups=["tenants"],
                                        queue=f"root.shared.{user}")["rejected"] == []
        keys = [(app, f"task-{t}") for app in apps for t in range(3)]
        for app, key in keys:  # six asks, but the user may hold only LIMIT slots
            assert shim.ask(app, key, {"slots": 1})["rejectedAllocations"] == []
        position, first = _wait_for(shim, start, LIMIT, deadline)
        assert len(first) == LIMIT, "the user's limit was broken"
        assert shim.decisions(after=position, wait=0.3).allocations() == []
        held = {(a["applicationID"], a["allocationKey"]): a for a in first}
        released = list(held)[:2]
        for app, key in released:
            assert shim.release(app, key)["released"]
            del held[app, key]
        position, more = _wait_for(shim, position, len(keys) - LIMIT, deadline)
        held.update({(a["applicationID"], a["allocationKey"]): a for a in more})
        # Nothing more may come: every ask is now allocated, or was.
        assert shim.decisions(after=position, wait=0.3).allocations() == []
        return {"user": user, "held": held, "made": len(first) + len(more)}


@pytest.mark.slow
def test_four_remote_shims_and_every_view_agree(service: str) -> None:
    with ThreadPoolExecutor(SHIMS) as pool:
        futures = [pool.submit(_shim, service, i) for i in range(SHIMS)]
        results = [f.result(timeout=120) for f in futures]
    held = {key: a for r in results for key, a in r["held"].items()}
    assert len(held) == SHIMS * LIMIT
    with Client(service) as reader:
        # The scheduler's nodes and applications hold exactly what the shims believe.
        on_nodes = {(a["applicationId"], a["allocationKey"]): a["nodeId"]
                    for node in reader.nodes() for a in node["allocations"]}
        assert on_nodes == {key: a["nodeID"] for key, a in held.items()}
        in_apps = {(app["applicationID"], a["allocationKey"])
                   for app in reader.applications("active") for a in app["allocations"]}
        assert in_apps == set(held)
        # Usage = the sum of live allocations, user by user; no limit broken.
        for r in results:
            usage = reader.user_usage(r["user"])
            assert usage["queues"]["resourceUsage"] == {"slots": LIMIT}
            (child,) = usage["queues"]["children"]
            assert child["queuePath"] == "root.shared"
        # The queue views add up the same way.
        shared = reader.queue("root.shared", subtree=True)
        assert shared["allocatedResource"] == {"slots": SHIMS * LIMIT}
        assert {c["queuename"]: c["allocatedResource"] for c in shared["children"]} == {
            f"root.shared.{r['user']}": {"slots": LIMIT} for r in results}
        # Every allocation made is an APP_ALLOC event record, streamed as batched.
        records = reader.events(start=1)["EventRecords"]
        app_allocs = [r for r in records if r["type"] == 2 and r["eventChangeDetail"] == 200]
        assert len(app_allocs) == sum(r["made"] for r in results)
        streamed = list(reader.stream_events(start=1, count=len(records)))
        assert [r["id"] for r in streamed] == [r["id"] for r in records]
        assert reader.healthcheck()["Healthy"] is True
