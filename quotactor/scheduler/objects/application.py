"""Applications: their asks, allocations, state and gang progress.

An application object only keeps its own books (what is pending, what is allocated, which
state it is in). Everything that involves other objects (the queue, the nodes, the user group
manager) is sequenced by the partition, so the order of tracker and queue updates lives in one
place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from quotactor.core.identity import UserGroup
from quotactor.core.resources import EMPTY, Resource, sum_of
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.ask import MIN_PRIORITY, NO_TAGS, Ask
from quotactor.scheduler.objects.events import EventLog
from quotactor.scheduler.objects.gang import Gang, PlaceholderData
from quotactor.scheduler.objects.reasons import Wait
from quotactor.scheduler.objects.states import ApplicationState, Trigger, next_state

if TYPE_CHECKING:
    from quotactor.scheduler.objects.queue import Queue

__all__ = [
    "ALL_OR_NOTHING", "Application", "BlockToken", "PendingAsk", "STATE_AWARE_DISABLE",
    "tag_value",
]

STATE_AWARE_DISABLE = "application.stateaware.disable"
"""Tag that makes an application go Running at its first allocation (no Starting phase)."""

ALL_OR_NOTHING = "quotactor.io/all-or-nothing"
"""Tag (value `true`) that makes an application's asks one parallel program: none of them is
placed until all of them can be placed at once, in one cycle step, and then all are (what a
co-scheduler does for a pod group whose minimum is all of its pods). Once placed, asks added
later (a restart's) are placed whole again only when nothing of the application is left."""

BlockToken = tuple[str, str, int]
"""(source, key, epoch) of the accounting counter whose change may unblock an ask."""


class PendingAsk:
    """An ask waiting for a node, with when it arrived and what blocked it last."""

    __slots__ = ("added_at", "ask", "blocked", "seq", "wait")

    def __init__(self, ask: Ask, added_at: float, seq: int) -> None:
        self.ask = ask
        self.added_at = added_at
        self.seq = seq
        self.blocked: BlockToken | None = None
        self.wait: Wait | None = None


class _GroupProgress:
    __slots__ = ("count", "min_resource", "replaced", "timed_out")

    def __init__(self, min_resource: Resource) -> None:
        self.count = 0
        self.min_resource = min_resource
        self.replaced = 0
        self.timed_out = 0


class Application:
    """One application of a partition: identity, placement, books, state and history."""

    __slots__ = (
        "_priorities",
        "_sizes",
        "_sorted",
        "all_or_nothing",
        "allocated",
        "allocations",
        "application_id",
        "asks",
        "events",
        "finished_at",
        "gang",
        "max_allocated",
        "partition",
        "pending",
        "placeholder_allocated",
        "placeholder_cleanup_done",
        "placeholder_token",
        "priority",
        "progress",
        "queue",
        "queue_path",
        "rejected_message",
        "reported_wait",
        "requested_queue",
        "seq",
        "start_timeout",
        "state",
        "state_log",
        "state_token",
        "submitted_at",
        "tags",
        "tracked",
        "user",
        "wait",
    )

    def __init__(self, application_id: str, partition: str, user: UserGroup,
                 requested_queue: str, tags: Mapping[str, str], submitted_at: float, seq: int,
                 gang: Gang | None, start_timeout: float, event_limit: int) -> None:
        self.application_id = application_id
        self.partition = partition
        self.user = user
        self.requested_queue = requested_queue
        self.tags: Mapping[str, str] = MappingProxyType(dict(tags)) if tags else NO_TAGS
        self.submitted_at = submitted_at
        self.seq = seq
        self.gang = gang
        disabled = (tag_value(self.tags, STATE_AWARE_DISABLE) or "").lower() == "true"
        self.start_timeout = 0.0 if disabled else start_timeout
        self.all_or_nothing = (tag_value(self.tags, ALL_OR_NOTHING) or "").lower() == "true"
        self.queue: Queue | None = None
        self.queue_path = ""
        self.state = ApplicationState.NEW
        self.state_log: list[tuple[float, str]] = []
        """(time, state's value) of every state it entered (plain values: a long backlog's
        logs are not walked by the garbage collector)."""
        self.asks: dict[str, PendingAsk] = {}
        self.pending: Resource = EMPTY
        self.priority = MIN_PRIORITY
        self.allocations: dict[str, Allocation] = {}
        self.allocated: Resource = EMPTY
        self.placeholder_allocated: Resource = EMPTY
        self.max_allocated: Resource = EMPTY
        self.progress: dict[str, _GroupProgress] = {}
        self.tracked = False
        self.state_token = 0
        self.placeholder_token = 0
        self.placeholder_cleanup_done = False
        self.rejected_message = ""
        self.finished_at: float | None = None
        self.events = EventLog(event_limit)
        self.wait: Wait | None = None
        self.reported_wait: Wait | None = None
        """The reason `Scheduler.take_wait_changes` last reported (None before it reported
        one: its reader starts knowing of no reason)."""
        self._sorted: list[PendingAsk] | None = None
        self._sizes: tuple[tuple[Resource, ...], Resource | None] | None = None
        self._priorities: dict[int, int] = {}
        """How many pending asks have each priority (`priority` is the highest)."""

    @property
    def placed_whole(self) -> bool:
        """Whether the next placement must take every pending ask at once: an all-or-nothing
        application with nothing allocated and more than one ask pending."""
        return self.all_or_nothing and not self.allocations and len(self.asks) > 1

    # -- state ----------------------------------------------------------------------------

    def fire(self, trigger: Trigger, now: float) -> ApplicationState:
        """Move to the state `trigger` leads to (raises `InvalidTransition`); returns it."""
        self.state = next_state(self.state, trigger)
        self.state_log.append((now, self.state.value))
        self.state_token += 1
        return self.state

    def note(self, now: float, kind: str, message: object) -> None:
        """Remember an event; `message` (text or a frozen value) is formatted when read."""
        self.events.add(now, kind, message)

    # -- asks -----------------------------------------------------------------------------

    def add_ask(self, ask: Ask, now: float, seq: int) -> None:
        """Add an ask, or replace the pending ask with the same key."""
        old = self.asks.get(ask.key)
        if old is not None:
            self._count_priority(old.ask.priority, -1)
        self._count_priority(ask.priority, 1)
        self.asks[ask.key] = PendingAsk(ask, now if old is None else old.added_at,
                                        seq if old is None else old.seq)
        self.pending = self.pending + (ask.resource if old is None
                                       else ask.resource - old.ask.resource)
        if ask.placeholder and old is None:
            group = self.progress.get(ask.task_group)
            if group is None:
                group = self.progress[ask.task_group] = _GroupProgress(ask.resource)
            group.count += 1
        self._asks_changed()

    def add_new_asks(self, asks: Sequence[Ask], now: float, seqs: Sequence[int]) -> Resource:
        """Add asks whose keys are new and distinct (the `seqs` theirs), as `add_ask` of each
        would; returns their total."""
        for ask, seq in zip(asks, seqs, strict=True):
            self._count_priority(ask.priority, 1)
            self.asks[ask.key] = PendingAsk(ask, now, seq)
            if ask.placeholder:
                group = self.progress.get(ask.task_group)
                if group is None:
                    group = self.progress[ask.task_group] = _GroupProgress(ask.resource)
                group.count += 1
        added = sum_of(ask.resource for ask in asks)
        self.pending = self.pending + added
        self._asks_changed()
        return added

    def remove_asks(self, keys: Iterable[str]) -> list[Ask]:
        """Forget pending asks; returns them."""
        removed = [self.asks.pop(key).ask for key in keys]
        for ask in removed:
            self._count_priority(ask.priority, -1)
        if removed:
            self.pending = self.pending - sum_of(ask.resource for ask in removed)
            self._asks_changed()
        return removed

    def sorted_asks(self) -> list[PendingAsk]:
        """Pending asks, highest priority first, then in arrival order."""
        if self._sorted is None:
            self._sorted = sorted(self.asks.values(), key=lambda p: (-p.ask.priority, p.seq))
        return self._sorted

    def ask_sizes(self) -> tuple[tuple[Resource, ...], Resource | None]:
        """The sizes of the pending asks in `sorted_asks`' order, and the size they all ask
        (None when they differ, or there are none)."""
        if self._sizes is None:
            sizes = tuple(pending.ask.resource for pending in self.sorted_asks())
            first = sizes[0] if sizes else None
            self._sizes = (sizes, first if all(size == first for size in sizes) else None)
        return self._sizes

    def unblock_asks(self) -> None:
        for pending in self.asks.values():
            pending.blocked = None

    def block_asks(self, wait: Wait, token: BlockToken | None) -> None:
        """One reason holds every ask (an application count holds the application whole)."""
        for pending in self.asks.values():
            pending.wait, pending.blocked = wait, token

    def _count_priority(self, priority: int, delta: int) -> None:
        left = self._priorities.get(priority, 0) + delta
        if left:
            self._priorities[priority] = left
        else:
            del self._priorities[priority]

    def _asks_changed(self) -> None:
        self._sorted = self._sizes = None
        self.priority = max(self._priorities, default=MIN_PRIORITY)

    # -- allocations ----------------------------------------------------------------------

    def add_allocation(self, allocation: Allocation) -> None:
        self.allocations[allocation.key] = allocation
        if allocation.placeholder:
            self.placeholder_allocated = self.placeholder_allocated + allocation.resource
        else:
            self.allocated = self.allocated + allocation.resource
        self.max_allocated = self.max_allocated.component_max(
            self.allocated + self.placeholder_allocated)

    def add_allocations(self, allocations: Sequence[Allocation]) -> None:
        """Add real (not placeholder) allocations, as `add_allocation` of each would."""
        for allocation in allocations:
            self.allocations[allocation.key] = allocation
        self.allocated = self.allocated + sum_of(a.resource for a in allocations)
        self.max_allocated = self.max_allocated.component_max(
            self.allocated + self.placeholder_allocated)

    def remove_allocations(self, keys: Iterable[str]) -> list[Allocation]:
        """Remove allocations, as `remove_allocation` of each would; returns them."""
        removed = [self.allocations.pop(key) for key in keys]
        held = sum_of(a.resource for a in removed if a.placeholder)
        if held:
            self.placeholder_allocated = self.placeholder_allocated - held
        real = sum_of(a.resource for a in removed if not a.placeholder)
        if real:
            self.allocated = self.allocated - real
        return removed

    def remove_allocation(self, key: str) -> Allocation:
        allocation = self.allocations.pop(key)
        if allocation.placeholder:
            self.placeholder_allocated = self.placeholder_allocated - allocation.resource
        else:
            self.allocated = self.allocated - allocation.resource
        return allocation

    def replace_allocation(self, allocation: Allocation) -> Allocation:
        """Swap in a new value under the same key (an in-place resize); returns the old one."""
        old = self.remove_allocation(allocation.key)
        self.add_allocation(allocation)
        return old

    @property
    def idle(self) -> bool:
        """Nothing allocated and nothing pending: the application stops counting as running."""
        return not self.allocations and not self.asks

    @property
    def has_real_allocations(self) -> bool:
        return len(self.allocations) > self.placeholder_count()

    def placeholder_count(self) -> int:
        return sum(1 for a in self.allocations.values() if a.placeholder)

    def placeholders(self, task_group: str | None = None) -> list[Allocation]:
        """Allocated placeholders (of one task group), by key for a deterministic order."""
        return sorted(
            (a for a in self.allocations.values()
             if a.placeholder and (task_group is None or a.task_group == task_group)),
            key=lambda a: a.key,
        )

    # -- gang -----------------------------------------------------------------------------

    def awaits_replacement(self, ask: Ask) -> bool:
        """A real ask of a task group whose placeholders are not all used or timed out yet."""
        if ask.placeholder or not ask.task_group:
            return False
        group = self.progress.get(ask.task_group)
        return group is not None and group.count > group.replaced + group.timed_out

    def count_replaced(self, task_group: str) -> None:
        self.progress[task_group].replaced += 1

    def count_timed_out(self, task_group: str) -> None:
        group = self.progress.get(task_group)
        if group is not None:
            group.timed_out += 1

    def placeholder_data(self) -> list[PlaceholderData]:
        return [PlaceholderData(name, g.count, g.min_resource, g.replaced, g.timed_out)
                for name, g in sorted(self.progress.items())]

    def restore_progress(self, data: PlaceholderData) -> None:
        group = self.progress.setdefault(data.task_group, _GroupProgress(data.min_resource))
        group.count, group.replaced, group.timed_out = data.count, data.replaced, data.timed_out


def tag_value(tags: Mapping[str, str], name: str) -> str | None:
    """The value of tag `name` (case-insensitive name, value as given), None if absent."""
    wanted = name.lower()
    for key, value in tags.items():
        if key.lower() == wanted:
            return value
    return None
