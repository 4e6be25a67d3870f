"""`--serve`: YuniKorn's scheduler endpoints and the usage API over one replay's scheduler."""

from __future__ import annotations

import httpx
import pytest

from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.synthetic import generate, parse_synthetic
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.serve import serve_scheduler

CONFIG = """\
partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.work
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: work
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 1
"""


@pytest.mark.slow
def test_scheduler_and_usage_endpoints_after_a_replay() -> None:
    workload = generate(parse_synthetic("synthetic:jobs=40,users=3,seed=4"))
    with Scheduler.start(CONFIG, clock=VirtualClock()) as scheduler:
        server = serve_scheduler(scheduler, port=0)
        try:
            replay(scheduler, workload, uniform_cluster(2, {"vcore": "32"}),
                   ReplayOptions(progress=False))
            with httpx.Client(base_url=server.url, timeout=10) as client:
                (partition,) = client.get("/partitions").json()
                assert partition["name"] == "default" and partition["totalNodes"] == 2
                queues = client.get("/partition/default/queues").json()
                assert queues["queuename"] == "root"
                assert [c["queuename"] for c in queues["children"]] == ["root.work"]
                done = client.get("/partition/default/applications/completed").json()
                assert done and all(a["applicationState"] == "Completed" for a in done)
                one = client.get(f"/partition/default/application/{done[0]['applicationID']}")
                assert one.status_code == 200 and one.json()["queueName"] == "root.work"
                nodes = client.get("/partition/default/nodes").json()
                assert [n["nodeID"] for n in nodes] == ["node-001", "node-002"]
                assert all(not n["allocations"] for n in nodes)
                assert client.get("/partition/default/usage/users").status_code == 200
                missing = client.get("/partition/nope/queues")
                assert missing.status_code == 404 and "status_code" in missing.json()
                assert client.get("/partition/default/application/nope").status_code == 404
                bad = client.get("/partition/default/applications/sideways")
                assert bad.status_code == 400
        finally:
            server.stop()
