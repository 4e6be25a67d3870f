"""The answer to an increase, as the facade returns it."""

from __future__ import annotations

from dataclasses import dataclass

from quotactor.core.queue_tracker import Refusal

__all__ = ["Decision"]


@dataclass(frozen=True, slots=True)
class Decision:
    """Accepted, or the refusal that explains why not (a `Refusal`, or a sentence when no
    limit is to blame, such as a group tracker that did not answer in time)."""

    ok: bool
    refusal: Refusal | str | None = None
