"""A nesting bound checked before the config loader composes any YAML.

libyaml composes a document recursively in C: a body nested some ten thousand levels deep (a
100 kB run of `[`) overflows the thread's C stack and kills the whole process, scheduler and
all, and no exception handler can stop that. So the text first goes through libyaml's event
parser, which is iterative and cheap (milliseconds for a 1 MiB body, as it stops at the first
level too deep), and anything nested deeper than any real config is refused as invalid.
"""

from __future__ import annotations

from typing import Any

import yaml

from quotactor.config.errors import ConfigError

__all__ = ["MAX_DEPTH", "check_depth"]

MAX_DEPTH = 256
"""Collections inside collections; a queue level takes two, so real configs stay far below."""

_EventLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def check_depth(source: str | bytes) -> None:
    """Raise `ConfigError` if `source` nests deeper than `MAX_DEPTH`.

    Other problems (syntax, encoding) are left for the loader, which reports them in place.
    """
    mark = _too_deep(source)
    if mark is not None:
        raise ConfigError(f"the document nests deeper than {MAX_DEPTH} levels",
                          f"line {mark.line + 1}", mark.line + 1)


def _too_deep(source: str | bytes) -> Any:
    """Where the first collection past `MAX_DEPTH` starts (a yaml `Mark`), or None."""
    depth = 0
    try:
        for event in yaml.parse(source, Loader=_EventLoader):
            if isinstance(event, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    return event.start_mark
            elif isinstance(event, _CLOSE):
                depth -= 1
    except (yaml.YAMLError, ValueError):
        return None
    return None
