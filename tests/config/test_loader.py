"""Loading: every kind of source, YuniKorn's strict decoding, normalisation and the model."""

from __future__ import annotations

import pickle
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from yaml.nodes import Node

from quotactor.config import (
    ConfigError,
    LimitConfig,
    PartitionConfig,
    QueueConfig,
    SchedulerConfig,
    find_problems,
    load_config,
    validate,
)
from quotactor.config.yamlread import Reader

Problems = Callable[[str], list[ConfigError]]

EXAMPLE = textwrap.dedent("""\
    # a comment is fine
    partitions:
      - name: default
        placementrules:
          - name: tag
            value: namespace
            create: true
        limits:
          - limit: everyone
            users: ["*"]
            maxapplications: 10
        queues:
          - name: root
            submitacl: '*'
            queues:
              - name: a
                maxapplications: 4
                resources:
                  guaranteed: {memory: 1G}
                  max: {memory: 10G, vcore: "2", nvidia.com/gpu: 0}
                properties:
                  application.sort.policy: fifo
                  priority.offset: 10
                childtemplate:
                  maxapplications: 2
                  resources: {max: {vcore: 500m}}
                limits:
                  - limit: team a
                    users: [sue, bob]
                    groups: [dev]
                    maxresources: {memory: 5G}
                    maxapplications: 2
    checksum: ABC
    """)


def test_yaml_text_loads_into_the_model() -> None:
    config = load_config(EXAMPLE)
    partition = config.partition("default")
    assert partition is not None and partition.root is not None
    a = partition.root.queues[0]
    assert a.name == "a" and a.max_applications == 4
    assert dict(a.max_resources) == {"memory": 10**10, "vcore": 2000, "nvidia.com/gpu": 0}
    assert dict(a.guaranteed) == {"memory": 10**9}
    assert dict(a.properties) == {"application.sort.policy": "fifo", "priority.offset": "10"}
    assert a.child_template is not None and dict(a.child_template.max_resources) == {"vcore": 500}
    assert a.limits == (LimitConfig("team a", ("sue", "bob"), ("dev",), {"memory": 5 * 10**9}, 2),)
    assert partition.placement_rules[0].name == "tag" and partition.placement_rules[0].create
    assert config.checksum == "ABC"
    assert config.source == EXAMPLE


def test_a_path_and_bytes_load_the_same_config(tmp_path: Path) -> None:
    file = tmp_path / "queues.yaml"
    file.write_text(EXAMPLE)
    from_file = load_config(file)
    assert from_file == load_config(EXAMPLE) == load_config(EXAMPLE.encode())
    assert from_file.source == EXAMPLE


def test_a_loaded_config_is_returned_as_it_is() -> None:
    config = load_config(EXAMPLE)
    assert load_config(config) is config


def test_an_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
    (tmp_path / "latin.yaml").write_bytes(b"partitions: []\n# caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8") as caught:
        load_config(tmp_path / "latin.yaml")
    assert caught.value.location == "byte 20"


def test_another_kind_of_source_is_a_programming_error() -> None:
    with pytest.raises(TypeError):
        load_config(42)  # type: ignore[arg-type]


def test_an_empty_document_is_a_config_without_partitions_as_in_yunikorn() -> None:
    assert load_config("").partitions == ()
    assert load_config("# only a comment\n").partitions == ()
    assert load_config("partitions: []\n").partitions == ()


def test_a_document_of_the_wrong_shape_is_rejected(problems: Problems) -> None:
    assert "the document must be a mapping" in problems("- partitions\n")[0].reason
    assert "partitions must be a list" in problems("partitions: default\n")[0].reason


def test_several_yaml_documents_are_rejected(problems: Problems) -> None:
    found = problems("partitions: []\n---\npartitions: []\n")
    assert "a single document" in found[0].reason
    assert found[0].line == 2


def test_a_syntax_error_gives_line_and_column(problems: Problems) -> None:
    found = problems("partitions:\n  - name: x\n    queues: [{name: root}\n")
    assert found[0].location.startswith("line ")
    assert found[0].line == 4
    assert str(found[0]).startswith("line 4, column 1: YAML syntax error")


def test_an_unquoted_wildcard_is_an_alias_syntax_error_as_in_yunikorn(problems: Problems) -> None:
    found = problems("partitions:\n  - queues:\n      - name: root\n        submitacl: *\n")
    assert found[0].line == 4 and "YAML syntax error" in found[0].reason


def test_every_decoding_problem_is_reported_at_once(problems: Problems) -> None:
    found = problems("""\
        partitions:
          - name: default
            queues:
              - name: root
                parent: maybe
                maxapplications: many
                bogus: 1
        """)
    assert [(p.location, p.line) for p in found] == [
        ("partitions[0].queues[0].parent", 5),
        ("partitions[0].queues[0].maxapplications", 6),
        ("partitions[0].queues[0].bogus", 7),
    ]


def test_scalars_read_as_yunikorn_reads_them() -> None:
    config = load_config(textwrap.dedent("""\
        partitions:
          - name: 123
            preemption: {enabled: off, quotapreemptionenabled: Y}
            queues:
              - name: root
                maxapplications: 1_000
                submitacl: 2024-01-01
                properties: {x: 0x10, y: ~}
        """))
    partition = config.partitions[0]
    assert partition.name == "123"
    assert partition.preemption.enabled is False
    assert partition.preemption.quota_preemption_enabled is True
    root = partition.root
    assert root is not None
    assert root.max_applications == 1000
    assert root.submit_acl == "2024-01-01"
    assert dict(root.properties) == {"x": "0x10", "y": ""}


