"""Helpers for the config tests: a way to see every problem a config has."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from quotactor.config import ConfigError, load_config


def problems_of(text: str) -> list[ConfigError]:
    """Every problem `load_config` reports for `text` (empty when it loads)."""
    try:
        load_config(textwrap.dedent(text))
    except ConfigError as exc:
        return exc.errors
    return []


@pytest.fixture
def problems() -> Callable[[str], list[ConfigError]]:
    return problems_of
