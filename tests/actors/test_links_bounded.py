"""A user who is never idle: its applications' group links stay bounded (invariant 13).

Eight threads keep calls of one user in flight for the whole test, starting applications
(many refused by the user's `maxApplications`), removing them and changing the usage of
those that run. A link whose items are all handled and whose application does not run must
go then and there, not at a moment when nothing of the user is in flight (there is none).
"""

from __future__ import annotations

import random
from functools import partial
from typing import Any

import pytest

from quotactor import UsageDecrease, UsageIncrease, UserGroup
from quotactor.core.limits import LimitEntry, LimitTable

SUE = UserGroup("sue", ["dev"])
THREADS = 8
STEPS = 700
MAX_APPS = 12
TABLE = LimitTable({"root": [
    LimitEntry(users=("sue",), max_applications=MAX_APPS),
    LimitEntry(groups=("dev",), max_applications=10_000),
]})
BOUND = MAX_APPS + THREADS
"""Links a sample may see: one per running application, and one per call in flight (each
thread has at most one, and the sampling thread none while it samples)."""


def _worker(ugm: Any, seed: int, batched: bool) -> tuple[dict[str, int], int]:
    """One thread's calls: its anchor application (started before) runs throughout, so the
    user never empties; the others start, change and go. Returns the usage of its live
    applications by id and the most links a sample saw."""
    rng = random.Random(seed)
    anchor = f"anchor-{seed}"
    live = {anchor: 1}
    most = 0
    for step in range(STEPS):
        app = f"t{seed}-{step}"
        usage = rng.randint(1, 5)
        if batched:
            [decision, _] = ugm.apply_batch([
                UsageIncrease("root.a", app, {"m": usage}, SUE),
                UsageIncrease("root.a", anchor, {"m": 1}, SUE)])
            live[anchor] += 1
            accepted = decision.ok
        else:
            accepted = ugm.increase_tracked_resource("root.a", app, {"m": usage}, SUE)
        if accepted:
            live[app] = usage
        others = [name for name in live if name != anchor]
        if others and rng.random() < 0.6:
            gone = rng.choice(others)
            if batched:
                ugm.apply_batch([
                    UsageDecrease("root.a", gone, {"m": live.pop(gone)}, SUE, remove_app=True),
                    UsageDecrease("root.a", anchor, {"m": 1}, SUE)])
                live[anchor] -= 1
            else:
                ugm.decrease_tracked_resource("root.a", gone, {"m": live.pop(gone)}, SUE,
                                              remove_app=True)
        elif rng.random() < 0.5:  # a running application's change (the known-user path)
            ugm.increase_tracked_resource("root.a", anchor, {"m": 2}, SUE)
            ugm.decrease_tracked_resource("root.a", anchor, {"m": 2}, SUE)
        if step % 50 == 0:
            most = max(most, ugm.stats()["links"])
    return live, most


@pytest.mark.timeout(120)
@pytest.mark.parametrize("batched", [False, True], ids=["single", "batch"])
def test_a_never_idle_user_keeps_its_links_bounded_and_its_usage_exact(
    start_ugm: Any, run_concurrently: Any, shaken: None, batched: bool,
) -> None:
    ugm = start_ugm(TABLE)
    for seed in range(THREADS):
        assert ugm.increase_tracked_resource("root.a", f"anchor-{seed}", {"m": 1}, SUE)
    results = run_concurrently([partial(_worker, ugm, seed, batched)
                                for seed in range(THREADS)])
    live = {app: usage for part, _ in results for app, usage in part.items()}
    most = max(seen for _, seen in results)
    assert most <= BOUND, f"{most} links with at most {BOUND} applications running or in flight"
    stats = ugm.stats()
    assert stats["inflight"] == 0
    assert stats["links"] == len(live)  # nothing in flight: the running applications' only
    total = sum(live.values())
    assert ugm.get_user_resources("sue") == {"m": total}
    assert ugm.get_group_resources("dev") == {"m": total}
    [snapshot] = ugm.users_usage()
    assert set(snapshot["queues"]["runningApplications"]) == set(live)
    assert snapshot["groups"] == dict.fromkeys(live, "dev")
