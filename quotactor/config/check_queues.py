"""Queue rules: names, ACLs, limits per queue, resources and maxapplications down the tree."""

from __future__ import annotations

from quotactor.config.check_limits import check_queue_limits
from quotactor.config.findings import Findings
from quotactor.config.model import QueueConfig
from quotactor.config.quantities import EMPTY_QUANTITIES, Quantities
from quotactor.core.identity import WILDCARD
from quotactor.core.queue_path import QUEUE_NAME, ROOT

__all__ = ["check_tree", "check_resources", "check_max_applications"]


def check_tree(root: QueueConfig, out: Findings) -> None:
    """Per queue, parents first: ACLs, then its limits, then its children's names."""
    _check_queue(root, ROOT, out)


def _check_queue(queue: QueueConfig, path: str, out: Findings) -> None:
    for key, acl in (("adminacl", queue.admin_acl), ("submitacl", queue.submit_acl)):
        _check_acl(acl, f"{queue.location}.{key}", out)
    template = queue.child_template
    if template is not None:
        for kind in ("guaranteed", "max"):
            out.quantities_ok(f"{template.location}.resources.{kind}")
    check_queue_limits(queue, path, out)
    seen: dict[str, QueueConfig] = {}
    for child in queue.queues:
        where = f"{child.location}.name"
        if not QUEUE_NAME.match(child.name):
            out.add(where, f"invalid queue name '{child.name}' under {path}: max 64 characters "
                    "consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' "
                    "allowed")
            continue
        first = seen.setdefault(child.name.lower(), child)
        if first is not child:
            out.add(where, f"duplicate child name found with name '{child.name}' under {path}"
                    f" (queue names ignore case; the first is {first.location})")
    for child in queue.queues:
        _check_queue(child, f"{path}.{child.name}", out)


def _check_acl(acl: str | None, where: str, out: Findings) -> None:
    """An ACL is `*`, or users and groups: `user1,user2 group1,group2` (one space at most)."""
    text = (acl or "").strip()
    if text and text != WILDCARD and len(text.split()) > 2:
        out.add(where, f"multiple spaces found in ACL: '{text}' (an ACL is '*' or "
                "'user1,user2 group1,group2', with no space inside either list)")


def check_resources(root: QueueConfig, out: Findings) -> None:
    """Guaranteed within max, max within every ancestor's max, children's guaranteed sum
    within the parent's guaranteed and max (YuniKorn's `checkQueueResource`)."""
    _resources(root, ROOT, None, out)


def _resources(queue: QueueConfig, path: str, parent_max: Quantities | None,
               out: Findings) -> Quantities:
    """The guaranteed resources `queue` claims from its parent."""
    at = f"{queue.location}.resources"
    g_ok = out.quantities_ok(f"{at}.guaranteed")
    m_ok = out.quantities_ok(f"{at}.max")
    guaranteed, maximum = queue.guaranteed, queue.max_resources
    if g_ok and m_ok and (over := maximum.exceeded_by(guaranteed)):
        out.add(f"{at}.guaranteed",
                f"guaranteed resource {guaranteed} is larger than maximum resource {maximum} "
                f"for queue {path} (on {', '.join(over)})")
    if m_ok and parent_max is not None and (over := parent_max.exceeded_by(maximum)):
        out.add(f"{at}.max",
                f"max resource of parent {parent_max} is smaller than maximum resource "
                f"{maximum} for queue {path} (on {', '.join(over)}; a queue's max must fit in "
                "the max of every queue above it)")
    effective = maximum.min_with(parent_max)
    children = EMPTY_QUANTITIES
    for child in queue.queues:
        children = children + _resources(child, f"{path}.{child.name}", effective, out)
    if g_ok and (over := guaranteed.exceeded_by(children)):
        out.add(f"{at}.guaranteed",
                f"guaranteed resource of parent {guaranteed} is smaller than sum of guaranteed "
                f"resources {children} of the children for queue {path} "
                f"(on {', '.join(over)})")
    if over := effective.exceeded_by(children):
        out.add(f"{at}.max",
                f"max resource {effective} is smaller than sum of guaranteed resources "
                f"{children} of the children for queue {path} (on {', '.join(over)})")
    return children if guaranteed.is_zero() else guaranteed


def check_max_applications(root: QueueConfig, out: Findings) -> None:
    """Once a queue limits its applications, every child must limit them too, no higher."""
    _max_applications(root, ROOT, out)


def _max_applications(queue: QueueConfig, path: str, out: Findings) -> None:
    limit = queue.max_applications
    for child in queue.queues:
        child_path = f"{path}.{child.name}"
        where = f"{child.location}.maxapplications"
        if limit and child.max_applications == 0:
            out.add(where, "maxApplications is either undefined or zero, which is not allowed "
                    f"when parent queue's maxApplications is defined: {child_path} needs "
                    f"maxapplications from 1 to {limit}, the maxapplications of {path}")
        elif limit and child.max_applications > limit:
            out.add(where, "parent maxApplications must be larger than child maxApplications: "
                    f"{child_path} sets {child.max_applications} but {path} allows {limit}")
        _max_applications(child, child_path, out)
