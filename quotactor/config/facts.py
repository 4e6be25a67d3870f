"""What the document said that the model cannot: for validation to judge like YuniKorn.

YuniKorn validates its raw structs, so it sees a quantity that does not parse, and an empty
`max: {}` on the root queue, which our typed model turns into "nothing". The loader records
those facts here and the validator reports them in the order YuniKorn's checks would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from quotactor.config.errors import ConfigError

__all__ = ["SourceFacts", "NO_FACTS"]


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """`bad_quantities`: location of a quantity map -> the error of its first bad entry.
    `declared_resources`: locations of queues whose `resources.max` or `resources.guaranteed`
    is present (even empty)."""

    bad_quantities: Mapping[str, ConfigError] = field(default_factory=dict)
    declared_resources: frozenset[str] = frozenset()


NO_FACTS = SourceFacts()
