"""The one error type of the config package.

A config is written by a person and usually has more than one mistake, so a `ConfigError`
carries every problem found, each pointing at a place in the document (a path such as
`partitions[0].queues[0].limits[1]` and, when the YAML is known, its line). The exception itself
is the first problem, which is the one YuniKorn would have reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quotactor.core.errors import QuotactorError

__all__ = ["ConfigError"]


class ConfigError(QuotactorError, ValueError):
    """A configuration that YuniKorn would reject, with every reason found.

    `location` is a path into the document (`partitions[0].queues[2].limits[1].users[0]`), or
    `line 12, column 3` for YAML syntax errors, or empty when the whole input is at fault.
    `errors` lists all problems found; the first one is the exception itself.
    """

    reason: str
    location: str
    line: int | None
    errors: list[ConfigError]

    def __init__(
        self,
        reason: str,
        location: str = "",
        line: int | None = None,
        errors: Sequence[ConfigError] = (),
    ) -> None:
        self.reason = reason
        self.location = location
        self.line = line
        self.errors = [self, *(error for error in errors if error is not self)]
        super().__init__(reason, location, line)

    @classmethod
    def of(cls, found: Sequence[ConfigError]) -> ConfigError:
        """One exception that reports `found` (non-empty), the first problem leading."""
        first, *rest = found
        return cls(first.reason, first.location, first.line, rest)

    def __str__(self) -> str:
        where = self.location
        if self.line is not None and not where.startswith("line "):
            where = f"{where} (line {self.line})" if where else f"line {self.line}"
        return f"{where}: {self.reason}" if where else self.reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason, self.location, self.line, self.errors[1:]))
