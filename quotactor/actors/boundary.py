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

__all__ = ["ask", "translated"]

T = TypeVar("T")


def translated(operation: Callable[[], T], passes: tuple[type[Exception], ...] = ()) -> T:
    """Run `operation`; our errors (and the `passes` types) leave as they are, pykka's and any
    other become the matching `QuotactorError`, with the original as the cause."""
    try:
        return operation()
    except QuotactorError:
        raise
    except pykka.Timeout as exc:
        raise OperationTimeout(f"no answer within the timeout: {exc}") from exc
    except pykka.ActorDeadError as exc:
        raise ManagerClosed(f"the actor is stopped: {exc}") from exc
    except Exception as exc:
        if isinstance(exc, passes):
            raise
        raise OperationFailed(f"{type(exc).__name__}: {exc}") from exc


def ask(ref: pykka.ActorRef[Any] | None, message: Any, timeout: float) -> Any:
    """Ask a pykka actor through the boundary; `ManagerClosed` when there is no actor."""
    if ref is None:
        raise ManagerClosed("the actor is stopped")
    return translated(lambda: ref.ask(message, timeout=timeout))
