"""Watching a config file by polling its content hash.

Polling works the same on every filesystem (network mounts and Kubernetes ConfigMap volumes,
whose atomic symlink swaps inotify reports poorly), and comparing a hash of the content, not
the mtime, ignores touches and catches edits within the same second.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path

from quotactor.logs import get_logger

__all__ = ["FileWatcher", "digest"]

log = get_logger()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileWatcher:
    """Calls `on_change(content)` from a polling thread whenever the file's content changes.

    `initial` is the content already acted upon, so the first poll does not report it again.
    A file that cannot be read (mid-replacement, deleted) is reported once and retried.
    """

    def __init__(
        self,
        path: Path,
        on_change: Callable[[bytes], None],
        interval: float,
        initial: bytes | None = None,
    ) -> None:
        if interval <= 0:
            raise ValueError("the polling interval must be positive")
        self.path = path
        self.interval = interval
        self._on_change = on_change
        self._seen = None if initial is None else digest(initial)
        self._problem: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"quotactor-watch-{path.name}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop polling and wait for a change being handled to finish; safe to call twice."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def check(self) -> bool:
        """Poll once; True when the content changed (and `on_change` was called)."""
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            problem = f"{type(exc).__name__}: {exc.strerror or exc}"
            if problem != self._problem:
                log.warning("config.unreadable", path=str(self.path), error=problem)
                self._problem = problem
            return False
        self._problem = None
        current = digest(data)
        if current == self._seen:
            return False
        self._seen = current
        self._on_change(data)
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
            except Exception:
                # The watcher must outlive any one bad edit; the handler's failure is logged.
                log.exception("config.watch_failed", path=str(self.path))
