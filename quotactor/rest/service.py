"""`quotactor serve` minus the command line: a scheduler over a config file, served over HTTP.

The service is a scheduler: one `Scheduler` runs every partition of the config with its user
group managers, schedules in the background on the real clock, and is served with YuniKorn's
REST API and, given a shim token, the shim API through which remote front ends feed it nodes,
applications and asks. Every change of config, from an edit of the file or from `PUT /config`,
goes through `Scheduler.update_config` under one lock: an invalid text changes nothing; kept
partitions switch, new ones start, dropped ones drain (they take no new applications).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from quotactor.logs import get_logger
from quotactor.rest.scheduler.server import SchedulerManagers, serve_scheduler
from quotactor.rest.server import RestServer
from quotactor.rest.watcher import FileWatcher
from quotactor.scheduler import Scheduler, SchedulerOptions
from quotactor.ugm import DEFAULT_TIMEOUT

__all__ = ["Service"]

log = get_logger()


class Service:
    """The scheduler, server and watcher of one config file; `start()`, then `stop()`."""

    def __init__(
        self,
        config_path: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 9080,
        admin_token: str | None = None,
        shim_token: str | None = None,
        watch_interval: float = 2.0,
        scheduling_interval: float = 0.1,
        manager_timeout: float = DEFAULT_TIMEOUT,
        **server_options: Any,
    ) -> None:
        if scheduling_interval <= 0:
            raise ValueError("the scheduling interval must be positive")
        self.config_path = Path(config_path)
        self.host = host
        self.port = port
        self.admin_token = admin_token
        self.shim_token = shim_token
        self.watch_interval = watch_interval
        self.scheduling_interval = scheduling_interval
        self.manager_timeout = manager_timeout
        self.server_options = server_options
        self.scheduler: Scheduler | None = None
        self.server: RestServer | None = None
        self._watcher: FileWatcher | None = None
        self._lock = threading.RLock()

    @property
    def url(self) -> str:
        if self.server is None:
            raise RuntimeError("the service is not running")
        return self.server.url

    @property
    def partitions(self) -> SchedulerManagers:
        """The user group manager of every partition, by name (read live)."""
        if self.scheduler is None:
            raise RuntimeError("the service is not running")
        return SchedulerManagers(self.scheduler)

    def start(self) -> None:
        """Load the file (`ConfigError` if invalid, `OSError` if unreadable), then serve it."""
        data = self.config_path.read_bytes()
        try:
            self.scheduler = Scheduler.start(
                data, options=SchedulerOptions(ugm_timeout=self.manager_timeout,
                                               shim_confirms_releases=True))
            self.scheduler.start_background(self.scheduling_interval)
            self.server = serve_scheduler(
                self.scheduler, self.host, self.port, admin_token=self.admin_token,
                shim_token=self.shim_token, apply_config=self.apply, **self.server_options)
            if self.watch_interval > 0:
                self._watcher = FileWatcher(self.config_path, self._file_changed,
                                            self.watch_interval, initial=data)
                self._watcher.start()
        except BaseException:
            self.stop()
            raise
        log.info("serve.started", config=str(self.config_path), url=self.server.url,
                 partitions=list(self.scheduler.partitions))

    def apply(self, source: str | bytes) -> None:
        """Make `source` (YAML; bytes in UTF-8) the running config; if it is invalid, raise
        `ConfigError` and change nothing.

        Also the `PUT /config` of the server: such a change is not written to the file, and
        the next edit of the file replaces it.
        """
        from quotactor.config import ConfigError

        with self._lock:
            if self.scheduler is None:
                raise RuntimeError("the service is not running")
            try:
                self.scheduler.update_config(source)
            except ConfigError:
                # The managers never saw it; count it as their failed reload all the same.
                for manager in self.partitions.values():
                    manager.metrics.record_reload(False)
                raise
            log.info("serve.config_applied", partitions=list(self.scheduler.partitions))

    def stop(self) -> None:
        """Stop watching, serving and scheduling, in that order; safe to call twice."""
        with self._lock:
            watcher, self._watcher = self._watcher, None
            server, self.server = self.server, None
            scheduler, self.scheduler = self.scheduler, None
        if watcher is not None:
            watcher.stop()
        if server is not None:
            server.stop()
        if scheduler is not None:
            scheduler.stop()
        log.info("serve.stopped", config=str(self.config_path))

    def _file_changed(self, data: bytes) -> None:
        from quotactor.config import ConfigError

        try:
            self.apply(data)
        except ConfigError as exc:
            log.warning("serve.config_rejected", config=str(self.config_path), error=str(exc))
