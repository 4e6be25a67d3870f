"""Releases the scheduler asks of its shim, effective only once the shim confirms them.

The scheduler sometimes decides an allocation must go: a placeholder whose real ask is ready
to take its place (`PLACEHOLDER_REPLACED`), placeholders not replaced in time (`TIMEOUT`), and
preemption victims (`PREEMPTED_BY_SCHEDULER`). Only the shim can stop the pod behind it, so, as
seed 000 says, "until the confirmation of the shim is received no tracking updates must be
created": `lifecycle.ask_release` records a `ReleaseRequest` and leaves node, queue, user and
group usage as they are; the shim's release of that allocation (`Partition.release`) is what
removes it, and for a replaced placeholder is also what books the real allocation in its place.

Embedded without a shim (`SchedulerOptions.shim_confirms_releases` False, the default), the
scheduler is its own shim: the same requests take effect at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ReleaseRequest", "Releases", "Termination"]

Termination = Literal["PLACEHOLDER_REPLACED", "TIMEOUT", "PREEMPTED_BY_SCHEDULER"]
"""Why the scheduler wants an allocation gone (YuniKorn's `TerminationType` names)."""


@dataclass(frozen=True, slots=True)
class ReleaseRequest:
    """The scheduler asks the shim to release one allocation.

    `replacement` is the key of the real ask that takes a replaced placeholder's place once
    the shim confirms (empty for other terminations).
    """

    partition: str
    application_id: str
    allocation_key: str
    termination: Termination
    message: str
    replacement: str = ""


class Releases:
    """One partition's releases asked for and not confirmed yet, and those not yet told."""

    def __init__(self, confirming: bool) -> None:
        self.confirming = confirming
        self.asked: dict[tuple[str, str], ReleaseRequest] = {}
        self.outbox: list[ReleaseRequest] = []
        self._replacements: set[tuple[str, str]] = set()

    def request(self, partition: str, application_id: str, allocation_key: str,
                termination: Termination, message: str, replacement: str = "") -> bool:
        """Record a request (False if that allocation's release was asked for already)."""
        key = (application_id, allocation_key)
        if key in self.asked:
            return False
        request = ReleaseRequest(partition, application_id, allocation_key, termination,
                                 message, replacement)
        self.asked[key] = request
        self.outbox.append(request)
        if request.replacement:
            self._replacements.add((request.application_id, request.replacement))
        return True

    def is_asked(self, application_id: str, allocation_key: str) -> bool:
        return (application_id, allocation_key) in self.asked

    def is_replacing(self, application_id: str, ask_key: str) -> bool:
        """Whether the ask already waits for a placeholder's release to take its place."""
        return (application_id, ask_key) in self._replacements

    def settle(self, application_id: str, allocation_key: str) -> ReleaseRequest | None:
        """Forget the request for an allocation that is now gone; returns it if there was one."""
        request = self.asked.pop((application_id, allocation_key), None)
        if request is not None and request.replacement:
            self._replacements.discard((application_id, request.replacement))
        return request

    def take(self) -> list[ReleaseRequest]:
        """The requests not delivered yet, oldest first (the outbox is emptied)."""
        out, self.outbox = self.outbox, []
        return out

