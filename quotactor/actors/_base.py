"""What every quotactor actor shares: daemon threads and handlers that cannot kill the actor."""

from __future__ import annotations

import sys
from typing import Any

import pykka

from quotactor.logs import get_logger

log = get_logger()


class SafeReceive:
    """A handler error reaches whoever waits for the answer, and never kills the actor.

    A message that carries its own reply future (one actor asks, another answers) gets the
    exception on that future, and the error is logged. Any other error is raised to the sender
    of an ask, or logged by the pooled runtime for a tell: pykka would stop an actor whose
    `tell` handler raises, and a tracker that died would silently drop usage.
    """

    def on_receive(self, message: Any) -> Any:
        try:
            return self.handle(message)
        except Exception:
            reply = getattr(message, "reply", None)
            if not isinstance(reply, pykka.Future):
                raise
            log.exception("actor_handler_failed", actor=type(self).__name__,
                          message=type(message).__name__)
            reply.set_exception(sys.exc_info())
            return None

    def handle(self, message: Any) -> Any:
        raise NotImplementedError


class SafeActor(SafeReceive, pykka.ThreadingActor):
    """A thread-per-actor pykka actor (manager, config) on a daemon thread, so that a host
    process can always exit."""

    use_daemon_thread = True
