"""The identity an application runs as."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from quotactor.core.errors import InvalidRequest

__all__ = ["UserGroup", "USER_NAME", "GROUP_NAME", "WILDCARD"]

WILDCARD = "*"
USER_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$")
"""YuniKorn's user name syntax (also used to validate REST path names)."""
GROUP_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9:_.-]*$")
"""YuniKorn's group name syntax: no `@`, `#`, `/` or `$`."""


@dataclass(frozen=True, slots=True)
class UserGroup:
    """A user and the groups it belongs to, in the order the identity provider gave them.

    Only the user name is checked here: group names come from an identity provider and a group
    that no limit names simply never matches.
    """

    user: str
    groups: tuple[str, ...] = field(default=())

    def __init__(self, user: str, groups: Sequence[str] = ()) -> None:
        if not isinstance(user, str) or not user.strip():
            raise InvalidRequest(f"user name must be a non-empty string, got {user!r}")
        if isinstance(groups, str):
            groups = (groups,)
        try:
            groups_tuple = tuple(groups)
        except TypeError as exc:
            raise InvalidRequest(f"groups must be a sequence of names, got {groups!r}") from exc
        for group in groups_tuple:
            if not isinstance(group, str) or not group:
                raise InvalidRequest(f"group names must be non-empty strings, got {group!r}")
        object.__setattr__(self, "user", user)
        object.__setattr__(self, "groups", groups_tuple)
