"""The queue tree of one partition: built from configuration, grown by placement, pruned.

Configuration changes are applied to the live tree rather than by rebuilding it, so queues
keep their usage and applications across a reload: kept queues take their new settings, new
ones are added, and managed queues that disappeared start draining and are removed once empty.
Queues that placement rules created (unmanaged) go as soon as they hold nothing.
"""

from __future__ import annotations

from quotactor.core.queue_path import ROOT
from quotactor.scheduler.objects.queue import Queue
from quotactor.scheduler.objects.spec import QueueSpec
from quotactor.scheduler.placement.placement import PlacementError

__all__ = ["Hierarchy"]


class Hierarchy:
    """A partition's queues by path, rooted at `root`."""

    def __init__(self, spec: QueueSpec) -> None:
        self.root = Queue(ROOT, None, managed=True, is_parent=True)
        self.index: dict[str, Queue] = {ROOT: self.root}
        self.apply(spec)

    def get(self, path: str) -> Queue | None:
        return self.index.get(path)

    def apply(self, spec: QueueSpec) -> list[str]:
        """Bring the tree in line with `spec`; returns the paths that started draining."""
        draining: list[str] = []
        self._apply(self.root, spec, draining)
        self.root.is_parent = True
        for path in draining:
            queue = self.index.get(path)
            if queue is not None:
                self.prune(queue)
        return draining

    def _apply(self, queue: Queue, spec: QueueSpec, draining: list[str]) -> None:
        queue.apply_spec(spec)
        wanted = {child.name: child for child in spec.children}
        for name, child_spec in wanted.items():
            child = queue.children.get(name)
            if child is None:
                child = Queue(name, queue, managed=True)
                self.index[child.path] = child
            self._apply(child, child_spec, draining)
        for name, child in list(queue.children.items()):
            if name not in wanted and child.managed:
                self._drain(child, draining)
        queue.refresh_properties()

    def _drain(self, queue: Queue, draining: list[str]) -> None:
        for descendant in queue.walk():
            if descendant.status != "Draining":
                descendant.status = "Draining"
                draining.append(descendant.path)

    def create(self, path: str) -> Queue:
        """The leaf at `path`, creating it and any missing parents as unmanaged queues.

        Raises `PlacementError` when an existing queue on the way is a leaf or is draining.
        """
        parts = path.split(".")
        queue = self.root
        for depth in range(1, len(parts)):
            child = queue.children.get(parts[depth])
            if child is None:
                if queue.is_leaf and queue is not self.root:
                    raise PlacementError(f"cannot create {path}: {queue.path} is a leaf queue")
                if queue.status == "Draining":
                    raise PlacementError(f"cannot create {path}: {queue.path} is draining")
                template = queue.inherited_template()
                child = Queue(parts[depth], queue, managed=False,
                              is_parent=depth < len(parts) - 1)
                child.apply_template(template)
                self.index[child.path] = child
            queue = child
        return queue

    def prune(self, queue: Queue) -> list[str]:
        """Remove `queue` and then its ancestors while they are empty and unmanaged or draining.

        Returns the removed paths.
        """
        removed: list[str] = []
        current: Queue | None = queue
        while current is not None and current.parent is not None and current.is_empty() \
                and (not current.managed or current.status == "Draining"):
            parent = current.parent
            del parent.children[current.name]
            del self.index[current.path]
            removed.append(current.path)
            current = parent
        return removed
