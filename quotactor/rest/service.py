"""`quotactor serve` minus the command line: a config file, its partitions, REST, hot reload.

One `UserGroupManager` runs per partition of the config. Every change of config, from an edit
of the file or from `PUT /config`, goes through `apply` under one lock: the new text is
validated whole first (an invalid one changes nothing), then the partitions it keeps switch
to it (all or none), the ones it adds start and the ones it drops stop.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from quotactor.config import load_config
from quotactor.logs import get_logger
from quotactor.rest.fanout import apply_everywhere, load_for
from quotactor.rest.partitions import Partitions
from quotactor.rest.server import RestServer, start_rest_server
from quotactor.rest.watcher import FileWatcher
from quotactor.ugm import DEFAULT_TIMEOUT, UserGroupManager

__all__ = ["Service"]

log = get_logger()


class Service:
    """The managers, server and watcher of one config file; `start()`, then `stop()`."""

    def __init__(
        self,
        config_path: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 9080,
        admin_token: str | None = None,
        watch_interval: float = 2.0,
        manager_timeout: float = DEFAULT_TIMEOUT,
        **server_options: Any,
    ) -> None:
        self.config_path = Path(config_path)
        self.host = host
        self.port = port
        self.admin_token = admin_token
        self.watch_interval = watch_interval
        self.manager_timeout = manager_timeout
        self.server_options = server_options
        self.partitions = Partitions()
        self.server: RestServer | None = None
        self._watcher: FileWatcher | None = None
        self._lock = threading.RLock()

    @property
    def url(self) -> str:
        if self.server is None:
            raise RuntimeError("the service is not running")
        return self.server.url

    def start(self) -> None:
        """Load the file (`ConfigError` if invalid, `OSError` if unreadable), then serve it."""
        data = self.config_path.read_bytes()
        loaded = load_config(data)
        _require_partitions(loaded)
        try:
            for partition in loaded.partitions:
                self._start_partition(loaded, partition.name)
            self.server = start_rest_server(
                self.partitions, self.host, self.port, self.admin_token,
                apply_config=self.apply, **self.server_options,
            )
            if self.watch_interval > 0:
                self._watcher = FileWatcher(self.config_path, self._file_changed,
                                            self.watch_interval, initial=data)
                self._watcher.start()
        except BaseException:
            self.stop()
            raise
        log.info("serve.started", config=str(self.config_path), url=self.server.url,
                 partitions=list(self.partitions))

    def apply(self, source: str | bytes) -> None:
        """Make `source` (YAML; bytes in UTF-8) the running config; if it is invalid, raise
        `ConfigError` and change nothing.

        Also the `PUT /config` of the server: such a change is not written to the file, and
        the next edit of the file replaces it.
        """
        with self._lock:
            current = self.partitions.snapshot()
            loaded = load_for(current.values(), source, _require_partitions)
            wanted = [partition.name for partition in loaded.partitions]
            apply_everywhere([m for name, m in current.items() if name in wanted], loaded)
            for name in wanted:
                if name not in current:
                    self._start_partition(loaded, name)
            for name, manager in current.items():
                if name not in wanted:
                    self.partitions.remove(name)
                    manager.stop()
                    log.info("serve.partition_stopped", partition=name)
            log.info("serve.config_applied", partitions=wanted)

    def stop(self) -> None:
        """Stop watching, serving and tracking, in that order; safe to call twice."""
        with self._lock:
            watcher, self._watcher = self._watcher, None
            server, self.server = self.server, None
        if watcher is not None:
            watcher.stop()
        if server is not None:
            server.stop()
        with self._lock:
            for name in list(self.partitions):
                manager = self.partitions.remove(name)
                if manager is not None:
                    manager.stop()
        log.info("serve.stopped", config=str(self.config_path))

    def _start_partition(self, loaded: Any, name: str) -> None:
        manager = UserGroupManager.start(loaded, partition=name, timeout=self.manager_timeout)
        self.partitions.add(manager)
        log.info("serve.partition_started", partition=name)

    def _file_changed(self, data: bytes) -> None:
        from quotactor.config import ConfigError

        try:
            self.apply(data)
        except ConfigError as exc:
            log.warning("serve.config_rejected", config=str(self.config_path), error=str(exc))


def _require_partitions(loaded: Any) -> None:
    """Refuse a config without partitions: YuniKorn accepts one, but for a running service it
    would mean stopping every partition and dropping all usage, which is far more likely an
    editor's half-written file than an intent."""
    from quotactor.config import ConfigError

    if not loaded.partitions:
        raise ConfigError("a config without partitions would stop every partition; refused",
                          "partitions")
