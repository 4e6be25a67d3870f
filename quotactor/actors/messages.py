"""Immutable messages between the facade, the manager and the trackers.

Most messages are asked (`call`): the handler's return value is the answer. A message that one
actor sends and another answers (the manager plans a read, the trackers answer the facade)
carries the `Reply` to answer on. Every routed tracker message carries the limit table it is to
be judged under (a `Known` change reads the manager's, holding its tracker). The messages of
every increase and decrease are tuples: named tuples between actors, immutable like the frozen
dataclasses of the rest and three times cheaper to build (built with `tuple.__new__` on the hot
loops: a named tuple's own `__new__` is a Python function), and plain tuples (told apart by
their length) from the facade to the manager, cheaper still, which shows at tens of thousands
of operations per second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from quotactor.actors.runtime import Reply, Ticket
from quotactor.config.model import SchedulerConfig
from quotactor.core.identity import UserGroup
from quotactor.core.intake import Decrease, Increase
from quotactor.core.limits import LimitTable
from quotactor.core.queue_tracker import Refusal
from quotactor.core.resources import Resource
from quotactor.core.tracker import GroupTrackerState, UserTrackerState

if TYPE_CHECKING:
    from quotactor.actors.group_tracker import GroupTrackerActor
    from quotactor.actors.manager import ManagerActor
    from quotactor.actors.user_tracker import UserTrackerActor

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


class Routing(NamedTuple):
    """The manager's answer to a `Route`: the routed items' messages in the caller's order
    (each names the user tracker it goes to, `user_ref`), the items refused before routing (by
    position), and the user and group trackers the routed items name, each once, in the order
    first named. Its lists belong to the sender."""

    routed: list[UserIncrease | UserDecrease]
    refused: list[tuple[int, Exception]]
    users: list[UserTrackerActor]
    groups: list[GroupTrackerActor]


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


# Manager -> user tracker


class UserIncrease(NamedTuple):
    """An increase routed to a user tracker. Both routed changes share their first six
    fields' layout (the group's tracker at 5) and end with the states of the user's and the
    group's trackers and the user's tracker, so a batch's held items go to one compiled core
    call (`quotactor.core.tracker.decide_held`) as they are. The message names its user
    tracker itself: a routed item is its message, not a (tracker, message) pair, one tuple
    fewer per item to build and for the collector to traverse."""

    position: int
    parts: tuple[str, ...]
    app: str
    usage: Resource
    group: str | None
    group_ref: GroupTrackerActor | None
    table: LimitTable
    user_state: UserTrackerState
    group_state: GroupTrackerState | None
    user_ref: UserTrackerActor


class UserDecrease(NamedTuple):
    """A decrease routed to a user tracker (layout: see `UserIncrease`)."""

    position: int
    parts: tuple[str, ...]
    app: str
    usage: Resource
    group: str | None
    group_ref: GroupTrackerActor | None
    remove_app: bool
    user_state: UserTrackerState
    group_state: GroupTrackerState | None
    user_ref: UserTrackerActor


class UserBatch(NamedTuple):
    """A user's share of a `Route`, in the caller's order; `position` places each answer.

    The answer is a tuple aligned with `items`: a `Decision` per increase, None per decrease,
    or the exception an item failed with. `deadline` (`time.monotonic`) is the caller's: the
    tracker waits for a group no longer than that.
    """

    items: tuple[UserIncrease | UserDecrease, ...]
    deadline: float


# Facade -> user tracker -> group tracker, without the manager (`quotactor.actors.known`)


class NotKnown:
    """The answer to a `Known` change that cannot skip the manager; nothing was changed."""


class Known(NamedTuple):
    """A single call's change for its user's live tracker, decided without the manager."""

    parts: tuple[str, ...]
    app: str
    usage: Resource
    increase: bool
    manager: ManagerActor


class KnownGroup(NamedTuple):
    """The group's side of a `Known` change, run by the thread holding the user tracker."""

    user: UserTrackerState
    parts: tuple[str, ...]
    app: str
    usage: Resource
    increase: bool
    table: LimitTable
    group: str


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
UserMessage = UserBatch | ReadPart | SnapshotPart | Known
"""What a user tracker handles."""
GroupMessage = GroupBatch | ReadPart | SnapshotPart | KnownGroup
"""What a group tracker handles."""
