"""Immutable messages between the facade, the manager and the trackers.

Most messages are asked (`call`): the handler's return value is the answer. A message that one
actor sends and another answers (the manager plans a read, the trackers answer the facade)
carries the `Reply` to answer on. Every routed tracker message carries the limit table it is to
be judged under (a known-user change reads the manager's, holding its tracker). The messages of
every increase and decrease are tuples: named tuples between actors, immutable like the frozen
dataclasses of the rest (built with `tuple.__new__` on the hot loops), and plain tuples (told
apart by their length) from the facade to the manager.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from quotactor.actors.runtime import Reply, Ticket
from quotactor.config.model import SchedulerConfig
from quotactor.core.identity import UserGroup
from quotactor.core.intake import Decrease, Increase
from quotactor.core.limits import LimitTable
from quotactor.core.queue_tracker import Refusal
from quotactor.core.resources import Resource

Kind = Literal["user", "group"]

# Facade -> manager


class Route(NamedTuple):
    """Route increases and decreases (one, or a scheduler cycle's batch).

    The answer is a `Routing`: each routed item's message (naming its user tracker), for the
    sender to deliver (the manager counts them in flight and never waits on a tracker
    itself), and the items refused before routing.
    """

    items: tuple[Increase | Decrease, ...]
    deadline: float
    ticket: Ticket | None
    """None when routed on the sender's thread (`runtime.here`): the sender gets the answer
    whatever the time."""


@dataclass(frozen=True, slots=True)
class PlanRead:
    """Ask the manager for the replies of a headroom/can-run read (it never blocks itself)."""

    parts: tuple[str, ...]
    app: str
    user: UserGroup


@dataclass(frozen=True, slots=True)
class PlanSnapshot:
    """Ask for the snapshot replies of one tracker (`name`) or all of a kind (`name` None)."""

    kind: Kind
    name: str | None


@dataclass(frozen=True, slots=True)
class SwitchTable:
    """Enforce `table` from now on; `loaded` is the config it was built from (or None)."""

    table: LimitTable
    loaded: SchedulerConfig | None = None


@dataclass(frozen=True, slots=True)
class Shutdown:
    pass


@dataclass(frozen=True, slots=True)
class Stats:
    pass


# Facade -> user and group trackers, without the manager (`quotactor.actors.known`; the
# messages that name trackers are `quotactor.actors.user_tracker`'s)


class NotKnown:
    """The answer of a known-user change that cannot skip the manager; nothing was changed."""


NOT_KNOWN = NotKnown()


# Manager -> any tracker


@dataclass(frozen=True, slots=True)
class ReadPart:
    """Headroom and can-run-app of one tracker's side of a decision."""

    parts: tuple[str, ...]
    app: str
    user: str
    table: LimitTable
    reply: Reply[ReadResult]


@dataclass(frozen=True, slots=True)
class SnapshotPart:
    table: LimitTable
    reply: Reply[dict[str, Any]]


# User tracker -> group tracker (asked, so it carries no reply of its own)


class GroupIncrease(NamedTuple):
    parts: tuple[str, ...]
    app: str
    usage: Resource
    user: str
    table: LimitTable


class GroupDecrease(NamedTuple):
    parts: tuple[str, ...]
    app: str
    usage: Resource
    remove_app: bool
    user: str


@dataclass(frozen=True, slots=True)
class GroupSkip:
    """An operation routed to the group that the user tracker ended on its own (a refusal, a
    decrease of nothing): the group counts it as handled, so that it may be retired."""


GROUP_SKIP = GroupSkip()

GroupChange = GroupIncrease | GroupDecrease | GroupSkip


class GroupBatch(NamedTuple):
    """One sender's changes to one group, in order: a single call's one change, or a batch's
    changes to this group (one item per user tracker of a round, see `user_tracker.decide`).

    `ticket` settles the fate of the increases as a whole: taken by the group, or abandoned by
    a sender that stopped waiting; the decreases and skips are applied and counted either way.
    It is None when no item is an increase, or when the sender runs the group's handler itself
    (`runtime.here`) and so gets the answer whatever the time.
    """

    items: tuple[GroupChange, ...]
    ticket: Ticket | None


class GroupStatus(NamedTuple):
    """The group tracker's answer to a `GroupBatch`: per item, None when applied (or counted),
    the `Refusal` of a refused increase, or the exception that left the group unchanged."""

    outcomes: tuple[Refusal | Exception | None, ...]


@dataclass(frozen=True, slots=True)
class ReadResult:
    headroom: dict[str, int] | None
    apps_refusal: Refusal | None
    """The `maxApplications` a new application would break on this side, if any."""


ManagerMessage = Route | PlanRead | PlanSnapshot | SwitchTable | Shutdown | Stats
"""What the manager handles."""
GroupMessage = GroupBatch | ReadPart | SnapshotPart
"""What a group tracker handles."""
