"""The node set's index of nodes with room and its summed free room, against a plain scan."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from quotactor.core.resources import Resource
from quotactor.scheduler.booking import whole
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.node import Node, NodeSet, NodeSortPolicy

ONE = Resource({"vcore": 1000})


def _take(nodes: NodeSet, node: Node, key: str, resource: Resource) -> None:
    node.add(Allocation(key, "app", "default", node.node_id, resource))
    nodes.changed(node)


def _give_back(nodes: NodeSet, node: Node, key: str) -> None:
    node.remove("app", key)
    nodes.changed(node)
    nodes.freed()


def _first_fit(nodes: NodeSet, resource: Resource) -> Node | None:
    """What `find_fit` promises, by a pass over every node in sorting order."""
    for node in nodes.ordered():
        if node.schedulable and not nodes.is_reserved(node.node_id) and node.fits(resource):
            return node
    return None


def _room(nodes: NodeSet, owner: str = "") -> Resource:
    """What `free_room` promises, summed over every node."""
    room: dict[str, int] = {}
    for node_id, node in nodes.nodes.items():
        holder = nodes.reserved.get(node_id)
        if node.schedulable and node_id not in nodes.pinned \
                and (holder is None or holder[0] == owner):
            for name, quantity in node.available.items():
                if quantity > 0:
                    room[name] = room.get(name, 0) + quantity
    return Resource(room)


class _CountingNodes(dict[str, Node]):
    """The node set's node table, counting the nodes looked up."""

    looked_up = 0

    def __getitem__(self, node_id: str) -> Node:
        self.looked_up += 1
        return super().__getitem__(node_id)


def test_a_fit_among_full_unit_nodes_skips_the_full_ones() -> None:
    nodes = NodeSet("binpacking")
    for index in range(1000):
        nodes.add(Node(f"n{index:04d}", ONE))
    for index in range(999):
        _take(nodes, nodes.nodes[f"n{index:04d}"], f"k{index}", ONE)
    counting = _CountingNodes(nodes.nodes)
    nodes.nodes = counting
    found = nodes.find_fit(ONE)
    assert found is not None and found.node_id == "n0999"
    assert counting.looked_up == 1


def test_a_node_made_unschedulable_leaves_the_free_room_and_comes_back() -> None:
    nodes = NodeSet()
    for name in ("a", "b"):
        nodes.add(Node(name, {"vcore": 4000}))
    _take(nodes, nodes.nodes["a"], "k", ONE)
    assert nodes.free_room() == Resource({"vcore": 7000})
    nodes.nodes["b"].schedulable = False
    assert nodes.free_room() == Resource({"vcore": 3000})
    assert nodes.find_fit(Resource({"vcore": 4000})) is None
    nodes.nodes["b"].schedulable = True
    nodes.freed()
    assert nodes.free_room() == Resource({"vcore": 7000})
    found = nodes.find_fit(Resource({"vcore": 4000}))
    assert found is not None and found.node_id == "b"


def test_a_reserved_node_gives_free_room_to_its_holder_only_and_a_removed_one_none() -> None:
    nodes = NodeSet()
    for name in ("a", "b", "c"):
        nodes.add(Node(name, {"vcore": 2000, "memory": 10}))
    nodes.reserved["a"] = ("app", "k")
    nodes.pinned["b"] = {("app", "k2"): None}
    assert nodes.free_room() == Resource({"vcore": 2000, "memory": 10})
    assert nodes.free_room("app") == Resource({"vcore": 4000, "memory": 20})
    nodes.remove("c")
    assert nodes.free_room() == Resource()
    assert nodes.find_fit(ONE) is None


def test_a_node_shrunk_below_what_it_holds_gives_the_others_nothing_negative() -> None:
    nodes = NodeSet()
    nodes.add(Node("a", {"vcore": 4000}))
    nodes.add(Node("b", {"vcore": 1000}))
    _take(nodes, nodes.nodes["a"], "k", Resource({"vcore": 3000}))
    nodes.resized(nodes.nodes["a"], Resource({"vcore": 2000}))
    assert nodes.free_room() == Resource({"vcore": 1000})
    found = nodes.find_fit(ONE)
    assert found is not None and found.node_id == "b"


def test_an_ask_of_nothing_fits_a_full_node() -> None:
    nodes = NodeSet()
    nodes.add(Node("a", ONE))
    _take(nodes, nodes.nodes["a"], "k", ONE)
    found = nodes.find_fit(Resource())
    assert found is not None and found.node_id == "a"


