"""Every real YuniKorn config of the shared corpus gets YuniKorn's verdict, for its reason."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from quotactor.config import ConfigError, load_config

CORPUS = Path(__file__).resolve().parents[1] / "data" / "yunikorn-configs"
ENTRIES: list[dict[str, Any]] = json.loads((CORPUS / "index.json").read_text())

# YuniKorn's words for a rule -> words our reason for the same rule contains. First match wins,
# so the more specific phrases come first.
RULE_WORDS = [
    ("invalid queue name", "invalid queue name"),
    ("queue config is not set", "queue config is not set"),
    ("duplicate partition name", "duplicate partition name"),
    ("root queue must not have resource limits", "root queue must not have resource limits"),
    ("duplicate child name", "duplicate child name"),
    ("parse queue", "max resource failed: invalid quantity"),
    ("invalid quantity: overflow", "overflow"),
    ("invalid quantity", "invalid quantity"),
    ("invalid suffix", "invalid suffix"),
    ("multiple spaces found in ACL", "multiple spaces found in ACL"),
    ("yaml: line", "YAML syntax error"),
    ("into bool", "must be true or false"),
    ("not found in type", "unknown key"),
    ("into configs.", "must be a mapping"),
    ("invalid rule filter type", "invalid rule filter type"),
    ("invalid rule filter user list", "invalid rule filter user list"),
    ("invalid rule filter group list", "invalid rule filter group list"),
    ("invalid MaxApplications settings", "invalid MaxApplications settings"),
    ("invalid MaxResources settings", "invalid MaxResources settings"),
    ("invalid resource combination", "invalid resource combination"),
    ("MaxResources should be greater than zero", "MaxResources should be greater than zero"),
    ("invalid limit user name", "invalid limit user name"),
    ("invalid limit group name", "invalid limit group name"),
    ("should not set no wildcard user", "should not set no wildcard user"),
    ("should not set no wildcard group", "should not set no wildcard group"),
    ("duplicated user name", "duplicated user name"),
    ("duplicated group name", "duplicated group name"),
    ("should not specify only one group limit", "should not specify only one group limit"),
    ("than immediate or ancestor parent maximum resource",
     "than immediate or ancestor parent maximum resource"),
    ("than immediate or ancestor parent max applications",
     "than immediate or ancestor parent max applications"),
    ("than wildcard maximum resource", "than wildcard maximum resource"),
    ("than wildcard max applications", "than wildcard max applications"),
    ("undefined policy", "undefined policy"),
    ("guaranteed resource of parent", "guaranteed resource of parent"),
    ("is smaller than sum of guaranteed", "is smaller than sum of guaranteed"),
    ("max resource of parent", "max resource of parent"),
    ("is larger than maximum resource", "is larger than maximum resource"),
    ("parent maxApplications must be larger", "parent maxApplications must be larger"),
    ("maxApplications is either undefined or zero", "maxApplications is either undefined"),
    ("empty user and group lists", "empty user and group lists"),
]


def entries(expected: str) -> list[Any]:
    return [pytest.param(e, id=Path(e["file"]).stem[:60])
            for e in ENTRIES if e["expected"] == expected]


def our_words(yunikorn_reason: str) -> str:
    for theirs, ours in RULE_WORDS:
        if theirs in yunikorn_reason:
            return ours
    raise AssertionError(f"no rule words known for YuniKorn's reason {yunikorn_reason!r}")


def test_the_corpus_is_where_the_tests_expect_it() -> None:
    assert len(entries("valid")) >= 100
    assert len(entries("invalid")) >= 100


@pytest.mark.parametrize("entry", entries("valid"))
def test_a_config_yunikorn_accepts_loads(entry: dict[str, Any]) -> None:
    config = load_config(CORPUS / entry["file"])
    assert config.source is not None
    for partition in config.partitions:
        assert partition.root is not None and partition.root.parent


@pytest.mark.parametrize("entry", entries("invalid"))
def test_a_config_yunikorn_rejects_is_rejected_for_the_same_rule(entry: dict[str, Any]) -> None:
    path = CORPUS / entry["file"]
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    first = caught.value
    assert our_words(entry["validator_reason_raw"]) in first.reason
    assert first.line is not None, "every rejection of the corpus names a line"
    assert first.line >= 1, "lines are numbered from 1"
    assert first.line <= len(path.read_text().splitlines()), "a line past the file's end"


@pytest.mark.parametrize("entry", [
    e for e in entries("invalid") if re.search(r"line \d+", e.values[0]["validator_reason_file"])
])
def test_a_yaml_level_rejection_names_the_line_yunikorn_names(entry: dict[str, Any]) -> None:
    yunikorn_line = int(re.search(r"line (\d+)", entry["validator_reason_file"]).group(1))
    with pytest.raises(ConfigError) as caught:
        load_config(CORPUS / entry["file"])
    assert caught.value.line == yunikorn_line