def test_a_quantity_is_read_from_its_text_not_its_yaml_number(problems: Problems) -> None:
    found = problems("partitions: [{queues: [{name: root, queues: [{name: a, resources: "
                     "{max: {memory: 0x10}}}]}]}]\n")
    assert "invalid quantity '0x10'" in found[0].reason


def test_null_values_leave_the_defaults() -> None:
    config = load_config(textwrap.dedent("""\
        partitions:
          - name:
            limits:
            placementrules: ~
            queues:
              - name: root
                resources:
                limits: null
        """))
    partition = config.partitions[0]
    assert partition.name == "default"
    assert partition.limits == () and partition.placement_rules == ()


def test_a_root_queue_is_inserted_above_several_top_queues() -> None:
    config = load_config("partitions: [{queues: [{name: a}, {name: b}]}]\n")
    root = config.partitions[0].root
    assert root is not None and root.name == "root" and root.parent
    assert [q.name for q in root.queues] == ["a", "b"]
    assert root.location == "partitions[0].queues"
    assert root.queues[1].location == "partitions[0].queues[1]"


def test_a_single_top_queue_not_called_root_is_put_under_root() -> None:
    root = load_config("partitions: [{queues: [{name: a}]}]\n").partitions[0].root
    assert root is not None and [q.name for q in root.queues] == ["a"]


def test_the_root_queue_is_always_a_parent() -> None:
    root = load_config("partitions: [{queues: [{name: root, parent: false}]}]\n").partitions[0].root
    assert root is not None and root.parent


def test_partition_limits_become_the_root_queue_limits() -> None:
    partition = load_config("partitions: [{limits: [{users: [sue], maxapplications: 1}], "
                            "queues: [{name: root}]}]\n").partitions[0]
    assert partition.root is not None
    assert partition.root.limits == partition.limits
    assert partition.root.limits[0].location == "partitions[0].limits[0]"


def test_anchors_aliases_and_merge_keys_work() -> None:
    config = load_config(textwrap.dedent("""\
        partitions:
          - name: a
            queues: [{name: root, limits: &shared [{users: [sue], maxapplications: 1}]}]
          - name: b
            queues:
              - &base {name: root, submitacl: '*'}
          - name: c
            queues:
              - <<: *base
                limits: *shared
        """))
    a, b, c = (p.root for p in config.partitions)
    assert a is not None and b is not None and c is not None
    assert c.submit_acl == "*" and c.limits == a.limits


def test_an_alias_that_contains_itself_is_rejected(problems: Problems) -> None:
    found = problems("partitions: [{queues: &q [{name: root, queues: *q}]}]\n")
    assert "nests too deeply" in found[0].reason


@pytest.mark.slow
def test_an_alias_bomb_is_stopped_after_a_bounded_number_of_visits(
        problems: Problems, monkeypatch: pytest.MonkeyPatch) -> None:
    levels = ["q0: &q0 [{name: a}, {name: b}, {name: c}, {name: d}, {name: e}, {name: f}]"]
    for n in range(1, 9):
        prev = f"*q{n - 1}"
        levels.append(f"q{n}: &q{n} [" + ", ".join(
            f"{{name: x{i}, queues: {prev}}}" for i in range(6)) + "]")
    text = ("partitions: [{name: p, queues: [{name: root, properties: {"
            + ", ".join(levels) + "}, queues: *q8}]}]\n")
    visits = 0
    enter = Reader._enter

    def counted(reader: Reader, node: Node) -> None:
        nonlocal visits
        visits += 1
        enter(reader, node)

    monkeypatch.setattr(Reader, "_enter", counted)
    found = problems(text)
    assert found and "alias" in found[0].reason
    # Expanded, the queues below root would be 6**9 (over ten million) nodes.
    assert 0 < visits <= 200_000, visits


def test_location_is_not_part_of_equality() -> None:
    assert LimitConfig("l", ("sue",), location="x") == LimitConfig("l", ["sue"], location="y")
    indented = load_config("partitions:\n    -   queues:\n            - name: root\n")
    assert indented == load_config("partitions: [{queues: [{name: root}]}]\n")


def test_model_objects_are_frozen_and_hashable() -> None:
    config = load_config(EXAMPLE)
    with pytest.raises(AttributeError):
        config.partitions[0].name = "x"  # type: ignore[misc]
    assert hash(config) == hash(load_config(EXAMPLE))
    root = config.partitions[0].root
    assert root is not None and isinstance(root.queues, tuple)


def test_configs_can_be_built_in_code_with_plain_values() -> None:
    queue = QueueConfig("a", max_resources={"memory": 10}, limits=[LimitConfig(users=["sue"])])
    assert queue.limits[0].users == ("sue",)
    partition = PartitionConfig(queues=[QueueConfig("root", parent=True, queues=[queue])])
    config = SchedulerConfig([partition])
    assert config.partition("DEFAULT") is partition
    assert config.partition("other") is None


def test_a_config_built_in_code_is_judged_by_the_same_rules() -> None:
    queue = QueueConfig("a", max_resources={"memory": 5},
                        limits=[LimitConfig("x", ["sue"], max_resources={"memory": 10})])
    config = SchedulerConfig([PartitionConfig(queues=[QueueConfig("root", queues=[queue])])])
    with pytest.raises(ConfigError, match="invalid MaxResources settings for limit 'x'"):
        validate(config)
    assert find_problems(SchedulerConfig()) == []


def test_line_of_finds_the_closest_located_node() -> None:
    config = load_config(EXAMPLE)
    assert config.line_of("partitions[0].queues[0].queues[0].limits[0].users[1]") == 29
    assert config.line_of("partitions[0].queues[0].queues[0].nothing[3]") == 16


def test_a_config_error_survives_pickling() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config("partitions: [{name: a}, {name: a}]\n")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == str(caught.value)
    assert [str(e) for e in copy.errors] == [str(e) for e in caught.value.errors]
