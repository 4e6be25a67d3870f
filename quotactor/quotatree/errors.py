"""The one error type of quota trees, so callers can tell a bad spec or name from a bug."""

from __future__ import annotations

from quotactor.core.errors import QuotactorError

__all__ = ["QuotaTreeError"]


class QuotaTreeError(QuotactorError, ValueError):
    """A malformed tree or consumer spec, or an unknown tree, forest or consumer name.

    Raised before anything changes: a call that raises leaves the manager as it was. Refusals
    that are about an allocation request (it does not fit, it is already allocated, ...) are
    not errors; they come back as an `AllocationResponse` with `allocated=False`.
    """
