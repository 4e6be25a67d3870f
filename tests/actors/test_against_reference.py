"""The actor system against the single-threaded reference model, on random operation runs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from quotactor import UserGroup
from quotactor.core.limits import LimitEntry as L
from quotactor.core.limits import LimitTable
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.reference import ReferenceTracking
from quotactor.core.resources import Resource
from quotactor.ugm import UserGroupManager

TABLE = LimitTable({
    "root": [L(users=("u0",), max_resources={"m": 30}, max_applications=3),
             L(users=("*",), max_resources={"m": 20}),
             L(groups=("g0",), max_resources={"m": 40}),
             L(groups=("*",), max_applications=4)],
    "root.a": [L(groups=("g1",), max_resources={"m": 15, "v": 5}),
               L(users=("*",), max_applications=2)],
    "root.a.b": [L(users=("u1",), max_resources={"v": 3})],
})
SWITCHED = LimitTable({
    "root": [L(users=("*",), max_resources={"m": 20}), L(groups=("g2",), max_applications=3)],
    "root.a": [L(groups=("g0", "g1"), max_resources={"m": 25}),
               L(users=("*",), max_applications=2)],
})
"""Other groups chosen for the same queues: a switch tests which group a link keeps."""
USERS = [UserGroup("u0", ["g0", "g1"]), UserGroup("u1", ["g1"]), UserGroup("u2", []),
         UserGroup("u3", ["g2"])]
QUEUES = ["root", "root.a", "root.a.b", "root.c"]

op = st.tuples(
    st.sampled_from(["inc", "dec", "remove", "headroom", "canrun", "switch"]),
    st.sampled_from(QUEUES),
    st.sampled_from(["a1", "a2", "a3"]),
    st.sampled_from(USERS),
    st.dictionaries(st.sampled_from(["m", "v"]), st.integers(0, 9), max_size=2),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(op, max_size=30))
def test_every_answer_and_snapshot_matches_the_reference_model(ops) -> None:
    ref = ReferenceTracking(TABLE)
    with UserGroupManager.start(TABLE, timeout=20.0) as ugm:
        for kind, queue, app_name, user, usage in ops:
            app = app_name  # one id for several users: an application of each
            parts = parse_queue_path(queue)
            if kind == "switch":
                ref.table = SWITCHED if ref.table is TABLE else TABLE
                ugm.update_config(ref.table)
            elif kind == "inc":
                want = ref.increase(parts, app, Resource(usage), user) is None
                assert ugm.increase_tracked_resource(queue, app, usage, user) == want
            elif kind in ("dec", "remove"):
                ref.decrease(parts, app, Resource(usage), user, kind == "remove")
                ugm.decrease_tracked_resource(queue, app, usage, user, kind == "remove")
            elif kind == "headroom":
                assert ugm.headroom(queue, app, user) == ref.headroom(parts, app, user)
            else:
                assert ugm.can_run_app(queue, app, user) == ref.can_run_app(parts, app, user)
                assert ugm.app_refusal(queue, app, user) == ref.app_refusal(parts, app, user)
        assert ugm.users_usage() == ref.users_usage()
        assert ugm.groups_usage() == ref.groups_usage()
        assert ugm.stats()["users"] == len(ref.users)
        assert ugm.stats()["groups"] == len(ref.groups)
