"""The library's exception boundary: what a facade lets out is a `QuotactorError`.

Whatever a handler raised by mistake (or a fault injected into it) is an implementation detail
of the actor layer; a host catching `QuotactorError` (or the builtin each of ours also derives
from) must never need to know what raised inside. Signal handlers' exceptions
(`KeyboardInterrupt`, an alarm's) are the caller's own and pass through untouched: callers on
the main thread run `translated` on a worker (see `UserGroupManager._perform` and
`quotactor.actors.served`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from quotactor.core.errors import OperationFailed, QuotactorError

__all__ = ["translate", "translated"]

T = TypeVar("T")


def translate(error: Exception) -> Exception:
    """The `QuotactorError` to raise for `error` (ours are returned as they are); raise it
    `from error`, so the original stays its cause."""
    if isinstance(error, QuotactorError):
        return error
    return OperationFailed(f"{type(error).__name__}: {error}")


def translated(operation: Callable[[], T]) -> T:
    """Run `operation` through the boundary (see `translate`)."""
    try:
        return operation()
    except QuotactorError:
        raise
    except Exception as exc:
        raise translate(exc) from exc

