from __future__ import annotations

import pytest

from quotactor.config import ConfigError, load_config


def test_deeply_nested_yaml_is_refused_before_the_c_parser_can_overflow_its_stack() -> None:
    with pytest.raises(ConfigError, match="nests deeper than 256 levels") as caught:
        load_config("partitions: " + "[" * 100_000)
    assert caught.value.line == 1


def test_real_configs_nest_far_below_the_bound() -> None:
    nested = "partitions:\n  - name: default\n    queues:\n      - name: root\n"
    indent = "        "
    for level in range(40):
        nested += f"{indent}queues:\n{indent}  - name: q{level}\n"
        indent += "    "
    assert load_config(nested).partition("default") is not None
