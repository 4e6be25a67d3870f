"""What a person reads when a config is wrong: where, on which line, and why."""

from __future__ import annotations

from collections.abc import Callable

from quotactor.config import ConfigError

Problems = Callable[[str], list[ConfigError]]

BROKEN = """\
    partitions:
      - name: default
        queues:
          - name: root
            limits:
              - limit: all
                users: [sue]
                maxresources: {memory: 250G}
            queues:
              - name: a
                limits:
                  - limit: team a
                    users: [bob, sue]
                    maxresources: {memory: 300G}
                  - limit: odd
                    users: ["user space"]
                    maxapplications: 1
    """


def test_str_is_location_line_and_reason() -> None:
    error = ConfigError("bad thing", "partitions[0].queues[0]", 7)
    assert str(error) == "partitions[0].queues[0] (line 7): bad thing"
    assert str(ConfigError("bad thing", "partitions[0]")) == "partitions[0]: bad thing"
    assert str(ConfigError("bad thing")) == "bad thing"
    assert str(ConfigError("bad", "line 3, column 4", 3)) == "line 3, column 4: bad"


def test_the_error_is_its_own_first_problem() -> None:
    second = ConfigError("second", "b")
    error = ConfigError("first", "a", None, [second])
    assert error.errors == [error, second]
    assert ConfigError.of([second]).errors[0].reason == "second"
    assert isinstance(error, ValueError)


def test_every_problem_is_reported_in_check_order_with_its_line(problems: Problems) -> None:
    found = problems(BROKEN)
    assert [(p.location, p.line) for p in found] == [
        ("partitions[0].queues[0].queues[0].limits[1].users[0]", 16),
        ("partitions[0].queues[0].queues[0].limits[0].users[1]", 13),
    ]
    assert "invalid limit user name 'user space'" in found[0].reason


def test_a_hierarchy_reason_names_the_rule_the_values_and_the_ancestor(problems: Problems) -> None:
    reason = problems(BROKEN)[1].reason
    assert reason.startswith("user sue max resource {memory: 300G} of queue root.a "
                             "(limit 'team a') is greater than immediate or ancestor parent "
                             "maximum resource {memory: 250G}")
    assert "set at root" in reason and "on memory" in reason


def test_resource_values_are_shown_as_a_person_writes_them(problems: Problems) -> None:
    found = problems("""\
        partitions:
          - queues:
              - name: root
                queues:
                  - name: a
                    resources:
                      guaranteed: {vcore: 1500m, memory: 2Gi}
                      max: {vcore: 1, memory: 1Gi}
        """)
    assert ("guaranteed resource {memory: 2Gi, vcore: 1500m} is larger than maximum resource "
            "{memory: 1Gi, vcore: 1}") in found[0].reason
    assert "on memory, vcore" in found[0].reason
