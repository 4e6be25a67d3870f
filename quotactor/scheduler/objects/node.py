"""Nodes and the ordered set the scheduler fits asks onto.

A node offers capacity; allocations take from it. The set keeps its nodes in the partition's
node sorting order (`fair`: least used first, `binpacking`: most used first, ties by node ID)
incrementally, so an allocation moves one node instead of re-sorting all of them. It also
remembers which ask sizes found no node: capacity only shrinks between two releases, so such a
size cannot fit until something is freed, and replaying a long trace with a queued backlog
must not scan every node for every waiting ask in every cycle.

Beside the sorting order the set keeps the nodes that have some room left, in the same order,
and the room of its schedulable nodes summed, both updated as a node changes: on a machine of
many small nodes (one per processor) most are full while jobs wait, and a fit is found among
those with room without passing over the full ones, whichever the sorting policy.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Literal

from quotactor.core.errors import InvalidRequest
from quotactor.core.resources import Resource, ResourceLike
from quotactor.scheduler.objects.allocation import Allocation

__all__ = ["NODE_SORT_POLICIES", "Node", "NodeSet", "NodeSortPolicy"]

NodeSortPolicy = Literal["fair", "binpacking"]
NODE_SORT_POLICIES: tuple[NodeSortPolicy, ...] = ("fair", "binpacking")


class Node:
    """A node's capacity, what is allocated on it, and whether new work may land there."""

    __slots__ = ("_schedulable", "allocated", "allocations", "attributes", "available",
                 "capacity", "member_of", "node_id")

    def __init__(self, node_id: str, capacity: ResourceLike, schedulable: bool = True,
                 attributes: Mapping[str, str] | None = None) -> None:
        if not isinstance(node_id, str) or not node_id:
            raise InvalidRequest(f"node id must be a non-empty string, got {node_id!r}")
        cap = Resource.of(capacity)
        if cap.has_negative():
            raise InvalidRequest(f"node {node_id} capacity cannot be negative: {cap}")
        self.node_id = node_id
        self.capacity = cap
        self.allocated = Resource()
        self.available = cap
        self.member_of: NodeSet | None = None
        """The set the node was added to, told when its schedulability changes."""
        self._schedulable = schedulable
        self.attributes: Mapping[str, str] = MappingProxyType(dict(attributes or {}))
        self.allocations: dict[tuple[str, str], Allocation] = {}
        """By (application ID, allocation key): keys are unique within an application."""

    @property
    def schedulable(self) -> bool:
        """Whether new work may land on the node."""
        return self._schedulable

    @schedulable.setter
    def schedulable(self, value: bool) -> None:
        if value != self._schedulable:
            self._schedulable = value
            if self.member_of is not None:
                self.member_of.changed(self)

    def fits(self, resource: Resource) -> bool:
        """Every resource the ask names is available here (a name the node lacks is 0)."""
        return resource.fits_within_strict(self.available)

    def add(self, allocation: Allocation) -> None:
        self.allocations[allocation.application_id, allocation.key] = allocation
        self.allocated = self.allocated + allocation.resource
        self.available = self.available - allocation.resource

    def remove(self, application_id: str, key: str) -> Allocation:
        allocation = self.allocations.pop((application_id, key))
        self.allocated = self.allocated - allocation.resource
        self.available = self.available + allocation.resource
        return allocation

    def set_capacity(self, capacity: Resource) -> None:
        self.capacity = capacity
        self.available = capacity - self.allocated

    def utilisation(self) -> float:
        """The mean share used over the resources the node offers (1.0 when it offers none)."""
        allocated = self.allocated
        total = 0.0
        offered = 0
        for name, quantity in self.capacity.items():
            if quantity > 0:
                total += allocated.get(name, 0) / quantity
                offered += 1
        return total / offered if offered else 1.0


