from __future__ import annotations

import pytest

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import UserGroup
from quotactor.core.queue_path import ancestors, parse_queue_path


def test_queue_paths_split_root_first_and_list_ancestors_leaf_first() -> None:
    assert parse_queue_path("root") == ("root",)
    parts = parse_queue_path("root.a.b")
    assert parts == ("root", "a", "b")
    assert ancestors(parts) == ["root.a.b", "root.a", "root"]


@pytest.mark.parametrize(
    "path", ["", "a.b", "root.", "root..a", "root.a b", "root." + "x" * 65, "root.a.", None, 7,
             ".root", "Root"],
)
def test_malformed_queue_paths_are_invalid_requests(path: object) -> None:
    with pytest.raises(InvalidRequest):
        parse_queue_path(path)


def test_queue_names_accept_yunikorn_punctuation() -> None:
    assert parse_queue_path("root.team-a.u_1:x#y/z@w") == ("root", "team-a", "u_1:x#y/z@w")


def test_user_group_keeps_group_order_and_rejects_empty_names() -> None:
    ug = UserGroup("sue", ["dev", "ops"])
    assert ug.groups == ("dev", "ops")
    assert UserGroup("bob").groups == ()
    assert UserGroup("x", "single").groups == ("single",)
    for bad in ("", "  ", None):
        with pytest.raises(InvalidRequest):
            UserGroup(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest):
        UserGroup("sue", ["dev", ""])
