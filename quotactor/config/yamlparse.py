"""Parsing YAML text into a node tree that keeps every scalar as written and every line.

We compose nodes instead of constructing Python objects: nodes keep their line, which every
error message needs, and their raw text, which matters because YuniKorn's decoder (Go yaml.v2)
hands a string field the scalar exactly as written (`memory: 0x10` is the text `0x10`, not 16).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import Node, ScalarNode, SequenceNode

from quotactor.config.errors import ConfigError

__all__ = ["compose", "syntax_error", "NULL_TAG"]

NULL_TAG = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
_STR = "tag:yaml.org,2002:str"
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})


class _PlainResolver:
    """Tags only what the reader needs from the parser: nulls and merge keys (`<<`).

    Everything else stays text and the reader interprets it by yaml.v2's rules; PyYAML's own
    resolver would try a dozen regular expressions on every scalar for nothing.
    """

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            if implicit[0] and value in _NULLS:
                return NULL_TAG
            return _MERGE if implicit[0] and value == "<<" else _STR
        return "tag:yaml.org,2002:seq" if kind is SequenceNode else "tag:yaml.org,2002:map"

    def descend_resolver(self, *_: Any) -> None:
        """No path-dependent tags in a config."""

    def ascend_resolver(self, *_: Any) -> None:
        """No path-dependent tags in a config."""


if getattr(yaml, "__with_libyaml__", False):
    from yaml.cyaml import CParser  # type: ignore[attr-defined]  # re-exported, untyped

    class _Loader(CParser, SafeConstructor, _PlainResolver):
        def __init__(self, stream: str | bytes) -> None:
            CParser.__init__(self, stream)
            SafeConstructor.__init__(self)
else:  # pragma: no cover - PyYAML built without libyaml
    from yaml.composer import Composer
    from yaml.parser import Parser
    from yaml.reader import Reader as _StreamReader
    from yaml.scanner import Scanner

    class _Loader(_StreamReader, Scanner, Parser, Composer,  # type: ignore[no-redef]
                  SafeConstructor, _PlainResolver):
        def __init__(self, stream: str | bytes) -> None:
            _StreamReader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)
            SafeConstructor.__init__(self)


def syntax_error(exc: yaml.YAMLError) -> ConfigError:
    """A YAML error as a `ConfigError` at its line and column.

    A scanner error is placed where the broken token starts (an unclosed quote, say), which is
    also the line YuniKorn names; other errors where the parser gave up.
    """
    if not isinstance(exc, yaml.MarkedYAMLError):
        return ConfigError(f"YAML syntax error: {exc}")
    first, second = exc.problem_mark, exc.context_mark
    if isinstance(exc, yaml.scanner.ScannerError):
        first, second = second, first
    mark = first or second
    reason = f"YAML syntax error: {exc.problem or exc.context}"
    if exc.problem and exc.context and exc.problem.startswith("but "):
        reason = f"YAML syntax error: {exc.context} {exc.problem}"
    elif exc.problem and exc.context:
        reason += f" ({exc.context}"
        if exc.context_mark is not None:
            reason += f" at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}"
        reason += ")"
    if mark is None:
        return ConfigError(reason)
    return ConfigError(reason, f"line {mark.line + 1}, column {mark.column + 1}", mark.line + 1)


def compose(text: str) -> tuple[Node | None, Any]:
    """The root node of `text` (None for an empty document) and the loader that made it.

    A YAML syntax error becomes a `ConfigError` located at its line and column. The text is
    handed to libyaml as UTF-8 bytes, which it reads faster than `str`.
    """
    loader = _Loader(text.encode("utf-8", "surrogatepass"))
    try:
        return loader.get_single_node(), loader
    except yaml.YAMLError as exc:
        raise syntax_error(exc) from None
    finally:
        loader.dispose()
