from __future__ import annotations

from quotactor.core.limits import Limit, LimitEntry, LimitTable

TABLE = LimitTable({
    "root": [
        LimitEntry(users=("*",), max_applications=10),
        LimitEntry(groups=("ops", "*"), max_resources={"memory": 100}),
    ],
    "root.a": [
        LimitEntry(users=("sue",), max_resources={"memory": 50}),
        LimitEntry(groups=("dev",), max_resources={"memory": 80}),
        LimitEntry(groups=("test",), max_resources={"memory": 70}),
    ],
    "root.a.b": [LimitEntry(groups=("*",), max_applications=3)],
})


def test_a_named_user_limit_beats_the_wildcard_at_the_same_queue() -> None:
    assert TABLE.user_limit("root.a", "sue") == Limit({"memory": 50})
    assert TABLE.user_limit("root.a", "bob") is None
    assert TABLE.user_limit("root", "sue") == Limit({}, 10)
    assert TABLE.user_limit("root", "anyone") == Limit({}, 10)


def test_group_resolution_takes_the_first_named_group_in_config_order_at_the_lowest_level() -> None:
    levels = ["root.a", "root"]
    assert TABLE.resolve_group(levels, ["test", "dev"]) == "dev"
    assert TABLE.resolve_group(levels, ["test"]) == "test"
    assert TABLE.resolve_group(levels, ["ops"]) == "ops"
    assert TABLE.resolve_group(levels, ["other"]) == "*"


def test_a_deeper_wildcard_group_wins_over_a_named_match_higher_up() -> None:
    assert TABLE.resolve_group(["root.a.b", "root.a", "root"], ["dev"]) == "*"


def test_users_without_groups_or_without_any_match_are_not_tracked_for_a_group() -> None:
    assert TABLE.resolve_group(["root.a", "root"], []) is None
    plain = LimitTable({"root.x": [LimitEntry(groups=("dev",), max_applications=1)]})
    assert plain.resolve_group(["root.y", "root"], ["dev"]) is None
    assert plain.resolve_group(["root.x", "root"], ["dev"]) == "dev"


def test_explicit_zero_in_max_resources_is_kept_as_none_allowed() -> None:
    table = LimitTable({"root": [LimitEntry(users=("u",), max_resources={"gpu": 0, "m": 5})]})
    limit = table.user_limit("root", "u")
    assert limit is not None and dict(limit.max_resources) == {"gpu": 0, "m": 5}


def test_named_users_and_groups_and_their_limit_paths_are_listed() -> None:
    assert set(TABLE.named_users()) == {"sue"}
    assert set(TABLE.named_groups()) == {"ops", "*", "dev", "test"}
    assert TABLE.user_limit_paths("sue") == ("root.a", "root")
    assert TABLE.group_limit_paths("*") == ("root", "root.a.b")


def test_tables_built_from_the_same_entries_are_equal() -> None:
    same = LimitTable(dict(TABLE.entries))
    assert same == TABLE
    assert LimitTable({}) != TABLE
