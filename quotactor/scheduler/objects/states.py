"""The application state machine of YuniKorn (seed 003): states, triggers and transitions.

The table is YuniKorn's `application_state.go` as a value: which trigger moves which state
where. What a transition *does* (timers, tracker updates, leaving the queue) is decided by the
partition, which is the only caller; this module only says whether a move is legal.
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType

__all__ = [
    "ACTIVE_STATES",
    "ApplicationState",
    "InvalidTransition",
    "TERMINAL_STATES",
    "Trigger",
    "next_state",
]


class ApplicationState(StrEnum):
    """The states an application moves through; the values are YuniKorn's REST spelling."""

    NEW = "New"
    ACCEPTED = "Accepted"
    STARTING = "Starting"
    RUNNING = "Running"
    REJECTED = "Rejected"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    FAILING = "Failing"
    FAILED = "Failed"
    EXPIRED = "Expired"
    RESUMING = "Resuming"


class Trigger(StrEnum):
    """What moves an application; the values are YuniKorn's event names."""

    RUN = "runApplication"
    REJECT = "rejectApplication"
    COMPLETE = "completeApplication"
    FAIL = "failApplication"
    EXPIRE = "expireApplication"
    RESUME = "resumeApplication"


class InvalidTransition(ValueError):
    """A trigger that the application's current state does not accept."""


S = ApplicationState
_TABLE: dict[tuple[Trigger, ApplicationState], ApplicationState] = {
    (Trigger.REJECT, S.NEW): S.REJECTED,
    (Trigger.RUN, S.NEW): S.ACCEPTED,
    (Trigger.RUN, S.RESUMING): S.ACCEPTED,
    (Trigger.RUN, S.ACCEPTED): S.STARTING,
    (Trigger.RUN, S.STARTING): S.RUNNING,
    (Trigger.RUN, S.RUNNING): S.RUNNING,
    (Trigger.RUN, S.COMPLETING): S.RUNNING,
    (Trigger.COMPLETE, S.ACCEPTED): S.COMPLETING,
    (Trigger.COMPLETE, S.STARTING): S.COMPLETING,
    (Trigger.COMPLETE, S.RUNNING): S.COMPLETING,
    (Trigger.COMPLETE, S.COMPLETING): S.COMPLETED,
    (Trigger.FAIL, S.NEW): S.FAILING,
    (Trigger.FAIL, S.ACCEPTED): S.FAILING,
    (Trigger.FAIL, S.STARTING): S.FAILING,
    (Trigger.FAIL, S.RUNNING): S.FAILING,
    (Trigger.FAIL, S.FAILING): S.FAILED,
    (Trigger.RESUME, S.NEW): S.RESUMING,
    (Trigger.RESUME, S.ACCEPTED): S.RESUMING,
    (Trigger.EXPIRE, S.COMPLETED): S.EXPIRED,
    (Trigger.EXPIRE, S.FAILED): S.EXPIRED,
    (Trigger.EXPIRE, S.REJECTED): S.EXPIRED,
}
TRANSITIONS = MappingProxyType(_TABLE)

TERMINAL_STATES = frozenset({S.REJECTED, S.COMPLETED, S.FAILED, S.EXPIRED})
"""States an application never leaves except to expire; it no longer belongs to a queue."""

ACTIVE_STATES = frozenset(set(S) - TERMINAL_STATES)


def next_state(state: ApplicationState, trigger: Trigger) -> ApplicationState:
    """The state `trigger` moves `state` to; `InvalidTransition` if it is not allowed."""
    target = _TABLE.get((trigger, state))
    if target is None:
        raise InvalidTransition(f"{trigger.value} is not allowed in state {state.value}")
    return target
