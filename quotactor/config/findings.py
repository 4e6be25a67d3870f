"""The problems one validation run finds, in the order YuniKorn's checks would meet them."""

from __future__ import annotations

from collections.abc import Mapping

from quotactor.config.errors import ConfigError
from quotactor.config.facts import SourceFacts
from quotactor.config.model import line_at

__all__ = ["Findings"]


class Findings:
    """Collects `ConfigError`s with their YAML lines; reports each bad quantity map once."""

    def __init__(self, lines: Mapping[str, int], facts: SourceFacts) -> None:
        self.errors: list[ConfigError] = []
        self._lines = lines
        self._facts = facts
        self._reported: set[str] = set()

    def add(self, location: str, reason: str) -> None:
        """Report `reason` at `location` (a config built in code has no locations: the leading
        dot of a bare `.key` is dropped)."""
        location = location.lstrip(".")
        self.errors.append(ConfigError(reason, location, line_at(self._lines, location)))

    def quantities_ok(self, location: str, prefix: str = "") -> bool:
        """False if the quantity map at `location` did not parse (reported on first ask).

        Checks that compare quantities skip a map that did not parse: its model value is
        empty, and judging it would only add confusing follow-up errors.
        """
        problem = self._facts.bad_quantities.get(location)
        if problem is None:
            return True
        if location not in self._reported:
            self._reported.add(location)
            self.errors.append(ConfigError(prefix + problem.reason, problem.location,
                                           problem.line))
        return False

    def declared_resources(self, queue_location: str) -> bool:
        """Whether the document gave the queue at `queue_location` a max or guaranteed."""
        return queue_location in self._facts.declared_resources
