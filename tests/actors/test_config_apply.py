"""YuniKorn YAML configs through the config actor: validated first, switched atomically."""

from __future__ import annotations

import threading
from functools import partial

import pytest

from quotactor import ConfigError, UserGroup, load_config
from quotactor.ugm import UserGroupManager

BASE = """
partitions:
  - name: default
    queues:
      - name: root
        limits:
          - limit: everyone
            users: ["*"]
            maxapplications: 3
        queues:
          - name: a
            limits:
              - limit: sue
                users: [sue]
                maxresources: {memory: 10G}
                maxapplications: 2
              - limit: dev team
                groups: [dev]
                maxresources: {memory: 50G}
"""
SUE = UserGroup("sue", ["dev"])
GB = 10**9


def test_a_yaml_config_sets_limits_and_names_trackers(start_ugm) -> None:
    ugm = start_ugm(BASE)
    assert [u["userName"] for u in ugm.users_usage()] == ["sue"]
    assert [g["groupName"] for g in ugm.groups_usage()] == ["dev"]
    assert ugm.increase_tracked_resource("root.a", "1", {"memory": 10 * GB}, SUE)
    assert not ugm.increase_tracked_resource("root.a", "1", {"memory": 1}, SUE)
    assert ugm.headroom("root.a", "2", UserGroup("bob", ["dev"])) == {"memory": 40 * GB}
    assert ugm.config is not None and ugm.config.partition("default") is not None


def test_an_invalid_config_raises_with_its_location_and_changes_nothing(start_ugm) -> None:
    ugm = start_ugm(BASE)
    assert ugm.increase_tracked_resource("root.a", "1", {"memory": 4 * GB}, SUE)
    before_users, before_table = ugm.users_usage(), ugm.limit_table
    bad = BASE.replace("users: [sue]", "users: [sue, '*', bob]")
    with pytest.raises(ConfigError) as caught:
        ugm.update_config(bad)
    assert "limits[0].users" in caught.value.location
    assert ugm.users_usage() == before_users
    assert ugm.limit_table is before_table
    assert not ugm.increase_tracked_resource("root.a", "1", {"memory": 7 * GB}, SUE)
    with pytest.raises(ConfigError) as syntax:
        ugm.update_config("partitions: [\n  - name: x\n    queues: {")
    assert syntax.value.line is not None
    assert ugm.metrics.reloads.labels("default", "failed")._value.get() == 2


def test_a_config_without_the_managers_partition_is_refused(start_ugm) -> None:
    ugm = start_ugm(BASE)
    with pytest.raises(ConfigError, match="no partition named 'default'"):
        ugm.update_config(BASE.replace("name: default", "name: other"))


def test_applying_the_same_yaml_twice_changes_nothing(start_ugm) -> None:
    ugm = start_ugm(BASE)
    ugm.increase_tracked_resource("root.a", "1", {"memory": 3 * GB}, SUE)
    users, groups = ugm.users_usage(), ugm.groups_usage()
    ugm.update_config(BASE)
    ugm.update_config(load_config(BASE))
    assert ugm.users_usage() == users and ugm.groups_usage() == groups


def test_start_refuses_an_invalid_config_and_leaves_no_actor() -> None:
    with pytest.raises(ConfigError):
        UserGroupManager.start("partitions: [{name: default, queues: [{name: root, "
                               "limits: [{limit: x, users: ['*', bob], maxapplications: 1}]}]}]")


@pytest.mark.timeout(120)
def test_yaml_configs_flipping_under_load_never_mix(start_ugm, run_concurrently) -> None:
    """Config A refuses by the user limit, config B by the group limit; a mix would accept."""
    user_tight = """
partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: a
            limits:
              - {limit: u, users: ["*"], maxresources: {memory: "4"}}
              - {limit: g, groups: [dev], maxresources: {memory: "1000000"}}
"""
    group_line = 'groups: [dev], maxresources: {memory: "%s"}'
    group_tight = user_tight.replace('"4"', '"1000000"').replace(
        group_line % "1000000", group_line % "4")
    ugm = start_ugm(user_tight)
    flips = [0]

    def flipper(stop: threading.Event) -> None:
        while not stop.is_set():
            ugm.update_config(group_tight if flips[0] % 2 == 0 else user_tight)
            flips[0] += 1

    accepted: list[int] = []

    def worker(seed: int) -> None:
        """At least 250 increases, and on until the flipper has switched 20 times."""
        i = 0
        while i < 250 or flips[0] < 20:
            user = UserGroup(f"u{seed}-{i % 5}", ["dev"])
            if ugm.increase_tracked_resource("root.a", f"a{seed}-{i}", {"memory": 5}, user):
                accepted.append(i)
            i += 1

    run_concurrently([partial(worker, s) for s in range(3)], background=[flipper])
    assert flips[0] >= 20
    assert accepted == []
