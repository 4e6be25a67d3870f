"""Placing an all-or-nothing application's asks at once: a plan over the nodes, then a booking.

`plan` answers where every ask of a set could go at the same moment, without touching a node:
nodes are visited in the node set's sorting order (as `NodeSet.find_fit` visits them) and each
takes as many of the asks still unplaced as its free room holds, largest asks first. Asks of
the same size are counted, not tried one by one, so a plan costs one pass over the nodes times
the number of distinct sizes (a job's asks come in one or two sizes). First fit in sorting
order is not an optimal packing; it is the packing the per-ask path would make if nothing else
were placed in between, which is what keeps the two paths' answers alike.

`booking.allocate_all` then books a plan.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from quotactor.core.resources import Resource, ResourceLike
from quotactor.scheduler.objects.node import Node, NodeSet

__all__ = ["free_room", "plan", "room_for", "room_state"]


def _usable(nodes: NodeSet, node: Node, owner: str) -> bool:
    """Whether `node` may take asks of application `owner`: schedulable, and held by no
    reservation but perhaps one of `owner`'s own (made when it preempted for room there)."""
    if not node.schedulable or node.node_id in nodes.pinned:
        return False
    holder = nodes.reserved.get(node.node_id)
    return holder is None or holder[0] == owner


def free_room(nodes: NodeSet, owner: str = "") -> Resource:
    """The room left on the nodes application `owner` may use, summed: a set of asks whose
    total exceeds it cannot be placed (the converse needs `plan`). The node set keeps the sum
    (`NodeSet.free_room`), so this costs the reserved nodes, not all of them."""
    return nodes.free_room(owner)


def _how_many(size: Resource, room: ResourceLike) -> int:
    """How many asks of `size` fit in `room` (a large number for a size asking nothing; none
    where `room` is negative, on a node shrunk below what it holds)."""
    counts = [room.get(name, 0) // quantity for name, quantity in size.items() if quantity > 0]
    return max(0, min(counts)) if counts else 1 << 30


def room_for(nodes: NodeSet, sizes: Sequence[Resource], owner: str = "") -> list[int]:
    """For each of `sizes`, how many asks of it could be placed at once on the nodes
    application `owner` may use: `plan` places asks all of one size exactly when there are
    at most this many (a size asking nothing: a large number, or 0 with no usable node).
    The nodes' rooms are read once for all of `sizes`."""
    rooms: list[tuple[Resource, int]] | None = None
    free: dict[str, list[tuple[int, int]]] = {}
    """Per resource, the rooms that have some of it: (how much, how many nodes)."""
    found: list[int] = []
    for size in sizes:
        asked = [(name, quantity) for name, quantity in size.items() if quantity > 0]
        if not asked:
            usable = any(_usable(nodes, node, owner) for node in nodes.ordered())
            found.append(1 << 30 if usable else 0)
            continue
        if rooms is None:
            rooms = list(nodes.rooms(owner).items())
        if len(asked) == 1:  # most sizes ask one thing: one division per distinct room
            [(name, quantity)] = asked
            having = free.get(name)
            if having is None:
                having = free[name] = [(left, count) for room, count in rooms
                                       if (left := room.get(name, 0)) > 0]
            found.append(sum(left // quantity * count for left, count in having))
        else:
            found.append(sum(_how_many(size, room) * count for room, count in rooms))
    return found


def room_state(nodes: NodeSet, owner: str = "") -> Hashable:
    """What `room_for` answers depend on, for application `owner`: at two moments when this
    value is equal, `room_for` gives the same answer for every size (`plan`'s answer for
    asks of different sizes may still differ: it depends on the nodes one by one)."""
    rooms = nodes.rooms(owner)
    # a node with some room counted in `rooms` is usable; with none, a size asking nothing
    # still needs one
    usable = bool(rooms) or any(_usable(nodes, node, owner) for node in nodes.ordered())
    return frozenset(rooms.items()), usable


def plan(nodes: NodeSet, sizes: Sequence[Resource], owner: str = "") -> list[Node] | None:
    """A node for each of `sizes` (in their order) such that all fit at once on nodes that
    application `owner` may use, or None (at once when their total exceeds the free room)."""
    by_size: dict[Resource, list[int]] = {}
    for index, size in enumerate(sizes):
        by_size.setdefault(size, []).append(index)
    room_left = nodes.free_room(owner)
    for size, indices in by_size.items():  # all of them cannot fit in less room in all
        for name, quantity in size.items():
            if quantity * len(indices) > room_left.get(name, 0):
                return None
    order = sorted(by_size, key=lambda s: (-sum(s.values()), sorted(s.items())))
    left = {size: len(by_size[size]) for size in order}
    chosen: list[Node | None] = [None] * len(sizes)
    unplaced = len(sizes)
    for node in nodes.ordered():
        if not _usable(nodes, node, owner):
            continue
        room = dict(node.available.items())
        for size in order:
            want = left[size]
            if not want:
                continue
            take = min(want, _how_many(size, room))
            if not take:
                continue
            indices = by_size[size]
            done = len(indices) - want
            for index in indices[done:done + take]:
                chosen[index] = node
            left[size] = want - take
            unplaced -= take
            for name, quantity in size.items():
                room[name] = room.get(name, 0) - quantity * take
        if not unplaced:
            return [node for node in chosen if node is not None]
    return None
