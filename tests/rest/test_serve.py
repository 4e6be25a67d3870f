"""`quotactor serve`: hot reload of the config file, partitions coming and going, shutdown."""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from quotactor import UserGroup
from quotactor.actors.runtime import live_actors
from quotactor.rest.service import Service
from quotactor.scheduler import Ask

TOKEN = "s3cret-admin-token"
CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: test
            limits:
              - limit: tester apps
                groups: [tester]
                maxapplications: 10
"""
TIGHTER = CONFIG.replace("maxapplications: 10", "maxapplications: 3")
WITH_GPU = CONFIG + """\
  - name: gpu
    queues:
      - name: root
"""
ONLY_GPU = """\
partitions:
  - name: gpu
    queues:
      - name: root
"""
INVALID = CONFIG.replace("maxapplications: 10", "maxapplications: many")

BOOTSTRAP = """\
import argparse, sys
from quotactor.logs import configure_logging
from quotactor.rest.cli import add_parser
parser = argparse.ArgumentParser(prog="quotactor")
add_parser(parser.add_subparsers(dest="command", required=True))
args = parser.parse_args(sys.argv[1:])
configure_logging("console", "info")
sys.exit(args.func(args))
"""


def wait_until(condition: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)  # sleep-ok: pause between polls of a bounded wait


def _quotactor_actors() -> list[str]:
    return [f"{name} x{count}" for name, count in live_actors().items()]


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "queues.yaml"
    path.write_text(CONFIG)
    return path


@pytest.fixture
def service(yunikorn_config, config_file: Path) -> Iterator[Service]:
    running = Service(config_file, port=0, admin_token=TOKEN, watch_interval=0.05,
                      manager_timeout=20.0)
    running.start()
    try:
        yield running
    finally:
        running.stop()
    assert _quotactor_actors() == []


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=10.0) as client:
        yield client


def _tester_limit(service: Service) -> int | None:
    manager = service.partitions["default"]
    group = manager.group_usage("tester")
    if group is None:
        return None
    return group["queues"]["children"][0].get("maxApplications")


def _failed_reloads(client: httpx.Client) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("quotactor_config_reloads_total{") and 'result="failed"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _seed(service: Service) -> None:
    """user1 (group tester) runs app2 in root.test, holding {memory: 1}, as a shim would."""
    scheduler = service.scheduler
    assert scheduler is not None
    scheduler.add_node("n1", {"memory": 10})
    scheduler.submit("app2", UserGroup("user1", ["tester"]), queue="root.test",
                     asks=[Ask("a1", {"memory": 1})])
    scheduler.schedule()
    assert scheduler.application("app2").allocated == {"memory": 1}


def test_serve_tracks_every_partition_of_the_config(service: Service, client) -> None:
    _seed(service)
    assert [u["userName"] for u in client.get("/partition/default/usage/users").json()] == [
        "user1"]
    assert client.get("/config").text == CONFIG
    assert client.get("/scheduler/healthcheck").json()["Healthy"] is True


def test_a_valid_edit_is_applied_without_losing_usage(service, client, config_file) -> None:
    _seed(service)
    config_file.write_text(TIGHTER)
    wait_until(lambda: _tester_limit(service) == 3)
    assert client.get("/config").text == TIGHTER
    user = client.get("/partition/default/usage/user/user1").json()
    assert user["queues"]["resourceUsage"] == {"memory": 1}


def test_an_invalid_edit_is_logged_and_the_running_config_stays(service, client,
                                                                config_file) -> None:
    _seed(service)
    config_file.write_text(INVALID)
    wait_until(lambda: _failed_reloads(client) == 1.0)
    assert client.get("/config").text == CONFIG
    assert _tester_limit(service) == 10
    config_file.write_text(TIGHTER)
    wait_until(lambda: _tester_limit(service) == 3)


def test_an_emptied_file_does_not_stop_every_partition(service, client, config_file) -> None:
    _seed(service)
    config_file.write_text("")
    wait_until(lambda: _failed_reloads(client) == 1.0)
    assert client.get("/partition/default/usage/user/user1").status_code == 200
    config_file.write_text(TIGHTER)
    wait_until(lambda: _tester_limit(service) == 3)


def test_an_unreadable_moment_does_not_stop_the_watcher(service, config_file) -> None:
    _seed(service)
    config_file.unlink()
    config_file.write_text(TIGHTER)
    wait_until(lambda: _tester_limit(service) == 3)


def _states(client: httpx.Client) -> dict[str, str]:
    return {p["name"]: p["state"] for p in client.get("/partitions").json()}


def test_partitions_added_by_edits_start_and_dropped_ones_drain(service, client,
                                                                config_file) -> None:
    config_file.write_text(WITH_GPU)
    wait_until(lambda: client.get("/partition/gpu/usage/users").status_code == 200)
    gpu = service.partitions["gpu"]
    config_file.write_text(ONLY_GPU)
    wait_until(lambda: _states(client) == {"default": "Draining", "gpu": "Active"})
    assert gpu.running and service.partitions["gpu"] is gpu
    assert client.get("/config?partition=gpu").text == ONLY_GPU


def test_put_config_goes_through_the_same_machinery(service, client, config_file) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert client.put("/config", content=WITH_GPU, headers=bearer).status_code == 204
    assert sorted(service.partitions) == ["default", "gpu"]
    assert client.get("/partition/gpu/usage/users").json() == []
    assert config_file.read_text() == CONFIG, "the file is left alone"
    response = client.put("/config", content=INVALID, headers=bearer)
    assert response.status_code == 400
    assert sorted(service.partitions) == ["default", "gpu"]


def test_stopping_the_service_releases_the_port_and_every_actor(yunikorn_config,
                                                               config_file) -> None:
    running = Service(config_file, port=0, watch_interval=0.05)
    running.start()
    port = running.server.port if running.server else 0
    running.stop()
    running.stop()
    assert _quotactor_actors() == []
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))


def test_an_invalid_config_refuses_to_start(yunikorn_config, tmp_path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(INVALID)
    with pytest.raises(yunikorn_config.ConfigError):
        Service(path, port=0).start()
    assert _quotactor_actors() == []


def _serve_command() -> list[str]:
    """`quotactor serve` once the lead wires it into the CLI; until then, the same parser."""
    from quotactor.cli import build_parser

    subcommands = next(action.choices for action in build_parser()._actions
                       if isinstance(action, argparse._SubParsersAction))
    if "serve" in subcommands:
        return [sys.executable, "-m", "quotactor", "--log-level", "info", "serve"]
    return [sys.executable, "-c", BOOTSTRAP, "serve"]


def _read_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, "the server printed nothing in time"
    return process.stdout.readline()


@pytest.mark.slow
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_quotactor_serve_exits_0_on_a_stop_signal(yunikorn_config, config_file, tmp_path,
                                                  stop_signal) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    process = subprocess.Popen(
        [*_serve_command(), "--config", str(config_file), "--port", "0",
         "--admin-token-file", str(token_file), "--watch-interval", "0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = _read_line(process, timeout=30.0)
        assert line.startswith("quotactor serving http://127.0.0.1:"), line
        url = line.split()[-1]
        assert httpx.get(f"{url}/partition/default/usage/users").json() == []
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert httpx.put(f"{url}/config", content=TIGHTER, headers=bearer).status_code == 204
        process.send_signal(stop_signal)
        assert process.wait(timeout=20.0) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10.0)
        if process.stdout:
            process.stdout.close()
        if process.stderr:
            process.stderr.close()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))


@pytest.mark.slow
def test_quotactor_serve_refuses_an_invalid_config_with_exit_2(yunikorn_config,
                                                               tmp_path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(INVALID)
    finished = subprocess.run([*_serve_command(), "--config", str(path), "--port", "0"],
                              capture_output=True, text=True, timeout=30.0)
    assert finished.returncode == 2
    assert str(path) in finished.stderr
    missing = subprocess.run([*_serve_command(), "--config", str(tmp_path / "nope.yaml")],
                             capture_output=True, text=True, timeout=30.0)
    assert missing.returncode == 2


@pytest.mark.slow
def test_quotactor_serve_exits_1_when_the_port_is_taken(yunikorn_config, config_file) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        finished = subprocess.run(
            [*_serve_command(), "--config", str(config_file), "--port", str(port)],
            capture_output=True, text=True, timeout=30.0)
    assert finished.returncode == 1
    assert "cannot listen" in finished.stderr


@pytest.mark.slow
def test_quotactor_serve_refuses_a_bad_tenant_metrics_choice(yunikorn_config,
                                                             config_file) -> None:
    finished = subprocess.run([*_serve_command(), "--config", str(config_file), "--port", "0",
                               "--tenant-metrics", "everyone"],
                              capture_output=True, text=True, timeout=30.0)
    assert finished.returncode == 2
    assert finished.stderr.strip().endswith("expected top=N, all or none, got 'everyone'")
