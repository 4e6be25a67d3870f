"""The usage endpoints over real HTTP: the contract's shapes, sorting, freshness, partitions."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from quotactor import UserGroup
from quotactor.core.limits import LimitEntry
from quotactor.ugm import UserGroupManager

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "yunikorn-rest"
USERS = "/partition/default/usage/users"


def _without_empty(value: object) -> object:
    """The documentation examples print empty lists that the DAO (and we) omit."""
    if isinstance(value, dict):
        return {k: _without_empty(v) for k, v in value.items() if v not in ([], {}, None)}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value


def test_the_seed_example_is_served_as_the_contract_shows(api, expected_seed) -> None:
    assert api.get(USERS).json() == [expected_seed["user1"]]
    assert api.get("/partition/default/usage/user/user1").json() == expected_seed["user1"]
    assert api.get("/partition/default/usage/groups").json() == [expected_seed["tester"]]
    assert api.get("/partition/default/usage/group/tester").json() == expected_seed["tester"]
    response = api.get(USERS)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")


def test_user1_matches_yunikorns_documentation_example(api) -> None:
    documented = json.loads((FIXTURES / "ugm-usage-doc-examples.json").read_text())
    user1 = documented["GET /ws/v1/partition/{partitionName}/usage/users"][0]
    assert api.get("/partition/default/usage/user/user1").json() == _without_empty(user1)


def test_nothing_tracked_gives_empty_lists(start_ugm, serve) -> None:
    server = serve({"default": start_ugm()})
    with httpx.Client(base_url=server.url) as client:
        assert client.get(USERS).json() == []
        assert client.get("/partition/default/usage/groups").json() == []


def test_each_answer_reflects_changes_made_before_it(seeded, api) -> None:
    assert [u["userName"] for u in api.get(USERS).json()] == ["user1"]
    assert seeded.increase_tracked_resource("root.a", "app7", {"m": 1}, UserGroup("amy"))
    assert [u["userName"] for u in api.get(USERS).json()] == ["amy", "user1"]
    seeded.decrease_tracked_resource("root.a", "app7", {"m": 1}, UserGroup("amy"),
                                     remove_app=True)
    assert [u["userName"] for u in api.get(USERS).json()] == ["user1"]


def test_lists_are_sorted_by_name(seeded, api) -> None:
    for name in ("zed", "amy", "Bob", "_x"):
        assert seeded.increase_tracked_resource("root.a", f"app-{name}", {"m": 1},
                                                UserGroup(name, ["g" + name.lower()]))
    names = [u["userName"] for u in api.get(USERS).json()]
    assert names == sorted(names) and len(names) == 5


def test_the_shared_wildcard_group_is_readable_encoded_or_not(start_ugm, serve, raw) -> None:
    manager = start_ugm({"root": [LimitEntry(groups=("*",), max_applications=5)]})
    assert manager.increase_tracked_resource("root.a", "app1", {"m": 2}, UserGroup("u", ["g"]))
    server = serve({"default": manager})
    for target in ("/partition/default/usage/group/%2A", "/partition/default/usage/group/*",
                   "/partition/default/usage/group/%252A"):
        response = raw(server.url, "GET", target)
        assert response.status == 200, response.body
        assert response.json()["groupName"] == "*"
    listed = raw(server.url, "GET", "/partition/default/usage/groups").json()
    assert [g["groupName"] for g in listed] == ["*"]


def test_partitions_are_told_apart(serve) -> None:
    one = UserGroupManager.start(partition="one", timeout=20.0)
    two = UserGroupManager.start(partition="two", timeout=20.0)
    try:
        one.increase_tracked_resource("root.a", "app1", {"m": 1}, UserGroup("sue"))
        server = serve({"one": one, "two": two})
        with httpx.Client(base_url=server.url) as client:
            assert [u["userName"] for u in client.get("/partition/one/usage/users").json()] == [
                "sue"]
            assert client.get("/partition/two/usage/users").json() == []
            assert client.get("/partition/two/usage/user/sue").status_code == 404
    finally:
        one.stop()
        two.stop()
