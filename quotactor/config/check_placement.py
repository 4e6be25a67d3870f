"""Placement rule rules: syntax of names and filters, and the queues fixed rules point at.

YuniKorn's validator does not restrict rule names to the rules it implements (`user`, `fixed`,
`provided`, `tag`), only to identifiers; neither do we, so every config it accepts loads here.
What it does check is that the static start of each rule chain (the `fixed` parts) fits the
queue tree: a chain that ends there must land on a leaf, one that goes on to add queues must
pass through a parent, and queues that do not exist need `create: true`.
"""

from __future__ import annotations

import re
import warnings
from enum import Enum

from quotactor.config.findings import Findings
from quotactor.config.model import Filter, PartitionConfig, PlacementRule, QueueConfig
from quotactor.core.identity import GROUP_NAME, USER_NAME
from quotactor.core.queue_path import ROOT

__all__ = ["check_rules"]

_RULE_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9_]*$")
_REGEXP_CHARS = re.compile(r"[\^$*+?()\[{}|]")
_NOT_IN_GO = re.compile(r"\(\?<?[=!]|\\[1-9]")
"""Lookarounds and back references: Python accepts them, Go's RE2 (YuniKorn) does not."""
_FIXED = "fixed"
_DYNAMIC = "<dynamic>"


class _Fit(Enum):
    OK = "ok"
    MISSING = "missing"
    NOT_LEAF = "not a leaf"
    LEAF_BELOW = "leaf below"


def check_rules(partition: PartitionConfig, out: Findings) -> None:
    for rule in partition.placement_rules:
        _check_rule(rule, out)
    root = partition.root
    for number, rule in enumerate(partition.placement_rules):
        if root is not None:
            _check_target(number, rule, root, out)


def _check_rule(rule: PlacementRule, out: Findings) -> None:
    if not _RULE_NAME.match(rule.name):
        out.add(f"{rule.location}.name", f"invalid rule name '{rule.name}', a name must be a "
                "valid identifier (letters, digits and _, not starting with a digit)")
    if rule.parent is not None:
        _check_rule(rule.parent, out)
    if rule.filter is not None:
        _check_filter(rule.filter, out)


def _check_filter(rule_filter: Filter, out: Findings) -> None:
    kind = rule_filter.type
    if kind and kind.lower() not in ("allow", "deny"):
        out.add(f"{rule_filter.location}.type", f"invalid rule filter type {kind}, filter type "
                "must be either '', allow or deny")
    for what, names, syntax in (("user", rule_filter.users, USER_NAME),
                                ("group", rule_filter.groups, GROUP_NAME)):
        if len(names) == 1 and not syntax.match(names[0]) and not _is_regexp(names[0]):
            out.add(f"{rule_filter.location}.{what}s[0]",
                    f"invalid rule filter {what} list is not a proper list or regexp: "
                    f"[{names[0]}] (a single entry is a {what} name or a regular expression)")


def _is_regexp(text: str) -> bool:
    """A regular expression YuniKorn would accept instead of a name: it must look like one."""
    if not _REGEXP_CHARS.search(text) or _NOT_IN_GO.search(text):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(text)
    except re.error:
        return False
    return True


def _static_path(rule: PlacementRule) -> tuple[str, str, bool, str | None]:
    """(static queue path, rule chain text, whether a dynamic rule follows, error)."""
    path, dynamic, chain = "", False, rule.chain()
    text = "->".join(r.name for r in chain)
    for part in chain:
        if dynamic:
            continue
        if part.name != _FIXED:
            path, dynamic = path or _DYNAMIC, True
        elif part.value.startswith(ROOT):
            if path:
                return path, text, dynamic, (
                    f"illegal fully qualified 'fixed' rule with value {part.value}: only the "
                    "first fixed rule of a chain may name a path from root")
            path = part.value
        else:
            path = f"{path or ROOT}.{part.value}"
    return path, text, dynamic, None


def _check_target(number: int, rule: PlacementRule, root: QueueConfig, out: Findings) -> None:
    path, chain, dynamic, error = _static_path(rule)
    where = rule.location
    if error is not None:
        out.add(where, error)
        return
    if not path.startswith(ROOT):
        return
    fit, leaf = _fit(path.lower().split("."), rule.create, dynamic, (root,), None)
    head = f"placement rule no. #{number} ({chain})"
    if fit is _Fit.MISSING:
        out.add(where, f"{head} references non-existing queues ({path}) and create is 'false'")
    elif fit is _Fit.LEAF_BELOW:
        out.add(where, f"{head} references non-existing queues ({path}) which cannot be "
                f"created because the last queue ({leaf}) in the hierarchy is a leaf")
    elif fit is _Fit.NOT_LEAF and dynamic:
        out.add(where, f"{head} references a queue ({path}) which is a leaf, but the rest of "
                "the chain places applications in queues below it: give it parent: true")
    elif fit is _Fit.NOT_LEAF:
        out.add(where, f"{head} references a queue ({path}) which is not a leaf: applications "
                "can only be placed in leaf queues")


def _fit(parts: list[str], create: bool, dynamic: bool, queues: tuple[QueueConfig, ...],
         parent: QueueConfig | None) -> tuple[_Fit, str]:
    """How the static path `parts` fits the configured queues (YuniKorn's rules)."""
    if not queues:
        if parent is not None and not parent.parent:
            return _Fit.LEAF_BELOW, parent.name
        return (_Fit.OK if create else _Fit.MISSING), ""
    queue = next((q for q in queues if q.name == parts[0]), None)
    if queue is None:
        return (_Fit.OK if create else _Fit.MISSING), ""
    if len(parts) == 1:
        wanted_parent = dynamic
        return (_Fit.OK if queue.parent == wanted_parent else _Fit.NOT_LEAF), ""
    return _fit(parts[1:], create, dynamic, queue.queues, queue)
