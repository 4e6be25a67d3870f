"""Where a sweep parameter lands in the base config: a path into the document, or a `${name}`.

A path is the one the config validator prints in its errors
(`partitions[0].queues[0].queues[1].limits[0].maxresources.vcore`), so a reader can copy it
from an error message or count it off the YAML. Every path is checked against the base config
before anything runs: all steps but the last must exist, so a typo fails at once, naming the
parameter, instead of after an hour of replays.

Values keep the type of what they replace: a number bound where the base holds a string (a
quantity such as `vcore: "64"`) is written as a string. `null` removes a mapping key (no limit
of that kind), which is how "group cap 50 %, 75 % or none" is swept.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotactor.sweep.errors import SweepError

__all__ = ["Binding", "Scalar", "TEMPLATE", "apply_bindings", "parse_path", "template_names"]

Scalar = str | int | float | bool | None
Step = str | int
TEMPLATE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class Binding:
    """Parameter `name` bound at `path` (a tuple of keys and indices) or to template `template`."""

    name: str
    path: tuple[Step, ...] = ()
    template: str = ""

    def describe(self) -> str:
        return f"${{{self.template}}}" if self.template else format_path(self.path)


def parse_path(text: str, parameter: str) -> tuple[Step, ...]:
    """`a.b[0].c` -> ("a", "b", 0, "c"), `[1].spec` -> (1, "spec") (a base config that is a
    list: ElasticQuota documents, a forest of quota trees); a `SweepError` naming `parameter`
    if malformed."""
    steps: list[Step] = []
    position = 0
    while position < len(text):
        if text[position] == "." and steps and position + 1 < len(text):
            position += 1
        match = _STEP.match(text, position)
        if match is None:
            raise SweepError(f"parameter {parameter!r}: malformed path {text!r} "
                             f"at character {position + 1}")
        steps.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        position = match.end()
    if not steps:
        raise SweepError(f"parameter {parameter!r}: malformed path {text!r}")
    return tuple(steps)


def format_path(path: Sequence[Step]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def check_binding(document: Any, binding: Binding, values: Sequence[Scalar]) -> None:
    """Raise a `SweepError` naming the parameter when its path cannot take its values."""
    if binding.template:
        return
    parent = _parent(document, binding)
    last = binding.path[-1]
    if isinstance(parent, list):
        if not isinstance(last, int):
            raise _error(binding, f"{format_path(binding.path[:-1])} is a list: index it "
                         f"with [N], not .{last}")
        if last >= len(parent):
            raise _error(binding, f"no item {last} in a list of {len(parent)}")
        if None in values:
            raise _error(binding, "null cannot remove a list item (it would shift the others)")
        current = parent[last]
    elif isinstance(parent, dict):
        if not isinstance(last, str):
            raise _error(binding, f"[{last}] indexes a mapping, not a list")
        current = parent.get(last)
    else:
        raise _error(binding, f"{format_path(binding.path[:-1])} holds a value, not a mapping "
                     "or a list")
    if isinstance(current, dict | list):
        kind = "mapping" if isinstance(current, dict) else "list"
        raise _error(binding, f"the path ends at a {kind}; bind a value inside it")


def _parent(document: Any, binding: Binding) -> Any:
    node = document
    for depth, step in enumerate(binding.path[:-1]):
        where = format_path(binding.path[: depth + 1])
        if isinstance(step, int):
            if not isinstance(node, list):
                raise _error(binding, f"{where}: [{step}] indexes a list, found a "
                             f"{_kind(node)}")
            if step >= len(node):
                raise _error(binding, f"{where}: no item {step} in a list of {len(node)}")
        elif isinstance(node, list):
            raise _error(binding, f"{where}: {format_path(binding.path[:depth])} is a list: "
                         f"index it with [N], not .{step}")
        elif not isinstance(node, dict):
            raise _error(binding, f"{where}: no key {step!r}, found a {_kind(node)}")
        elif step not in node:
            known = ", ".join(sorted(map(str, node))) or "none"
            raise _error(binding, f"{where}: no key {step!r} (keys here: {known})")
        node = node[step]
    return node


def _kind(node: Any) -> str:
    return "mapping" if isinstance(node, dict) else "list" if isinstance(node, list) else \
        f"value {node!r}"


def _error(binding: Binding, reason: str) -> SweepError:
    return SweepError(f"parameter {binding.name!r}: path {format_path(binding.path)}: {reason}")


def template_names(document: Any) -> set[str]:
    """Every `${name}` used in the document's strings."""
    found: set[str] = set()
    if isinstance(document, dict):
        for value in document.values():
            found |= template_names(value)
    elif isinstance(document, list):
        for value in document:
            found |= template_names(value)
    elif isinstance(document, str):
        found.update(TEMPLATE.findall(document))
    return found


def apply_bindings(document: Any, bindings: Sequence[Binding],
                   values: Mapping[str, Scalar]) -> Any:
    """A copy of `document` with every binding set to its value in `values` (checked before)."""
    out = copy.deepcopy(document)
    templates = {b.template: values[b.name] for b in bindings if b.template}
    if templates:
        out = _substitute(out, templates)
    removals: list[Binding] = []
    for binding in bindings:
        if binding.template:
            continue
        value = values[binding.name]
        if value is None:
            removals.append(binding)
            continue
        parent: Any = _parent(out, binding)
        last = binding.path[-1]
        current = parent[last] if isinstance(last, int) else parent.get(last)
        parent[last] = _like(current, value)
    for binding in removals:
        try:
            parent = _parent(out, binding)
        except SweepError:
            continue  # an enclosing key was removed by another parameter
        if isinstance(parent, dict):
            parent.pop(binding.path[-1], None)
    return out


def _like(current: Any, value: Scalar) -> Scalar:
    """`value`, as a string when it replaces one (quantities are strings in YuniKorn YAML)."""
    if isinstance(current, str) and isinstance(value, int | float) \
            and not isinstance(value, bool):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return value


_MISSING = object()


def _substitute(node: Any, values: Mapping[str, Scalar]) -> Any:
    if isinstance(node, dict):
        out: dict[Any, Any] = {}
        for key, item in node.items():
            new = _substitute(item, values)
            if new is not _MISSING:
                out[key] = new
        return out
    if isinstance(node, list):
        return [new for new in (_substitute(item, values) for item in node)
                if new is not _MISSING]
    if isinstance(node, str):
        whole = TEMPLATE.fullmatch(node)
        if whole is not None and whole.group(1) in values:
            value = values[whole.group(1)]
            return _MISSING if value is None else value
        return TEMPLATE.sub(lambda m: _text(values[m.group(1)]) if m.group(1) in values
                            else m.group(0), node)
    return node


def _text(value: Scalar) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)
