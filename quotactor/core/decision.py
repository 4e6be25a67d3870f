"""The answer to an increase, as the facade returns it."""

from __future__ import annotations

from dataclasses import dataclass

from quotactor.core.queue_tracker import Refusal

__all__ = ["ACCEPTED", "Decision"]


@dataclass(frozen=True, slots=True)
class Decision:
    """Accepted, or the `Refusal` that explains why not: which limit of whom, and where."""

    ok: bool
    refusal: Refusal | None = None


ACCEPTED = Decision(True)
"""The answer to every accepted increase: one shared (immutable) value, not one per call."""
