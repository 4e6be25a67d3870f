"""Soak: users come and go for a while; the invariants must hold and memory must not grow.

    python bench/soak.py [--minutes 2]

Four callers open and close applications for a rotating population of users (each user's
last application ends, so trackers are retired and re-created all the time). At the end every
user's usage must equal what its callers still hold, no tracker may be left for a user holding
nothing, and the RSS after a second round is compared with the first (growth = a leak).
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections import Counter

from scale_bench import rss_mib
from workload import make_workload

from quotactor.ugm import UserGroupManager


def soak_round(ugm: UserGroupManager, seconds: float, seed: int) -> tuple[int, Counter[str]]:
    work = make_workload(n_users=5000, seed=seed)
    deadline = time.monotonic() + seconds
    held: list[Counter[str]] = [Counter() for _ in range(4)]
    ops = [0] * 4

    def run(t: int) -> None:
        rng = random.Random(seed * 10 + t)
        open_apps: list[tuple[str, str, dict[str, int], object]] = []
        while time.monotonic() < deadline:
            if open_apps and (len(open_apps) > 50 or rng.random() < 0.5):
                queue, app, usage, user = open_apps.pop(rng.randrange(len(open_apps)))
                ugm.decrease_tracked_resource(queue, app, usage, user, remove_app=True)
                held[t][user.user] -= usage["memory"]  # type: ignore[attr-defined]
            else:
                user = rng.choice(work.users)
                queue, app = rng.choice(work.leaves), f"s{seed}-{t}-{ops[t]}"
                usage = {"memory": rng.randint(1, 4) * 2**30}
                if ugm.increase_tracked_resource(queue, app, usage, user):
                    open_apps.append((queue, app, usage, user))
                    held[t][user.user] += usage["memory"]
            ops[t] += 1
        for queue, app, usage, user in open_apps:
            ugm.decrease_tracked_resource(queue, app, usage, user, remove_app=True)
            held[t][user.user] -= usage["memory"]  # type: ignore[attr-defined]

    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return sum(ops), sum(held, Counter())


def main(minutes: float) -> int:
    with UserGroupManager.start(make_workload().table, timeout=60.0) as ugm:
        rows = []
        for round_no in (1, 2):
            ops, held = soak_round(ugm, minutes * 30, seed=round_no)
            stats = ugm.stats()
            leftovers = [u for u in ugm.users_usage() if u["queues"].get("resourceUsage")]
            rows.append((round_no, ops, rss_mib(), stats, len(leftovers),
                         sum(v != 0 for v in held.values())))
        print("| round | operations | RSS MiB | live users | live groups | retired |"
              " users with usage left | ledger mismatches |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for round_no, ops, rss, stats, left, bad in rows:
            print(f"| {round_no} | {ops:,} | {rss:.0f} | {stats['users']} | {stats['groups']} |"
                  f" {stats['retired']:,} | {left} | {bad} |")
        growth = rows[1][2] - rows[0][2]
        print(f"\nRSS growth between rounds: {growth:+.1f} MiB")
        ok = all(r[3]["users"] == 0 and r[4] == 0 and r[5] == 0 for r in rows)
        print("invariants:", "hold" if ok else "BROKEN")
        return 0 if ok else 1


if __name__ == "__main__":
    minutes = float(sys.argv[sys.argv.index("--minutes") + 1]) if "--minutes" in sys.argv else 1.0
    sys.exit(main(minutes))
