"""The answer to an allocation request."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AllocationResponse"]


@dataclass(frozen=True, slots=True)
class AllocationResponse:
    """Whether a consumer was allocated and whom that preempted.

    `message` is empty on success and says why on a refusal (MCAD's text, trimmed of the
    padding spaces MCAD accumulates). `preempted_ids` names every consumer the allocation
    removed from the tree(s); consumers that were only slid up or down are not listed, since
    they keep running.
    """

    consumer_id: str
    allocated: bool
    message: str = ""
    preempted_ids: frozenset[str] = frozenset()

    @classmethod
    def refused(cls, consumer_id: str, message: str) -> AllocationResponse:
        return cls(consumer_id, False, message)
