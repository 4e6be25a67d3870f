"""Logging: structlog events routed into the stdlib logger `quotactor`.

The library never configures logging. Its loggers are wrapped locally (not through
`structlog.configure`) and hand each event dict to `logging.getLogger("quotactor")`, so a host
process decides where events go with the logging setup it already has; unconfigured, Python
prints warnings and errors to stderr and drops the rest. The CLI and the service call
`configure_logging` to render the same events as console lines or JSON lines.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

__all__ = ["get_logger", "configure_logging"]

_STDLIB = logging.getLogger("quotactor")


class _LibraryLogger(structlog.stdlib.BoundLogger):
    """Drops a debug or info event before building it when the `quotactor` logger would.

    `filter_by_level` drops it too, but only after the call has gathered and bound its
    arguments: a replay emits several such events per job, and nobody
    reads them unless the host enabled them.
    """

    def debug(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self.isEnabledFor(logging.DEBUG):
            return None
        return super().debug(event, *args, **kw)

    def info(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self.isEnabledFor(logging.INFO):
            return None
        return super().info(event, *args, **kw)


def get_logger(**context: Any) -> Any:
    """A bound structlog logger for library code, cheap when its level is disabled."""
    logger = structlog.wrap_logger(
        _STDLIB,
        processors=[
            structlog.stdlib.filter_by_level,
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=_LibraryLogger,
    )
    return logger.bind(**context) if context else logger


def configure_logging(fmt: str = "console", level: str = "info") -> None:
    """For entry points: human-readable lines on a terminal, JSON lines with `fmt="json"`."""
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
            renderer,
        ],
        foreign_pre_chain=[structlog.stdlib.add_log_level],
    ))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
    _STDLIB.setLevel(logging.getLevelNamesMapping()[level.upper()])
