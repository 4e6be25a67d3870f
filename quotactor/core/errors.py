"""The library's one exception hierarchy: everything quotactor raises on purpose is a
`QuotactorError`, so a host can catch the library's errors apart from its own bugs.

Each class also derives from the builtin a caller would naturally expect (`ValueError` for bad
input, `TimeoutError` for a wait that ran out, `RuntimeError` for a stopped manager), so code
written against those keeps working.
"""

from __future__ import annotations

__all__ = [
    "ActorStopped", "InvalidRequest", "ManagerClosed", "OperationFailed", "OperationTimeout",
    "QuotactorError",
]


class QuotactorError(Exception):
    """Base of every error the library raises deliberately."""


class InvalidRequest(QuotactorError, ValueError):
    """A call with arguments that can never be valid (bad queue path, empty id, bad quantity),
    or that conflicts with what is tracked (a scheduler's application id already in use in
    its partition).

    Raised before anything changes, so the caller can trust that a failed call left every
    tracker exactly as it was.
    """


class OperationTimeout(QuotactorError, TimeoutError):
    """No answer within the caller's timeout.

    The operation is not withdrawn: it is applied whole (or refused whole) when its turn comes;
    a later call sees its effect or none of it, never a part.
    """


class ManagerClosed(QuotactorError, RuntimeError):
    """The manager is not running (never started, or stopped) and takes no more calls."""


class ActorStopped(ManagerClosed):
    """A message reached an actor that had stopped (its manager is shutting down)."""


class OperationFailed(QuotactorError, RuntimeError):
    """An operation failed inside the runtime (a bug, or an injected fault): nothing of it was
    applied. The original exception is its `__cause__`."""
