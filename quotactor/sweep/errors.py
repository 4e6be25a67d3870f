"""The one error type of the sweep package: a sweep file or option that cannot be used.

Its message names the place at fault (the parameter, the workload, the key of the sweep file),
so the command line can print it as one line.
"""

from __future__ import annotations

__all__ = ["SweepError"]


class SweepError(ValueError):
    """A sweep that cannot run as written; nothing has been replayed or written."""
