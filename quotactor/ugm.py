"""`UserGroupManager`: the blocking facade a scheduler calls, one per partition.

Arguments are validated here, on the caller's thread, before any message is sent: a bad call
raises `InvalidRequest` and the actors never see it. Every call waits (at most `timeout`
seconds, one deadline for all its steps) until its effect is visible to any later call from any
thread. A change is routed by the manager first, then delivered to the user tracker (which asks
the group): user before group, always; a single change for an application its user's live
tracker already runs skips the manager (`quotactor.actors.known`). A batch is routed in one
step and decided on the caller's thread, holding its idle trackers (`quotactor.actors.batch`).
Calls made on the main thread run on the relay thread (see `_perform`), and everything raised
is a `QuotactorError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

from quotactor.actors.batch import apply_one, deliver_batch, route_queued
from quotactor.actors.boundary import translate, translated
from quotactor.actors.config import ApplyConfig, ConfigActor
from quotactor.actors.manager import Applied, ManagerActor, ReadPlan, SnapshotPlan
from quotactor.actors.messages import (
    Kind,
    PlanRead,
    PlanSnapshot,
    ReadResult,
    Route,
    Shutdown,
    Stats,
)
from quotactor.actors.runtime import (
    Busy,
    Reply,
    WorkerPool,
    call,
    here,
    on_main_thread,
    stop,
    unguarded,
)
from quotactor.actors.user_tracker import Result, Routing
from quotactor.config.model import SchedulerConfig
from quotactor.core.changes import UsageDecrease, UsageIncrease
from quotactor.core.decision import Decision
from quotactor.core.errors import (
    InvalidRequest,
    ManagerClosed,
    QuotactorError,
)
from quotactor.core.identity import UserGroup
from quotactor.core.intake import Decrease, Increase, intake
from quotactor.core.limits import EMPTY_TABLE, LimitTable
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.queue_tracker import Refusal, merge_headroom
from quotactor.core.resources import QuantityError, Resource
from quotactor.core.tracker import UserTrackerState, new_state
from quotactor.metrics import Metrics

__all__ = ["UserGroupManager"]

DEFAULT_TIMEOUT = 30.0
T = TypeVar("T")


class UserGroupManager:
    """Per-user and per-group usage tracking and limit enforcement for one partition.

    One application id may run for several users: each is an application of its own, in its
    user's tracker and in its group's (as YuniKorn's user group manager tracks them).

    Every error it raises is a `QuotactorError`: `InvalidRequest` (bad arguments),
    `ConfigError`, `OperationTimeout` (no answer within
    `timeout` seconds; the operation is still applied or refused whole, later),
    `ManagerClosed` (not running) or `OperationFailed` (a failure inside the runtime; nothing
    of that operation was applied).
    """

    def __init__(self, partition: str = "default", timeout: float = DEFAULT_TIMEOUT,
                 pause_collector: bool = False, main_thread_relay: bool = True) -> None:
        if not isinstance(partition, str) or not partition:
            raise InvalidRequest(f"partition must be a non-empty string, got {partition!r}")
        self.partition = partition
        self.timeout = timeout
        self.pause_collector = pause_collector
        self.main_thread_relay = main_thread_relay
        self._manager: ManagerActor | None = None
        self._config: ConfigActor | None = None
        self._config_pool: WorkerPool | None = None
        self._applied = Applied(None, EMPTY_TABLE)
        self._on_stop: list[Callable[[], None]] = []
        self._manager_pool: WorkerPool | None = None
        self._relay: WorkerPool | None = None
        self._lock = threading.Lock()
        self.metrics = Metrics(partition)

    @classmethod
    def start(
        cls, config: Any = None, partition: str = "default", timeout: float = DEFAULT_TIMEOUT,
        pause_collector: bool = False, main_thread_relay: bool = True,
    ) -> UserGroupManager:
        """Start the actor system, applying `config` first (`ConfigError` if it is invalid).

        `pause_collector=True` lets config loads pause Python's garbage collector (process-wide:
        for a host that owns its process; see `load_config`). `main_thread_relay=False` runs
        calls made on the main thread inline instead of on the relay thread: no thread handoff
        per call, but an interrupt (Ctrl-C) landing in a call may then leave the manager
        unusable; only for a host that calls from its main thread in a tight loop and does not
        survive an interrupt anyway.
        """
        ugm = cls(partition, timeout, pause_collector, main_thread_relay)
        ugm._manager_pool = WorkerPool("manager", 1)
        ugm._relay = WorkerPool("relay", 1)
        ugm._manager = ManagerActor(ugm._manager_pool, partition)
        ugm._config_pool = WorkerPool("config", 1)
        ugm._config = ConfigActor(ugm._config_pool, ugm._manager, partition)
        try:
            if config is not None:
                ugm.update_config(config)
        except BaseException:
            ugm.stop()
            raise
        return ugm

    def __enter__(self) -> UserGroupManager:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._manager is not None

    def stop(self) -> None:
        """Stop every actor and thread this manager started (and what `on_stop` asked for);
        safe to call twice.

        Raises `OperationTimeout` if an actor does not stop within `timeout` (every thread is
        told to end all the same).
        """
        with self._lock:
            manager, config, relay = self._manager, self._config, self._relay
            pools = [p for p in (self._relay, self._config_pool, self._manager_pool)
                     if p is not None]
            self._manager = self._config = self._manager_pool = self._relay = None
            self._config_pool = None
            hooks, self._on_stop = self._on_stop, []
            if manager is not None:
                self._applied = manager.applied
        try:
            for hook in hooks:
                hook()
            if config is not None:
                translated(lambda: stop(config).get(self.timeout))
            if manager is not None:
                def retire() -> None:
                    retirement = call(manager, Shutdown(), self.timeout)
                    retirement.stop(self.timeout)
                    stop(manager).get(self.timeout)

                if relay is not None and on_main_thread():
                    relay.run(retire, self.timeout)  # many stops: queued from a worker, at once
                else:
                    retire()
        finally:
            for pool in pools:
                pool.shutdown(self.timeout)

    # -- configuration ---------------------------------------------------------------

    def update_config(self, config: Any) -> None:
        """Validate `config` completely, then switch to its limits atomically.

        Raises `ConfigError` and changes nothing when the config is invalid. Concurrent calls
        are applied one at a time, in the order they reach the config actor; `config` and
        `limit_table` always name what the manager enforces.
        """
        ref = self._config_ref()

        def apply(deadline: float) -> None:
            call(ref, ApplyConfig(config, _left(deadline), self.pause_collector),
                 _left(deadline))

        try:
            self._perform(apply)
        except QuotactorError as exc:
            if isinstance(exc, ValueError):
                self.metrics.record_reload(False)
            raise
        self.metrics.record_reload(True)

    @property
    def config(self) -> SchedulerConfig | None:
        """The loaded config in force (None when only a limit table was given)."""
        return self._current().loaded

    @property
    def limit_table(self) -> LimitTable:
        """The limit table in force."""
        return self._current().table

    def _current(self) -> Applied:
        manager = self._manager
        return manager.applied if manager is not None else self._applied

    # -- tracking ---------------------------------------------------------------------

    def increase_tracked_resource(
        self, queue_path: str, application_id: str, usage: Resource | Mapping[str, int],
        user: UserGroup,
    ) -> bool:
        """Add usage for the user and the app's group on every level, or refuse it whole."""
        return self.decide_increase(queue_path, application_id, usage, user).ok

    def decide_increase(
        self, queue_path: str, application_id: str, usage: Resource | Mapping[str, int],
        user: UserGroup,
    ) -> Decision:
        """Like `increase_tracked_resource`, with the refusal that explains a False."""
        parts = parse_queue_path(queue_path)
        _check_app(application_id)
        res = _resource(usage)
        _check_user(user)
        started = time.perf_counter()
        decision = self._apply(((parts, application_id, res, user),))[0]
        assert decision is not None
        self.metrics.record_increase(None if decision.ok else decision.refusal,
                                     time.perf_counter() - started)
        return decision

    def decrease_tracked_resource(
        self, queue_path: str, application_id: str, usage: Resource | Mapping[str, int],
        user: UserGroup, remove_app: bool = False,
    ) -> None:
        """Take usage back (never refused); `remove_app` ends the application."""
        parts = parse_queue_path(queue_path)
        _check_app(application_id)
        res = _resource(usage)
        if res.has_negative():
            raise InvalidRequest(f"a decrease cannot carry negative quantities: {res}")
        _check_user(user)
        self._apply(((parts, application_id, res, user, bool(remove_app)),))
        self.metrics.record_decreases()

    def apply_batch(
        self, changes: Sequence[UsageIncrease | UsageDecrease]
    ) -> list[Decision | None]:
        """Apply many changes in one round trip; results in order (None for decreases).

        Each item has the atomic semantics of the single call; the items of one user are
        applied in the given order. Every item is validated first: one bad item raises
        `InvalidRequest` and nothing is applied.
        """
        items = intake(changes)  # every item checked first, in one compiled pass
        if not items:
            return []
        started = time.perf_counter()
        results = self._apply(tuple(items))
        self.metrics.record_batch(results, (time.perf_counter() - started) / len(results))
        return results

    # -- reads ------------------------------------------------------------------------

    def _read(self, queue_path: str, application_id: str, user: UserGroup) -> tuple[
        ReadResult, ReadResult | None
    ]:
        parts = parse_queue_path(queue_path)
        _check_app(application_id)
        _check_user(user)
        manager = self._manager_ref()

        def read(deadline: float) -> tuple[ReadResult, ReadResult | None]:
            plan: ReadPlan = call(manager, PlanRead(parts, application_id, user),
                                  _left(deadline))

            def side(kind: str, name: str, part: Reply[ReadResult] | None) -> ReadResult:
                """A live tracker's answer, or that of an empty state when it has none."""
                if part is not None:
                    return part.get(_left(deadline))
                state = new_state(kind, name)
                refusal = (state.app_refusal(plan.table, parts, application_id)
                           if isinstance(state, UserTrackerState)
                           else state.app_refusal(plan.table, parts, application_id, user.user))
                return ReadResult(state.headroom(plan.table, parts), refusal)

            user_side = side("user", user.user, plan.user_part)
            if plan.group is None:
                return user_side, None
            return user_side, side("group", plan.group, plan.group_part)

        return self._perform(read)

    def headroom(
        self, queue_path: str, application_id: str, user: UserGroup
    ) -> dict[str, int] | None:
        """What the user may still add here: limit minus usage, the minimum over every limited
        level of the user and the app's group; None when nothing limits them. A read."""
        user_side, group_side = self._read(queue_path, application_id, user)
        return merge_headroom(user_side.headroom,
                              None if group_side is None else group_side.headroom)

    def can_run_app(self, queue_path: str, application_id: str, user: UserGroup) -> bool:
        """Whether the app runs already or a new one fits every maxApplications. A read."""
        return self.app_refusal(queue_path, application_id, user) is None

    def app_refusal(self, queue_path: str, application_id: str,
                    user: UserGroup) -> Refusal | None:
        """Why a new app may not start here: the first `maxApplications` it would break, the
        user's (leaf to root) before the group's; None when it runs already or fits them
        all. A read: YuniKorn's `CanRunApp`, which its scheduler asks before any allocation."""
        user_side, group_side = self._read(queue_path, application_id, user)
        if user_side.apps_refusal is not None or group_side is None:
            return user_side.apps_refusal
        return group_side.apps_refusal

    def _snapshots(self, kind: Kind, name: str | None) -> list[dict[str, Any]]:
        manager = self._manager_ref()

        def snapshots(deadline: float) -> list[dict[str, Any]]:
            plan: SnapshotPlan = call(manager, PlanSnapshot(kind, name), _left(deadline))
            out = [reply.get(_left(deadline)) for reply in plan.parts]
            out.extend(new_state(kind, virtual).snapshot(plan.table) for virtual in plan.virtual)
            return out

        key = "userName" if kind == "user" else "groupName"
        return sorted(self._perform(snapshots), key=lambda s: s[key])

    def users_usage(self) -> list[dict[str, Any]]:
        """Every tracked user in the REST JSON shape, sorted by name."""
        return self._snapshots("user", None)

    def groups_usage(self) -> list[dict[str, Any]]:
        """Every tracked group (including the shared `*` group) in the REST JSON shape."""
        return self._snapshots("group", None)

    def user_usage(self, name: str) -> dict[str, Any] | None:
        found = self._snapshots("user", _check_name(name, "user"))
        return found[0] if found else None

    def group_usage(self, name: str) -> dict[str, Any] | None:
        found = self._snapshots("group", _check_name(name, "group"))
        return found[0] if found else None

    def get_user_resources(self, user_name: str) -> Resource | None:
        """The user's usage at root; None if not tracked, empty if tracked without usage."""
        return _root_usage(self.user_usage(user_name))

    def get_group_resources(self, group_name: str) -> Resource | None:
        return _root_usage(self.group_usage(group_name))

    def stats(self) -> dict[str, int]:
        """Live trackers, retired trackers, application group links held (`links`: running
        applications and those with operations in flight), and operations in flight (called
        and not yet answered); for metrics and tests."""
        manager = self._manager_ref()
        result: dict[str, int] = self._perform(
            lambda deadline: call(manager, Stats(), _left(deadline)))
        result["inflight"] = self.metrics.inflight()
        return result

    def on_stop(self, callback: Callable[[], None]) -> None:
        """Call `callback` first thing when this manager stops (how `quotactor.rest.serve`
        stops the server it started for the manager, without the manager knowing the web)."""
        with self._lock:
            self._on_stop.append(callback)

    def render_metrics(self) -> bytes:
        """The Prometheus text exposition of this manager's private registry."""
        return self.metrics.render(self.stats)

    # -- plumbing ---------------------------------------------------------------------

    def _manager_ref(self) -> ManagerActor:
        ref = self._manager
        if ref is None:
            raise ManagerClosed("the user group manager is not running")
        return ref

    def _config_ref(self) -> ConfigActor:
        ref = self._config
        if ref is None:
            raise ManagerClosed("the user group manager is not running")
        return ref

    def _perform(self, operation: Callable[[float], T]) -> T:
        """Run `operation(deadline)` within this manager's timeout, raising only
        `QuotactorError`s.

        On the main thread, where a signal handler's exception (Ctrl-C, an alarm) may land
        between any two bytecodes, the operation runs on the relay thread and this thread only
        waits: an interrupt ends the wait, and the operation still completes whole (see the
        runtime's invariants).
        """
        deadline = time.monotonic() + self.timeout
        if not on_main_thread():
            return self._run(operation, deadline)
        if not self.main_thread_relay:
            return unguarded(lambda: self._run(operation, deadline))
        relay = self._relay
        if relay is None:
            raise ManagerClosed("the user group manager is not running")
        # Translated on the relay: an interrupt of this wait is the caller's, and passes raw.
        return relay.run(lambda: self._run(operation, deadline), self.timeout)

    @staticmethod
    def _run(operation: Callable[[float], T], deadline: float) -> T:
        """The operation, through the library's exception boundary."""
        try:
            return operation(deadline)
        except QuotactorError:
            raise
        except Exception as exc:
            raise translate(exc) from exc

    def _apply(self, items: tuple[Increase | Decrease, ...]) -> list[Decision | None]:
        """Route the items, then deliver each user's share: the answers, in the items' order.

        Every share is delivered even when an earlier one failed, so that the manager sees
        each routed operation done; then the first failure is raised.
        """
        manager = self._manager_ref()
        if not on_main_thread():  # `_perform`'s own path, without its closure and frames
            try:
                return self._count_and_apply(manager, items, time.monotonic() + self.timeout)
            except QuotactorError:
                raise
            except Exception as exc:
                raise translate(exc) from exc
        return self._perform(lambda deadline: self._count_and_apply(manager, items, deadline))

    def _count_and_apply(self, manager: ManagerActor, items: tuple[Increase | Decrease, ...],
                         deadline: float) -> list[Decision | None]:
        # Counted where the work runs, never on the main thread, where an interrupt could
        # land between the count and its `finally`; in this thread's own tally (no lock).
        tally = self.metrics.tally()
        tally.inflight += len(items)
        try:
            return _route_and_deliver(manager, items, deadline)
        finally:
            tally.inflight -= len(items)


