"""What every quotactor actor shares: daemon threads and handlers that cannot kill the actor."""

from __future__ import annotations

import sys
from typing import Any

import pykka

from quotactor.logs import get_logger

log = get_logger()


class SafeReceive:
    """Handler errors are logged and answered, never fatal.

    pykka stops an actor whose `tell` handler raises; a tracker that died would silently drop
    usage. So each handler's exception goes to the message's reply future (if any) and the log.
    """

    def on_receive(self, message: Any) -> Any:
        try:
            return self.handle(message)
        except Exception:
            log.exception("actor_handler_failed", actor=type(self).__name__,
                          message=type(message).__name__)
            reply = getattr(message, "reply", None)
            if isinstance(reply, pykka.Future):
                reply.set_exception(sys.exc_info())
            return None

    def handle(self, message: Any) -> Any:
        raise NotImplementedError


class SafeActor(SafeReceive, pykka.ThreadingActor):
    """A thread-per-actor pykka actor (manager, config) on a daemon thread, so that a host
    process can always exit."""

    use_daemon_thread = True
