"""`load_config`: any config source in, a validated `SchedulerConfig` out, or a `ConfigError`.

An empty document is a valid config without partitions, as in YuniKorn (whose validator loops
over the partitions it finds); a document of several YAML documents is rejected, where YuniKorn
would silently use the first.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import yaml

from quotactor.config.builder import build
from quotactor.config.depth import check_depth
from quotactor.config.errors import ConfigError
from quotactor.config.facts import SourceFacts
from quotactor.config.model import SchedulerConfig
from quotactor.config.validate import validate
from quotactor.config.yamlparse import compose, syntax_error

__all__ = ["load_config", "ConfigSource"]

ConfigSource = str | bytes | os.PathLike[str] | SchedulerConfig


def load_config(source: ConfigSource, *, pause_collector: bool = False) -> SchedulerConfig:
    """Load and validate a YuniKorn scheduler config.

    `source` is YAML text (`str`, or UTF-8 `bytes`), a path to a YAML file, or an already
    loaded `SchedulerConfig` (returned as is). The result keeps the text in `source`.

    `pause_collector=True` keeps Python's cyclic garbage collector off while the config is
    parsed (a 10,000-limit config: ~0.5 s instead of ~1.3 s). The collector is process-wide, so
    this is for a host that owns its process (the `quotactor` CLI opts in); a library call
    never switches it on its own.
    """
    if isinstance(source, SchedulerConfig):
        return source
    if isinstance(source, os.PathLike):
        text = _read(Path(source))
    elif isinstance(source, bytes):
        text = _decode(source)
    elif isinstance(source, str):
        text = source
    else:
        raise TypeError(f"a config source is YAML text, a path or a SchedulerConfig, "
                        f"not {type(source).__name__}")
    check_depth(text)
    with _gc_paused() if pause_collector else nullcontext():
        config, facts = _build(text)
        validate(config, facts)
    return config


def load_scheduler_config(source: ConfigSource, *, pause_collector: bool = False
                          ) -> SchedulerConfig:
    """`load_config`, for a config a scheduler is to run: one without a partition (an empty
    document, say) is a `ConfigError` too, as a scheduler, `quotactor serve`, `simulate` and
    `PUT /config` refuse it (YuniKorn's rule: at least one partition must be defined)."""
    config = load_config(source, pause_collector=pause_collector)
    if not config.partitions:
        raise ConfigError(reason="the configuration has no partition", location="partitions")
    return config


def _build(text: str) -> tuple[SchedulerConfig, SourceFacts]:
    """Compose and build in a frame of their own, so the node tree is gone when it returns.

    A large document composes to hundreds of thousands of nodes and marks. Were they still
    alive when the collector resumes, its first pass would walk them all, a stall for every
    thread in the process.
    """
    try:
        node, loader = compose(text)
        return build(node, loader, text)
    except yaml.YAMLError as exc:
        raise syntax_error(exc) from None
    except RecursionError:
        raise ConfigError("the document nests too deeply (or an alias refers to itself)"
                          ) from None


_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = False


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector off while a config is loaded (opt-in, see
    `load_config`).

    A load allocates hundreds of thousands of long-lived nodes and model objects, none of them
    garbage; each allocation burst triggers collections that scan them all again, which takes
    most of the time of a large load (a 10,000-limit config: ~1.3 s with, ~0.5 s without). The
    collector is global, so concurrent loads share one pause and the last one restores it.
    """
    global _gc_pausers, _gc_was_enabled
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_enabled:
                gc.enable()


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    return _decode(data)


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the config is not UTF-8 text ({exc.reason})",
                          f"byte {exc.start}") from None
