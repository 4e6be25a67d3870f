"""A nesting bound checked before the config loader composes any YAML.

libyaml composes a document recursively in C: a body nested some ten thousand levels deep (a
100 kB run of `[`) overflows the thread's C stack and kills the whole process, scheduler and
all, and no exception handler can stop that. Newer libyaml builds (the one in PyYAML 6.0.4
wheels, for one) refuse nesting deeper than 1,000 levels themselves, which keeps the C stack
safe; the loader then reports their error like any syntax error. Where the libyaml at hand has
no such bound, the text first goes through its event parser, which is iterative (it stops at
the first level too deep, and costs a pass over the text otherwise), and anything nested
deeper than any real config is refused as invalid.
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
_PROBE_DEPTH = 4_000


def check_depth(source: str | bytes) -> None:
    """Raise `ConfigError` if `source` nests deeper than `MAX_DEPTH`.

    Does nothing when the parser bounds nesting itself. Other problems (syntax, encoding) are
    left for the loader, which reports them in place.
    """
    if _PARSER_BOUNDS_DEPTH:
        return
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


def _stops_early(text: str) -> bool:
    """Whether the C parser gives up on `text` well before its end (a nesting bound)."""
    try:
        for _ in yaml.parse(text, Loader=_EventLoader):
            pass
    except yaml.MarkedYAMLError as exc:
        return exc.problem_mark is not None and exc.problem_mark.index < len(text) // 2
    return False


def _parser_bounds_depth() -> bool:
    """Probe the libyaml at hand once: does it refuse deep flow and block nesting by itself?"""
    if not getattr(yaml, "__with_libyaml__", False):
        return False
    return _stops_early("[" * _PROBE_DEPTH) and _stops_early("- " * _PROBE_DEPTH)


_PARSER_BOUNDS_DEPTH = _parser_bounds_depth()
