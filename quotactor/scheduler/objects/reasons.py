"""Why an application waits: the first obstacle the scheduler met for its most important ask."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from quotactor.core.queue_tracker import Refusal

__all__ = ["Wait", "WaitKind"]

WaitKind = Literal["user", "group", "queue", "node", "reservation", "preemption"]


@dataclass(frozen=True, slots=True)
class Wait:
    """An application's pending ask is held back by a user, group or queue limit, or by nodes.

    `name` is the user, group or queue path that holds it (empty for `node`); `limit` says
    whether resources or the number of applications is the problem (`capacity` for nodes;
    `turn` for an application that waits behind an earlier alike one of its user, untried:
    `quotactor/scheduler/booking/turns.py`).
    `reservation`: the ask holds a node and waits for room on it (`name` is the node);
    `preemption`: victims were chosen for the ask and their release is awaited.
    """

    kind: WaitKind
    name: str
    queue_path: str
    limit: Literal["resources", "applications", "capacity", "turn"]
    detail: str
    ask: str = ""

    @property
    def is_count(self) -> bool:
        """A user's or group's `maxApplications` (asked first of a new application)."""
        return self.limit == "applications" and self.kind in ("user", "group")

    @property
    def is_queue_count(self) -> bool:
        """A queue's `maxapplications` (asked of a new application after its user's and
        group's `maxApplications`)."""
        return self.limit == "applications" and self.kind == "queue"

    @property
    def is_user_or_group_maximum(self) -> bool:
        """A user's or group's `maxresources` (the headroom the cycle then screens with)."""
        return self.limit == "resources" and self.kind in ("user", "group")

    @property
    def is_turn(self) -> bool:
        """An earlier alike application of the same user goes first (see `Turns.ahead_of`)."""
        return self.limit == "turn"

    @property
    def is_queue_maximum(self) -> bool:
        """A queue's `resources.max`."""
        return self.kind == "queue" and self.limit == "resources"

    @classmethod
    def from_refusal(cls, refusal: Refusal, ask: str) -> Wait:
        return cls(refusal.kind, refusal.name, refusal.queue_path, refusal.limit,
                   refusal.detail, ask)

    def __str__(self) -> str:
        who = f" {self.name}" if self.name else ""
        if self.kind in ("reservation", "preemption"):
            return f"ask {self.ask} {self.detail}"
        if self.is_turn:
            return f"waits its turn at {self.queue_path}: {self.detail}"
        return f"{self.kind} limit{who} ({self.limit}) at {self.queue_path}: {self.detail}" \
            if self.kind != "node" else f"no node fits ask {self.ask}: {self.detail}"
