"""The library's exception boundary: what a facade lets out is a `QuotactorError`.

pykka's `Timeout` and `ActorDeadError`, and whatever a handler raised by mistake, are
implementation details of the actor layer; a host catching `QuotactorError` (or the builtin
each of ours also derives from) must never need to know pykka. Signal handlers' exceptions
(`KeyboardInterrupt`, an alarm's) are the caller's own and pass through untouched: callers on
the main thread run `translated` on a worker (see `UserGroupManager._perform`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pykka

from quotactor.core.errors import (
    ManagerClosed,
    OperationFailed,
    OperationTimeout,
    QuotactorError,
)

__all__ = ["ask", "translate", "translated"]

T = TypeVar("T")


def translate(error: Exception) -> Exception:
    """The `QuotactorError` to raise for `error` (ours are returned as they are); raise it
    `from error`, so the original stays its cause."""
    if isinstance(error, QuotactorError):
        return error
    if isinstance(error, pykka.Timeout):
        return OperationTimeout(f"no answer within the timeout: {error}")
    if isinstance(error, pykka.ActorDeadError):
        return ManagerClosed(f"the actor is stopped: {error}")
    return OperationFailed(f"{type(error).__name__}: {error}")


def translated(operation: Callable[[], T]) -> T:
    """Run `operation` through the boundary (see `translate`)."""
    try:
        return operation()
    except QuotactorError:
        raise
    except Exception as exc:
        raise translate(exc) from exc


def ask(ref: pykka.ActorRef[Any] | None, message: Any, timeout: float) -> Any:
    """Ask a pykka actor through the boundary; `ManagerClosed` when there is no actor."""
    if ref is None:
        raise ManagerClosed("the actor is stopped")
    return translated(lambda: ref.ask(message, timeout=timeout))