def _route_and_deliver(
    manager: ManagerActor, items: tuple[Increase | Decrease, ...], deadline: float
) -> list[Decision | None]:
    if len(items) == 1:
        return [apply_one(manager, items[0], deadline)]
    routed = here(manager, Route(items, deadline, None))
    routing: Routing = (route_queued(manager, items, deadline)
                        if isinstance(routed, Busy) else routed)
    results: list[Result] = [None] * len(items)
    failure = deliver_batch(routing, results, deadline)
    if routing.refused:
        failure = routing.refused[0][1]
    if failure is not None:
        raise failure
    return results  # type: ignore[return-value]  # no exception is left in it


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _resource(usage: Any) -> Resource:
    try:
        return Resource.of(usage)
    except QuantityError as exc:
        raise InvalidRequest(str(exc)) from exc


def _check_app(application_id: object) -> None:
    if not isinstance(application_id, str) or not application_id or application_id.isspace():
        raise InvalidRequest(
            f"application id must be a non-empty string, got {application_id!r}"
        )


def _check_user(user: object) -> None:
    if not isinstance(user, UserGroup):
        raise InvalidRequest(f"user must be a UserGroup, got {type(user).__name__}")


def _check_name(name: object, kind: str) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidRequest(f"{kind} name must be a non-empty string, got {name!r}")
    return name


def _root_usage(snapshot: dict[str, Any] | None) -> Resource | None:
    if snapshot is None:
        return None
    return Resource(snapshot["queues"].get("resourceUsage", {}))
