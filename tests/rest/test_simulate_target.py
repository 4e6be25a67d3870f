"""`simulate --target URL`: a workload replayed through a running service's shim API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from quotactor.cli import main
from quotactor.client import Client
from quotactor.rest import RestServer, serve
from quotactor.scheduler import Scheduler
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.synthetic import generate, parse_synthetic
from quotactor.sim.remote import replay_remote

SHIM = "target-shim-token"
CONFIG = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}, {name: user, create: true}]
    queues:
      - name: root
        submitacl: '*'
"""


@pytest.fixture
def service() -> Iterator[tuple[Scheduler, RestServer]]:
    with Scheduler.start(CONFIG) as scheduler:
        scheduler.start_background(0.01)
        server: RestServer = serve(scheduler, shim_token=SHIM)
        try:
            yield scheduler, server
        finally:
            server.stop()


@pytest.mark.slow
def test_a_workload_runs_to_the_end_on_the_service(service) -> None:
    scheduler, server = service
    workload = generate(parse_synthetic("synthetic:jobs=25,users=3,seed=4"))
    with Client(server.url, shim_token=SHIM, rm_id="sim") as client:
        outcome = replay_remote(client, workload, uniform_cluster(4, {"vcore": "64"}),
                                speed=200_000.0, timeout=60.0)
    assert outcome.submitted == 25 and outcome.unfinished == 0
    assert outcome.completed + outcome.rejected == 25 and outcome.completed > 0
    assert outcome.allocations == sum(j.tasks for j in workload.jobs)
    # Everything was released: no usage left, books consistent.
    assert all(not n["allocations"] for n in scheduler.nodes_view())
    assert all(c["Succeeded"] for c in scheduler.health_checks())


@pytest.mark.slow
def test_the_cli_replays_against_a_url(service, monkeypatch, capsys) -> None:
    _, server = service
    monkeypatch.setenv("QUOTACTOR_SHIM_TOKEN", SHIM)
    code = main(["simulate", "--workload", "synthetic:jobs=10,users=2,seed=1", "--nodes", "2",
                 "--node-vcore", "64", "--target", server.url, "--speed", "200000"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "10 jobs submitted" in out and "0 unfinished" in out


def test_the_cli_without_a_token_fails_in_one_line(service, monkeypatch, capsys) -> None:
    _, server = service
    monkeypatch.delenv("QUOTACTOR_SHIM_TOKEN", raising=False)
    code = main(["simulate", "--workload", "synthetic:jobs=2", "--nodes", "1",
                 "--target", server.url])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "401" in err