_SIZES = [Resource({"vcore": 1000}), Resource({"vcore": 2000}),
          Resource({"vcore": 1000, "memory": 4}), Resource({"memory": 8})]
_CAPACITIES = [{"vcore": 1000}, {"vcore": 4000, "memory": 8}, {"vcore": 2000}]

_step = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(range(len(_CAPACITIES)))),
    st.tuples(st.just("take"), st.integers(0, 20), st.sampled_from(range(len(_SIZES)))),
    st.tuples(st.just("give"), st.integers(0, 40)),
    st.tuples(st.just("schedulable"), st.integers(0, 20), st.booleans()),
    st.tuples(st.just("reserve"), st.integers(0, 20)),
    st.tuples(st.just("unreserve"), st.integers(0, 20)),
    st.tuples(st.just("resize"), st.integers(0, 20), st.sampled_from(range(len(_CAPACITIES)))),
    st.tuples(st.just("remove"), st.integers(0, 20)),
    st.tuples(st.just("policy"), st.sampled_from(["fair", "binpacking"])),
)


def _apply(nodes: NodeSet, step: tuple[Any, ...], held: list[tuple[str, str]],
           made: list[int]) -> None:
    kind = step[0]
    names = sorted(nodes.nodes)
    if kind == "add":
        made[0] += 1
        nodes.add(Node(f"n{made[0]:03d}", _CAPACITIES[step[1]]))
    elif kind == "policy":
        policy: NodeSortPolicy = step[1]
        nodes.set_policy(policy)
    elif not names:
        return
    elif kind == "take":
        node = nodes.nodes[names[step[1] % len(names)]]
        made[0] += 1
        _take(nodes, node, f"k{made[0]}", _SIZES[step[2]])
        held.append((node.node_id, f"k{made[0]}"))
    elif kind == "give":
        if held:
            node_id, key = held.pop(step[1] % len(held))
            _give_back(nodes, nodes.nodes[node_id], key)
    elif kind == "schedulable":
        nodes.nodes[names[step[1] % len(names)]].schedulable = step[2]
    elif kind == "reserve":
        nodes.reserved[names[step[1] % len(names)]] = ("app", "r")
    elif kind == "unreserve":
        nodes.reserved.pop(names[step[1] % len(names)], None)
    elif kind == "resize":
        node = nodes.nodes[names[step[1] % len(names)]]
        nodes.resized(node, Resource(_CAPACITIES[step[2]]))
    elif kind == "remove":
        node_id = names[step[1] % len(names)]
        nodes.remove(node_id)
        nodes.reserved.pop(node_id, None)
        held[:] = [(n, k) for n, k in held if n != node_id]


@settings(max_examples=150, deadline=None)
@given(st.lists(_step, max_size=60))
def test_the_index_answers_as_a_pass_over_every_node(steps: list[tuple[Any, ...]]) -> None:
    nodes = NodeSet()
    held: list[tuple[str, str]] = []
    made = [0]
    answers: dict[Any, list[int]] = {}
    for step in steps:
        _apply(nodes, step, held, made)
        nodes.freed()  # `find_fit` may remember a miss until capacity is freed
        assert nodes.free_room() == _room(nodes)
        assert nodes.free_room("app") == _room(nodes, "app")
        for size in [*_SIZES, Resource()]:
            assert nodes.find_fit(size) is _first_fit(nodes, size)
        for owner in ("", "app"):
            _check_room_for(nodes, owner)
            # an equal room state, whenever it comes back, means equal answers
            found = whole.room_for(nodes, [*_SIZES, Resource()], owner)
            assert answers.setdefault(whole.room_state(nodes, owner), found) == found


def _check_room_for(nodes: NodeSet, owner: str) -> None:
    """`room_for` counts exactly the asks of one size that `plan` can place at once."""
    rooms = whole.room_for(nodes, _SIZES, owner)
    for size, room in zip(_SIZES, rooms, strict=True):
        assert room == 0 or whole.plan(nodes, [size] * room, owner) is not None
        assert whole.plan(nodes, [size] * (room + 1), owner) is None
    [nothing] = whole.room_for(nodes, [Resource()], owner)
    assert nothing in (0, 1 << 30)
    assert (whole.plan(nodes, [Resource()] * 3, owner) is not None) == (nothing > 0)
