"""A short, deterministic tour: a few users and groups under limits, printed as REST JSON."""

from __future__ import annotations

from typing import Any

from quotactor.core.identity import UserGroup
from quotactor.ugm import UserGroupManager

TOUR_CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        limits:
          - limit: everyone
            users: ["*"]
            maxapplications: 4
        queues:
          - name: analytics
            limits:
              - limit: data team
                groups: [data]
                maxresources: {memory: 64Gi, vcore: "32"}
          - name: batch
            limits:
              - limit: sue
                users: [sue]
                maxresources: {memory: 16Gi}
                maxapplications: 2
"""


def run_tour() -> dict[str, Any]:
    """Track a handful of applications, one of which a limit refuses, and report the state."""
    sue = UserGroup("sue", ["data"])
    bob = UserGroup("bob", ["data", "ops"])
    gib = 2**30
    steps = [
        ("root.analytics", "app-1", {"memory": 8 * gib, "vcore": 4000}, bob),
        ("root.analytics", "app-2", {"memory": 16 * gib, "vcore": 8000}, sue),
        ("root.batch", "app-3", {"memory": 12 * gib, "vcore": 2000}, sue),
        ("root.batch", "app-4", {"memory": 8 * gib, "vcore": 2000}, sue),
    ]
    decisions = []
    with UserGroupManager.start(TOUR_CONFIG) as ugm:
        for queue, app, usage, user in steps:
            decision = ugm.decide_increase(queue, app, usage, user)
            decisions.append({
                "queue": queue, "application": app, "user": user.user, "accepted": decision.ok,
                **({"reason": str(decision.refusal)} if not decision.ok else {}),
            })
        return {
            "decisions": decisions,
            "users": ugm.users_usage(),
            "groups": ugm.groups_usage(),
            "headroom": {"sue@root.batch": ugm.headroom("root.batch", "app-5", sue)},
        }
