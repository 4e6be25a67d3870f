"""Queue access control lists in YuniKorn's syntax: `*`, or `user1,user2 group1,group2`.

An ACL only grants; it never denies explicitly. A queue whose ACL does not grant defers to its
parent, so the check walks up to root (see `Queue.may_submit`).
"""

from __future__ import annotations

from dataclasses import dataclass

from quotactor.core.identity import WILDCARD, UserGroup

__all__ = ["Acl"]


@dataclass(frozen=True, slots=True)
class Acl:
    """A parsed ACL; `text` keeps the configured spelling for views."""

    text: str
    everyone: bool = False
    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, text: str | None) -> Acl | None:
        """The ACL of `text`; None when nothing is configured (the parent decides).

        A single space, or an empty user and group list, is the explicit deny-all ACL. The
        user list is everything before the first space, the group list what follows it.
        """
        if text is None:
            return None
        if text.strip() == WILDCARD:
            return cls(text, everyone=True)
        user_part, _, group_part = text.partition(" ")
        users = frozenset(u for u in user_part.split(",") if u)
        groups = frozenset(g for g in group_part.strip().split(",") if g)
        return cls(text, everyone=WILDCARD in users, users=users, groups=groups)

    def allows(self, user: UserGroup) -> bool:
        """Wildcard, then the user list, then any of the user's groups."""
        if self.everyone or user.user in self.users:
            return True
        if not user.groups:
            return False
        return WILDCARD in self.groups or any(g in self.groups for g in user.groups)