class NodeSet:
    """The nodes of one partition in sorting order, with their total capacity."""

    def __init__(self, policy: NodeSortPolicy = "fair") -> None:
        self.nodes: dict[str, Node] = {}
        self.capacity = Resource()
        self.epoch = 0
        self._policy: NodeSortPolicy = policy
        self._order: list[tuple[float, str]] = []
        self._keys: dict[str, tuple[float, str]] = {}
        self._with_room: list[tuple[float, str]] = []
        """The keys of the nodes with some room left (a positive quantity available), in
        sorting order: the only nodes where an ask of a positive quantity can fit."""
        self._roomy: set[str] = set()
        """The IDs of the nodes in `_with_room`."""
        self._counted: dict[str, Resource | None] = {}
        """Per node, the room counted in `_room` (its positive quantities): what it had
        available when last seen, if schedulable then, else None."""
        self._room: dict[str, int] = {}
        self._rooms: dict[Resource, int] = {}
        """The distinct rooms counted in `_counted` that have a positive quantity, each with
        the number of nodes that have it: on identical nodes, a handful of entries."""
        self._unfit: set[Resource] = set()
        self.reserved: dict[str, tuple[str, str]] = {}
        """Node ID -> (application ID, ask key) of the reservation holding it (see
        `reservation`): a reserved node takes no other ask that is not pinned to it."""
        self.pinned: dict[str, dict[tuple[str, str], None]] = {}
        """Node ID -> the reservations of asks pinned to it (several may wait for one node,
        as daemon-set pods do; a node holds either these or one reservation above)."""

    def is_reserved(self, node_id: str) -> bool:
        """Whether any reservation holds the node (it takes no unpinned ask then)."""
        return node_id in self.reserved or node_id in self.pinned

    def has_unreserved_node(self) -> bool:
        """Whether some node could still take a reservation."""
        return len(self.reserved) + len(self.pinned) < len(self.nodes)

    @property
    def policy(self) -> NodeSortPolicy:
        return self._policy

    def set_policy(self, policy: NodeSortPolicy) -> None:
        if policy == self._policy:
            return
        self._policy = policy
        self._order = []
        self._with_room = []
        for node in self.nodes.values():
            self._keys[node.node_id] = key = self._key(node)
            insort(self._order, key)
            if node.node_id in self._roomy:
                insort(self._with_room, key)

    def _key(self, node: Node) -> tuple[float, str]:
        used = node.utilisation()
        return (used if self._policy == "fair" else -used, node.node_id)

    def add(self, node: Node) -> None:
        self.nodes[node.node_id] = node
        node.member_of = self
        self.capacity = self.capacity + node.capacity
        self._keys[node.node_id] = key = self._key(node)
        insort(self._order, key)
        self._counted[node.node_id] = None
        self._index(node, key, key)
        self.freed()

    def remove(self, node_id: str) -> Node:
        node = self.nodes.pop(node_id)
        node.member_of = None
        self.capacity = self.capacity - node.capacity
        key = self._keys.pop(node_id)
        del self._order[bisect_left(self._order, key)]
        if node_id in self._roomy:
            self._roomy.discard(node_id)
            del self._with_room[bisect_left(self._with_room, key)]
        self._count(self._counted.pop(node_id), None)
        return node

    def resized(self, node: Node, capacity: Resource) -> None:
        grew = not capacity.fits_within_strict(node.capacity)
        self.capacity = self.capacity - node.capacity + capacity
        node.set_capacity(capacity)
        self.changed(node)
        if grew:
            self.freed()

    def changed(self, node: Node) -> None:
        """Re-position `node` after its allocations, capacity or schedulability changed."""
        old = self._keys[node.node_id]
        new = self._key(node)
        if new != old:
            del self._order[bisect_left(self._order, old)]
            insort(self._order, new)
            self._keys[node.node_id] = new
        self._index(node, old, new)

    def _index(self, node: Node, old: tuple[float, str], new: tuple[float, str]) -> None:
        """Bring `node`'s place among the nodes with room, and its share of `_room`, up to
        date (its sorting key was `old` and is `new`)."""
        node_id = node.node_id
        available = node.available
        has_room = False
        for quantity in available.values():
            if quantity > 0:
                has_room = True
                break
        roomy = self._roomy
        had_room = node_id in roomy
        if had_room != has_room or old != new:
            with_room = self._with_room
            if had_room:
                del with_room[bisect_left(with_room, old)]
                roomy.discard(node_id)
            if has_room:
                insort(with_room, new)
                roomy.add(node_id)
        share = available if node._schedulable else None
        before = self._counted[node_id]
        if share is not before:
            if share is None or before is None or share != before:
                self._count(before, share)
            self._counted[node_id] = share

    def _count(self, before: Resource | None, share: Resource | None) -> None:
        """Move a node's counted room from `before` to `share` in `_room` and `_rooms`."""
        room = self._room
        rooms = self._rooms
        if before is not None:
            _add_to(room, before, -1)
            if _asks_some(before):
                left = rooms[before] - 1
                if left:
                    rooms[before] = left
                else:
                    del rooms[before]
        if share is not None:
            _add_to(room, share, 1)
            if _asks_some(share):
                rooms[share] = rooms.get(share, 0) + 1

    def free_room(self, owner: str = "") -> Resource:
        """The room left on the schedulable nodes that no reservation holds but perhaps one of
        application `owner`'s, summed (kept as nodes change: a cost in the number of
        reserved nodes, not of all nodes)."""
        room = dict(self._room)
        held = {node_id for node_id, (app_id, _) in self.reserved.items() if app_id != owner}
        for node_id in held.union(self.pinned):
            _add_to(room, self._counted.get(node_id), -1)
        return Resource({name: quantity for name, quantity in room.items() if quantity > 0})

    def rooms(self, owner: str = "") -> dict[Resource, int]:
        """The distinct rooms of the schedulable nodes with some room left that no reservation
        holds but perhaps one of application `owner`'s, each with how many nodes have it
        (a cost in the number of distinct rooms and of reserved nodes, not of all nodes)."""
        rooms = dict(self._rooms)
        held = {node_id for node_id, (app_id, _) in self.reserved.items() if app_id != owner}
        for node_id in held.union(self.pinned):
            share = self._counted.get(node_id)
            if share is not None and _asks_some(share):
                left = rooms[share] - 1
                if left:
                    rooms[share] = left
                else:
                    del rooms[share]
        return rooms

    def freed(self) -> None:
        """Free capacity may have grown somewhere: forget which sizes found no node."""
        self.epoch += 1
        self._unfit.clear()

    def ordered(self) -> Iterator[Node]:
        """Every node in sorting order (the order `find_fit` tries them in)."""
        nodes = self.nodes
        for _, node_id in self._order:
            yield nodes[node_id]

    def known_unfit(self, resource: Resource) -> bool:
        """Whether `resource` already found no node since capacity was last freed."""
        return resource in self._unfit

    def find_fit(self, resource: Resource, required_node: str | None = None) -> Node | None:
        """The first schedulable node in sorting order with room for `resource`, or None."""
        if required_node is not None:
            node = self.nodes.get(required_node)
            return node if node is not None and node.schedulable and node.fits(resource) \
                else None
        if resource in self._unfit:
            return None
        nodes = self.nodes
        reserved = self.reserved
        pinned = self.pinned
        candidates = self._with_room if _asks_some(resource) else self._order
        for _, node_id in candidates:
            node = nodes[node_id]
            if node.schedulable and resource.fits_within_strict(node.available) \
                    and node_id not in reserved and node_id not in pinned:
                return node
        self._unfit.add(resource)
        return None



def _asks_some(resource: Resource) -> bool:
    """Whether `resource` asks a positive quantity of something (then only a node with room
    can take it)."""
    return max(resource.values(), default=0) > 0


def _add_to(total: dict[str, int], resource: Resource | None, sign: int) -> None:
    """Add (`sign` 1) or subtract (-1) the positive quantities of `resource` to the per-name
    `total` in place (a node shrunk below what it holds has a negative room, which gives
    nothing to the others)."""
    if resource is not None:
        for name, quantity in resource.items():
            if quantity > 0:
                total[name] = total.get(name, 0) + sign * quantity
