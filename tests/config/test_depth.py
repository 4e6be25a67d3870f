from __future__ import annotations

import pytest

from quotactor.config import ConfigError, depth, load_config


@pytest.mark.parametrize("parser_bounds_depth", [True, False], ids=["libyaml-bound", "own-scan"])
def test_deeply_nested_yaml_is_refused_before_the_c_parser_can_overflow_its_stack(
    monkeypatch: pytest.MonkeyPatch, parser_bounds_depth: bool,
) -> None:
    if parser_bounds_depth and not depth._PARSER_BOUNDS_DEPTH:
        pytest.skip("this libyaml does not bound nesting itself")
    monkeypatch.setattr(depth, "_PARSER_BOUNDS_DEPTH", parser_bounds_depth)
    with pytest.raises(ConfigError, match=r"nests deeper than 256 levels|maximum nesting depth"
                       ) as caught:
        load_config("partitions: " + "[" * 100_000)
    assert caught.value.line == 1


def test_our_own_scan_names_the_bound_and_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(depth, "_PARSER_BOUNDS_DEPTH", False)
    with pytest.raises(ConfigError, match="nests deeper than 256 levels") as caught:
        load_config("partitions:\n  - " + "- " * 300 + "x\n")
    assert caught.value.line == 2


def test_real_configs_nest_far_below_the_bound() -> None:
    nested = "partitions:\n  - name: default\n    queues:\n      - name: root\n"
    indent = "        "
    for level in range(40):
        nested += f"{indent}queues:\n{indent}  - name: q{level}\n"
        indent += "    "
    assert load_config(nested).partition("default") is not None
