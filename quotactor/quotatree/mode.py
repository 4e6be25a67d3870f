"""The two modes of MCAD's quota manager."""

from __future__ import annotations

from enum import Enum

__all__ = ["Mode"]


class Mode(Enum):
    """How `allocate` treats a request.

    MCAD starts in MAINTENANCE so that, after a restart, the consumers that were running can be
    put back where their groups are without any quota check (a forced allocation); the caller
    switches to NORMAL once the state is rebuilt. The values are MCAD's.
    """

    NORMAL = 0
    MAINTENANCE = 1

    def describe(self) -> str:
        """MCAD's `GetModeString()` text."""
        return f"mode set to {self.name.capitalize()}"
