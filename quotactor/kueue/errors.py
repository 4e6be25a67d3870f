"""The one error type of the Kueue engine."""

from __future__ import annotations

from quotactor.core.errors import QuotactorError

__all__ = ["KueueError"]


class KueueError(QuotactorError, ValueError):
    """An object or workload change the engine refuses; nothing was changed.

    The message names the object and the field, as Kueue's webhooks do
    (`ClusterQueue team-a: spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: ...`).
    It is a `ValueError` because every refusal is about a value the caller gave, never about
    the engine's own state.
    """
