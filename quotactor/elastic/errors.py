"""The one error type of the elastic quota engine."""

from __future__ import annotations

from quotactor.core.errors import QuotactorError

__all__ = ["QuotaError"]


class QuotaError(QuotactorError, ValueError):
    """A quota or pod change the engine refuses; nothing was changed.

    It is a `ValueError` because every refusal is about a value the caller gave (a spec that
    Koordinator's webhook would reject, an unknown pod, a malformed quantity), never about the
    engine's own state.
    """
