"""Errors that the pure core raises at its boundary."""

from __future__ import annotations

__all__ = ["InvalidRequest"]


class InvalidRequest(ValueError):
    """A call with arguments that can never be valid (bad queue path, empty id, bad quantity).

    Raised before anything changes, so the caller can trust that a failed call left every
    tracker exactly as it was.
    """
