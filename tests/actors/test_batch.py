"""The batch API: per-item atomic semantics, per-user order, all-or-nothing validation."""

from __future__ import annotations

import random
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quotactor import InvalidRequest, UsageDecrease, UsageIncrease, UserGroup
from quotactor.core.limits import LimitEntry as L
from quotactor.core.limits import LimitTable
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.reference import ReferenceTracking
from quotactor.core.resources import Resource
from quotactor.ugm import UserGroupManager

USER_LIMITS = LimitTable({
    "root": [L(users=("*",), max_resources={"m": 12}, max_applications=2),
             L(groups=("g0", "g1"), max_applications=1000)],
    "root.a": [L(users=("u1",), max_resources={"m": 5})],
})
USERS = [UserGroup("u0", ["g0"]), UserGroup("u1", ["g1", "g0"]), UserGroup("u2")]

change = st.builds(
    lambda inc, q, app, user, m, rm: (
        UsageIncrease(q, f"{user.user}-{app}", {"m": m}, user) if inc
        else UsageDecrease(q, f"{user.user}-{app}", {"m": m}, user, rm)
    ),
    st.booleans(), st.sampled_from(["root.a", "root.b", "root"]),
    st.sampled_from(["a1", "a2", "a3"]), st.sampled_from(USERS), st.integers(0, 6),
    st.booleans(),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(change, max_size=40))
def test_a_batch_gives_the_answers_of_the_same_calls_made_one_by_one(changes) -> None:
    """Application ids are unique per user here, as in a partition: items of different users
    may then interleave in any order without changing the outcome."""
    ref = ReferenceTracking(USER_LIMITS)
    want = []
    for c in changes:
        parts = parse_queue_path(c.queue_path)
        if isinstance(c, UsageIncrease):
            want.append(ref.increase(parts, c.application_id, Resource(c.usage), c.user) is None)
        else:
            ref.decrease(parts, c.application_id, Resource(c.usage), c.user, c.remove_app)
            want.append(None)
    with UserGroupManager.start(USER_LIMITS, timeout=20.0) as ugm:
        got = [None if r is None else r.ok for r in ugm.apply_batch(changes)]
        assert got == want
        assert ugm.users_usage() == ref.users_usage()
        assert ugm.groups_usage() == ref.groups_usage()


def test_one_invalid_item_rejects_the_whole_batch(ugm: UserGroupManager) -> None:
    good = UsageIncrease("root.a", "1", {"m": 1}, UserGroup("u"))
    for bad in (
        UsageIncrease("root..a", "1", {"m": 1}, UserGroup("u")),
        UsageIncrease("root.a", "", {"m": 1}, UserGroup("u")),
        UsageDecrease("root.a", "1", {"m": -1}, UserGroup("u")),
        ("root.a", "1", {"m": 1}, UserGroup("u")),
    ):
        with pytest.raises(InvalidRequest):
            ugm.apply_batch([good, bad])  # type: ignore[list-item]
    assert ugm.users_usage() == []
    assert ugm.apply_batch([]) == []


@pytest.mark.timeout(120)
def test_concurrent_batches_keep_limits_and_balance(start_ugm, run_concurrently) -> None:
    table = LimitTable({
        "root": [L(users=("*",), max_resources={"m": 40}),
                 L(groups=("g0", "g1"), max_resources={"m": 100}, max_applications=30)],
        "root.a": [L(users=("*",), max_applications=4)],
    })
    ugm = start_ugm(table)
    users = [UserGroup(f"u{i}", [f"g{i % 2}"]) for i in range(10)]
    held: list[dict[str, int]] = [{} for _ in range(6)]

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[UsageIncrease] = []
        for _ in range(40):
            batch: list[UsageIncrease | UsageDecrease] = []
            releasing = [mine.pop(rng.randrange(len(mine))) for _ in range(min(len(mine), 3))]
            batch += [UsageDecrease(c.queue_path, c.application_id, c.usage, c.user, True)
                      for c in releasing]
            adding = [UsageIncrease(rng.choice(["root.a", "root.b"]), f"{seed}-{rng.random()}",
                                    {"m": rng.randint(1, 9)}, rng.choice(users))
                      for _ in range(5)]
            results = ugm.apply_batch(batch + adding)
            for c in releasing:
                held[seed][c.user.user] -= c.usage["m"]
            for c, result in zip(adding, results[len(releasing):], strict=True):
                if result is not None and result.ok:
                    mine.append(c)
                    held[seed][c.user.user] = held[seed].get(c.user.user, 0) + c.usage["m"]

    run_concurrently([partial(worker, s) for s in range(6)])
    for user in users:
        want = sum(h.get(user.user, 0) for h in held)
        assert (ugm.get_user_resources(user.user) or {}).get("m", 0) == want
        assert want <= 40
    for group in ("g0", "g1"):
        usage = ugm.get_group_resources(group) or {}
        assert usage.get("m", 0) <= 100
    assert ugm.stats()["inflight"] == 0
