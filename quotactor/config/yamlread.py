"""Typed reading of YAML nodes by the rules of YuniKorn's strict decoder (Go yaml.v2).

Any scalar fills a text field, only a plain `true`-like word fills a boolean, numbers follow
yaml.v2's notation, unknown and repeated keys are errors, and null leaves the default.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from quotactor.config.errors import ConfigError
from quotactor.config.yamlparse import NULL_TAG

__all__ = ["Reader", "Field"]

_TRUE = frozenset({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
_FALSE = frozenset({"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
_OCTAL = re.compile(r"[-+]?0[0-7]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_SPECIAL_FLOATS = {".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "+.inf": math.inf,
                   "+.Inf": math.inf, "+.INF": math.inf, "-.inf": -math.inf,
                   "-.Inf": -math.inf, "-.INF": -math.inf, ".nan": math.nan,
                   ".NaN": math.nan, ".NAN": math.nan}
_UINT64_MAX = 2**64 - 1
_ALIAS_BUDGET = 100_000
"""Re-visits of shared (aliased) nodes allowed: enough for any real config, and a stop for
documents that expand exponentially through nested aliases."""


def _plain(node: ScalarNode) -> bool:
    """Unquoted (libyaml marks a plain scalar with style "", pure PyYAML with None)."""
    return not node.style


def _number(node: ScalarNode) -> int | float | None:
    """A plain scalar read as yaml.v2 reads numbers (underscores ignored, 0x/0o/0b and a
    leading 0 for octal), or None if it is not one."""
    text = str(node.value).replace("_", "")
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    if _OCTAL.fullmatch(text):
        return int(text, 8)
    try:
        return int(text, 0)
    except ValueError:
        pass
    return float(text) if _FLOAT.fullmatch(text) else None


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


def _describe(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return f"{node.value!r}"


@dataclass(frozen=True, slots=True)
class Field:
    """A value in the document: its node and where it sits."""

    node: Node
    location: str


class Reader:
    """Typed access to document nodes; problems are collected, not raised.

    Decoding goes on after a problem so that one run reports every mistake in the document;
    a field that cannot be read gets its default.
    """

    def __init__(self, loader: Any, text: str) -> None:
        self._loader = loader
        self.errors: list[ConfigError] = []
        self.lines: dict[str, int] = {}
        self._seen: set[int] = set()
        self._revisits = 0
        # Aliases need anchors and merges need `<<`: most configs have neither, and skipping
        # their bookkeeping saves a good part of the time of a large load.
        self._anchors = "&" in text
        self._merges = "<<" in text

    def error(self, location: str, reason: str, node: Node | None = None) -> None:
        line = _line(node) if node is not None else self.lines.get(location)
        self.errors.append(ConfigError(reason, location, line))

    def _enter(self, node: Node) -> None:
        """Count re-visits of aliased nodes (an alias bomb stops here) and apply merge keys."""
        if self._anchors:
            key = id(node)
            if key in self._seen:
                self._revisits += 1
                if self._revisits > _ALIAS_BUDGET:
                    raise ConfigError("the document repeats aliased content too often "
                                      "(an alias bomb?)", "", _line(node))
            else:
                self._seen.add(key)
        if self._merges and isinstance(node, MappingNode):
            self._loader.flatten_mapping(node)

    @staticmethod
    def is_null(node: Node | None) -> bool:
        return node is None or (isinstance(node, ScalarNode) and node.tag == NULL_TAG)

    def fields(self, node: Node | None, location: str, what: str,
               known: tuple[str, ...]) -> dict[str, Field] | None:
        """The keys of a mapping that stands for a struct (`what`), or None if it is not one.

        A null value is an empty struct, as in yaml.v2.
        """
        if self.is_null(node):
            return {}
        assert node is not None
        if not isinstance(node, MappingNode):
            self.error(location, f"{what} must be a mapping of keys "
                       f"({', '.join(known)}), got {_describe(node)}", node)
            return None
        self._enter(node)
        found: dict[str, Field] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, ScalarNode) else None
            where = f"{location}.{key}" if location else str(key)
            if key not in known:
                self.error(where if key is not None else location,
                           f"unknown key {key!r} in {what} (field not found); {what} takes: "
                           f"{', '.join(known)}", key_node)
                continue
            assert key is not None
            if key in found:
                self.error(where, f"key {key!r} is set twice in {what} (first at line "
                           f"{self.lines.get(where)})", key_node)
                continue
            self.lines[where] = _line(value_node)
            found[key] = Field(value_node, where)
        return found

    def items(self, field: Field | None, what: str) -> Iterator[Field]:
        """The entries of a list (none for null or a value that is not a list)."""
        if field is None or self.is_null(field.node):
            return
        if not isinstance(field.node, SequenceNode):
            self.error(field.location, f"{what} must be a list, got {_describe(field.node)}",
                       field.node)
            return
        self._enter(field.node)
        for index, node in enumerate(field.node.value):
            where = f"{field.location}[{index}]"
            self.lines[where] = _line(node)
            yield Field(node, where)

    def text(self, field: Field | None, what: str) -> str:
        """Any scalar as written; null is the empty text."""
        if field is None or self.is_null(field.node):
            return ""
        if isinstance(field.node, ScalarNode):
            return str(field.node.value)
        self.error(field.location, f"{what} must be a single value, got "
                   f"{_describe(field.node)}", field.node)
        return ""

    def optional_text(self, field: Field | None, what: str) -> str | None:
        return None if field is None or self.is_null(field.node) else self.text(field, what)

    def names(self, field: Field | None, what: str) -> tuple[str, ...]:
        """A list of names (users, groups), each any scalar as written."""
        return tuple(self.text(item, f"each of {what}") for item in self.items(field, what))

    def flag(self, field: Field | None, what: str) -> bool | None:
        """A boolean: only a plain YAML 1.1 truth word counts (`"true"` in quotes does not)."""
        if field is None or self.is_null(field.node):
            return None
        node = field.node
        if isinstance(node, ScalarNode) and _plain(node):
            if node.value in _TRUE:
                return True
            if node.value in _FALSE:
                return False
        self.error(field.location, f"{what} must be true or false, got {_describe(node)}",
                   node)
        return None

    def count(self, field: Field | None, what: str) -> int:
        """A whole number from 0 to 2^64-1 (YuniKorn's uint64); a float only if whole."""
        if field is None or self.is_null(field.node):
            return 0
        node = field.node
        value = _number(node) if isinstance(node, ScalarNode) and _plain(node) else None
        if isinstance(value, float):
            value = int(value) if value.is_integer() else None
        if value is not None and 0 <= value <= _UINT64_MAX:
            return value
        self.error(field.location, f"{what} must be a whole number from 0 to {_UINT64_MAX}, "
                   f"got {_describe(node)}", node)
        return 0

    def number(self, field: Field, what: str) -> float | None:
        """A plain number (YuniKorn's float64)."""
        node = field.node
        value = _number(node) if isinstance(node, ScalarNode) and _plain(node) else None
        if value is not None:
            return float(value)
        self.error(field.location, f"{what} must be a number, got {_describe(node)}", node)
        return None

    def pairs(self, field: Field | None, what: str) -> Iterator[tuple[str, Field]]:
        """The `name: value` entries of a mapping keyed by free names (resources, properties).

        Nothing for an absent or null mapping; repeated names are reported and skipped.
        """
        if field is None or self.is_null(field.node):
            return
        node = field.node
        if not isinstance(node, MappingNode):
            self.error(field.location, f"{what} must be a mapping of names to values, got "
                       f"{_describe(node)}", node)
            return
        self._enter(node)
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                self.error(field.location, f"{what} keys must be names, got "
                           f"{_describe(key_node)}", key_node)
                continue
            key = str(key_node.value)
            where = f"{field.location}.{key}"
            if key in seen:
                self.error(where, f"{key!r} is set twice in {what}", key_node)
                continue
            seen.add(key)
            self.lines[where] = _line(value_node)
            yield key, Field(value_node, where)

    def text_map(self, field: Field | None, what: str) -> dict[str, str] | None:
        """A `name: value` mapping of scalars; None when absent or null (YuniKorn's nil map)."""
        if field is None or self.is_null(field.node):
            return None
        return {key: self.text(value, f"{what} value of {key!r}")
                for key, value in self.pairs(field, what)}
