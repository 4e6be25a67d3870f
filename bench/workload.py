"""The benchmark workload: users, groups, a queue tree of depth 4, limits on several levels."""

from __future__ import annotations

import random
from dataclasses import dataclass

from quotactor.core.identity import UserGroup
from quotactor.core.limits import LimitEntry, LimitTable


@dataclass(frozen=True)
class Workload:
    users: list[UserGroup]
    leaves: list[str]
    table: LimitTable


def make_workload(n_users: int = 1000, n_groups: int = 100, seed: int = 1) -> Workload:
    rng = random.Random(seed)
    groups = [f"g{i}" for i in range(n_groups)]
    users = [UserGroup(f"user{i}", rng.sample(groups, rng.randint(1, 3))) for i in range(n_users)]
    leaves = [f"root.d{a}.t{b}.q{c}" for a in range(4) for b in range(4) for c in range(4)]
    entries: dict[str, list[LimitEntry]] = {
        "root": [
            LimitEntry(users=("*",), max_resources={"memory": 64 * 2**30}, max_applications=40),
            LimitEntry(groups=tuple(groups[:10]), max_resources={"memory": 512 * 2**30}),
            LimitEntry(groups=("*",), max_applications=1_000_000),
        ],
    }
    for a in range(4):
        entries[f"root.d{a}"] = [
            LimitEntry(groups=tuple(groups[10 + a * 10: 20 + a * 10]),
                       max_resources={"memory": 128 * 2**30, "vcore": 200_000}),
        ]
        for b in range(4):
            entries[f"root.d{a}.t{b}"] = [
                LimitEntry(users=tuple(f"user{i}" for i in range(a * 40 + b * 10,
                                                                   a * 40 + b * 10 + 10)),
                           max_resources={"memory": 8 * 2**30}, max_applications=8),
                LimitEntry(users=("*",), max_resources={"memory": 32 * 2**30}),
            ]
    return Workload(users, leaves, LimitTable(entries))


def operations(work: Workload, count: int, seed: int) -> list[tuple[str, str, dict[str, int],
                                                                   UserGroup]]:
    """(queue, app, usage, user) increases; each is followed by its matching decrease."""
    rng = random.Random(seed)
    return [
        (rng.choice(work.leaves), f"app-{seed}-{i}",
         {"memory": rng.randint(1, 12) * 2**30, "vcore": rng.randint(1, 8) * 1000},
         rng.choice(work.users))
        for i in range(count)
    ]
