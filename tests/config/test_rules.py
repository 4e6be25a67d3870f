"""Each YuniKorn rule, as a pair of neighbours: a config that keeps it and one that breaks it.

The reasons must name the rule in YuniKorn's words and point at the offending place.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from quotactor.config import ConfigError

Problems = Callable[[str], list[ConfigError]]


def cfg(root: str, extra: str = "") -> str:
    """One partition whose root queue is the flow mapping `root`, plus partition `extra` keys."""
    lines = ["partitions:", "  - name: default"]
    lines += [f"    {line}" for line in extra.splitlines() if line]
    lines += ["    queues:", f"      - {root}"]
    return "\n".join(lines) + "\n"


def leaf(body: str) -> str:
    """A root queue with one child `a` whose other keys are `body`."""
    return f"{{name: root, queues: [{{name: a, {body}}}]}}"


def limits(*entries: str) -> str:
    return "limits: [" + ", ".join(entries) + "]"


RULES = [
    # (name, valid neighbour, invalid neighbour, words in the reason, location of the problem)
    ("partition names are unique ignoring case",
     "partitions: [{name: a, queues: [{name: root}]}, {name: b, queues: [{name: root}]}]",
     "partitions: [{name: Part1, queues: [{name: root}]}, {name: part1, queues: [{name: root}]}]",
     "duplicate partition name", "partitions[1].name"),
    ("an empty partition name means default",
     "partitions: [{queues: [{name: root}]}, {name: other, queues: [{name: root}]}]",
     "partitions: [{name: DEFAULT, queues: [{name: root}]}, {queues: [{name: root}]}]",
     "duplicate partition name", "partitions[1].name"),
    ("a partition needs a queue list",
     "partitions: [{name: default, queues: []}]",
     "partitions: [{name: default}]",
     "queue config is not set", "partitions[0]"),
    ("the root queue has no resources",
     cfg("{name: root, queues: [{name: a, resources: {max: {memory: 10}}}]}"),
     cfg("{name: root, resources: {max: {}}}"),
     "root queue must not have resource limits set", "partitions[0].queues[0].resources"),
    ("partition and root limits are one and the same",
     cfg("{name: root, limits: [{users: [sue], maxapplications: 1}]}",
         "limits: [{users: [sue], maxapplications: 1}]"),
     cfg("{name: root, limits: [{users: [sue], maxapplications: 1}]}",
         "limits: [{users: [bob], maxapplications: 1}]"),
     "partition limits and root queue limits are not equivalent", "partitions[0].limits"),
    ("the node sort policy is fair or binpacking",
     cfg("{name: root}", "nodesortpolicy: {type: binpacking, resourceweights: {memory: 1.5}}"),
     cfg("{name: root}", "nodesortpolicy: {type: Fair}"),
     "undefined policy: Fair", "partitions[0].nodesortpolicy.type"),
    ("resource weights are not negative",
     cfg("{name: root}", "nodesortpolicy: {type: fair, resourceweights: {vcore: 0}}"),
     cfg("{name: root}", "nodesortpolicy: {type: fair, resourceweights: {vcore: -1}}"),
     "negative resource weight for vcore", "partitions[0].nodesortpolicy.resourceweights.vcore"),
    ("queue names use YuniKorn's characters",
     cfg(leaf("name: 'a:b#c@d/e-f_g'").replace("name: a, ", "")),
     cfg("{name: root, queues: [{name: a.b}]}"),
     "invalid queue name 'a.b'", "partitions[0].queues[0].queues[0].name"),
    ("queue names are at most 64 characters",
     cfg("{name: root, queues: [{name: " + "q" * 64 + "}]}"),
     cfg("{name: root, queues: [{name: " + "q" * 65 + "}]}"),
     "max 64 characters", "partitions[0].queues[0].queues[0].name"),
    ("sibling queue names differ ignoring case",
     cfg("{name: root, queues: [{name: a, queues: [{name: x}]}, {name: b, queues: [{name: x}]}]}"),
     cfg("{name: root, queues: [{name: Test}, {name: test}]}"),
     "duplicate child name found with name 'test' under root",
     "partitions[0].queues[0].queues[1].name"),
    ("an ACL has at most one space",
     cfg(leaf("submitacl: 'sue,bob dev,test', adminacl: ' admins'")),
     cfg(leaf("submitacl: 'sue bob dev'")),
     "multiple spaces found in ACL: 'sue bob dev'",
     "partitions[0].queues[0].queues[0].submitacl"),
    ("guaranteed fits in max",
     cfg(leaf("resources: {guaranteed: {memory: 10}, max: {memory: 10}}")),
     cfg(leaf("resources: {guaranteed: {memory: 11}, max: {memory: 10}}")),
     "guaranteed resource {memory: 11} is larger than maximum resource {memory: 10}",
     "partitions[0].queues[0].queues[0].resources.guaranteed"),
    ("a child's max fits in every ancestor's max",
     cfg("{name: root, queues: [{name: a, resources: {max: {memory: 100}}, queues: [{name: b, "
         "queues: [{name: c, resources: {max: {memory: 100, vcore: 9}}}]}]}]}"),
     cfg("{name: root, queues: [{name: a, resources: {max: {memory: 100}}, queues: [{name: b, "
         "queues: [{name: c, resources: {max: {memory: 150}}}]}]}]}"),
     "max resource of parent {memory: 100} is smaller than maximum resource {memory: 150} for "
     "queue root.a.b.c", "partitions[0].queues[0].queues[0].queues[0].queues[0].resources.max"),
    ("children's guaranteed add up within the parent's guaranteed",
     cfg("{name: root, queues: [{name: a, resources: {guaranteed: {memory: 10}}, queues: ["
         "{name: x, resources: {guaranteed: {memory: 5}}}, "
         "{name: y, resources: {guaranteed: {memory: 5, vcore: 1}}}]}]}"),
     cfg("{name: root, queues: [{name: a, resources: {guaranteed: {memory: 10}}, queues: ["
         "{name: x, resources: {guaranteed: {memory: 6}}}, "
         "{name: y, resources: {guaranteed: {memory: 5}}}]}]}"),
     "guaranteed resource of parent {memory: 10} is smaller than sum of guaranteed resources "
     "{memory: 11}", "partitions[0].queues[0].queues[0].resources.guaranteed"),
    ("children's guaranteed add up within the parent's max",
     cfg("{name: root, queues: [{name: a, resources: {max: {memory: 10}}, queues: ["
         "{name: x, resources: {guaranteed: {memory: 5}}}, "
         "{name: y, resources: {guaranteed: {memory: 5}}}]}]}"),
     cfg("{name: root, queues: [{name: a, resources: {max: {memory: 10}}, queues: ["
         "{name: x, resources: {guaranteed: {memory: 6}}}, "
         "{name: y, resources: {guaranteed: {memory: 5}}}]}]}"),
     "max resource {memory: 10} is smaller than sum of guaranteed resources {memory: 11}",
     "partitions[0].queues[0].queues[0].resources.max"),
    ("a child's maxapplications stays within its parent's",
     cfg("{name: root, maxapplications: 10, queues: [{name: a, maxapplications: 10}]}"),
     cfg("{name: root, maxapplications: 10, queues: [{name: a, maxapplications: 11}]}"),
     "parent maxApplications must be larger than child maxApplications",
     "partitions[0].queues[0].queues[0].maxapplications"),
    ("a child needs maxapplications once its parent has one",
     cfg("{name: root, queues: [{name: a, queues: [{name: b}]}]}"),
     cfg("{name: root, queues: [{name: a, maxapplications: 5, queues: [{name: b}]}]}"),
     "maxApplications is either undefined or zero",
     "partitions[0].queues[0].queues[0].queues[0].maxapplications"),
    ("a limit names a user or a group",
     cfg(leaf(limits("{limit: l, groups: [dev], maxapplications: 1}"))),
     cfg(leaf(limits("{limit: l, maxapplications: 1}"))),
     "empty user and group lists defined in limit 'l'",
     "partitions[0].queues[0].queues[0].limits[0]"),
    ("limit user names use YuniKorn's characters",
     cfg(leaf(limits("{users: [user.lastname, 'user@domain', 'system:sa:ns:x', 'name$'], "
                     "maxapplications: 1}"))),
     cfg(leaf(limits("{users: [1user], maxapplications: 1}"))),
     "invalid limit user name '1user'", "partitions[0].queues[0].queues[0].limits[0].users[0]"),
    ("limit group names use YuniKorn's characters",
     cfg(leaf(limits("{groups: ['system:authenticated', dev.team], maxapplications: 1}"))),
     cfg(leaf(limits("{groups: [dev, 'group@domain'], maxapplications: 1}"))),
     "invalid limit group name 'group@domain'",
     "partitions[0].queues[0].queues[0].limits[0].groups[1]"),
    ("a user appears once in a queue's limits",
     cfg("{name: root, queues: [{name: a, limits: [{users: [sue], maxapplications: 1}]}, "
         "{name: b, limits: [{users: [sue], maxapplications: 1}]}]}"),
     cfg(leaf(limits("{users: [sue], maxapplications: 1}", "{users: [sue], maxapplications: 2}"))),
     "duplicated user name 'sue', already exists",
     "partitions[0].queues[0].queues[0].limits[1].users[0]"),
    ("a group appears once in a queue's limits",
     cfg(leaf(limits("{groups: [dev], maxapplications: 1}", "{groups: [test], "
                     "maxapplications: 1}"))),
     cfg(leaf(limits("{groups: [dev, dev], maxapplications: 1}"))),
     "duplicated group name 'dev'", "partitions[0].queues[0].queues[0].limits[0].groups[1]"),
    ("the wildcard user comes last",
     cfg(leaf(limits("{users: [sue], maxapplications: 1}", "{users: ['*'], maxapplications: 1}"))),
     cfg(leaf(limits("{users: ['*'], maxapplications: 1}", "{users: [sue], maxapplications: 1}"))),
     "should not set no wildcard user sue after wildcard user limit",
     "partitions[0].queues[0].queues[0].limits[1].users[0]"),
    ("the wildcard group comes last",
     cfg(leaf(limits("{groups: [dev, '*'], maxapplications: 1}"))),
     cfg(leaf(limits("{groups: ['*', dev], maxapplications: 1}"))),
     "should not set no wildcard group dev after wildcard group limit",
     "partitions[0].queues[0].queues[0].limits[0].groups[1]"),
    ("a wildcard group limit follows a named group",
     cfg(leaf(limits("{groups: [dev], maxapplications: 1}", "{groups: ['*'], "
                     "maxapplications: 1}"))),
     cfg(leaf(limits("{users: [sue], maxapplications: 1}", "{groups: ['*'], "
                     "maxapplications: 1}"))),
     "should not specify only one group limit that is using the wildcard",
     "partitions[0].queues[0].queues[0].limits[1].groups[0]"),
    ("a limit's maxresources allow something",
     cfg(leaf(limits("{limit: l, users: [sue], maxresources: {memory: 10, gpu: 0}}"))),
     cfg(leaf(limits("{limit: l, users: [sue], maxresources: {memory: 0, gpu: 0}}"))),
     "MaxResources should be greater than zero in 'l' limit",
     "partitions[0].queues[0].queues[0].limits[0].maxresources"),
    ("a limit limits resources or applications",
     cfg(leaf(limits("{limit: l, users: [sue], maxapplications: 1}"))),
     cfg(leaf(limits("{limit: l, users: [sue], maxresources: {}}"))),
     "invalid resource combination for limit 'l': all resource limits are null",
     "partitions[0].queues[0].queues[0].limits[0]"),
    ("a limit's maxapplications fit in the queue's",
     cfg(leaf("maxapplications: 5, " + limits("{users: [sue], maxapplications: 5}"))),
     cfg(leaf("maxapplications: 5, " + limits("{users: [sue], maxapplications: 6}"))),
     "invalid MaxApplications settings", "partitions[0].queues[0].queues[0].limits[0]"
     ".maxapplications"),
    ("a limit's maxresources fit in the queue's max",
     cfg(leaf("resources: {max: {memory: 10G}}, "
              + limits("{users: [sue], maxresources: {memory: 10G, vcore: 100}}"))),
     cfg(leaf("resources: {max: {memory: 10G}}, "
              + limits("{users: [sue], maxresources: {memory: 11G}}"))),
     "maxresources {memory: 11G} exceeds the resources.max {memory: 10G} of queue root.a",
     "partitions[0].queues[0].queues[0].limits[0].maxresources"),
    ("a limit quantity parses",
     cfg(leaf(limits("{users: [sue], maxresources: {vcore: 500m, memory: 1Gi}}"))),
     cfg(leaf(limits("{users: [sue], maxresources: {memory: 500m}}"))),
     "invalid suffix 'm'", "partitions[0].queues[0].queues[0].limits[0].maxresources.memory"),
    ("a queue quantity parses",
     cfg(leaf("resources: {max: {memory: '100'}}")),
     cfg(leaf("resources: {max: {memory: 1.5G}}")),
     "invalid quantity '1.5G' for memory",
     "partitions[0].queues[0].queues[0].resources.max.memory"),
    ("a queue max that does not parse fails the limits checked against it",
     cfg(leaf("resources: {max: {memory: 10}}, " + limits("{users: [sue], maxapplications: 1}"))),
     cfg(leaf("resources: {max: {memory: ten}}, " + limits("{users: [sue], maxapplications: 1}"))),
     "parse queue root.a max resource failed: invalid quantity 'ten'",
     "partitions[0].queues[0].queues[0].resources.max.memory"),
    ("a child's limit for a user fits in the ancestor's limit for that user",
     cfg("{name: root, limits: [{users: [sue], maxresources: {memory: 250G}}], queues: [{name: a,"
         " limits: [{limit: team a, users: [sue], maxresources: {memory: 250G, vcore: 9}}]}]}"),
     cfg("{name: root, limits: [{users: [sue], maxresources: {memory: 250G}}], queues: [{name: a,"
         " limits: [{limit: team a, users: [sue], maxresources: {memory: 300G}}]}]}"),
     "user sue max resource {memory: 300G} of queue root.a (limit 'team a') is greater than "
     "immediate or ancestor parent maximum resource {memory: 250G}",
     "partitions[0].queues[0].queues[0].limits[0].users[0]"),
    ("a grandchild's limit fits in the tightest of its ancestors' limits",
     cfg("{name: root, limits: [{groups: [dev], maxresources: {memory: 100, vcore: 5}}], queues: ["
         "{name: a, limits: [{groups: [dev], maxresources: {memory: 50}}], queues: [{name: b, "
         "limits: [{groups: [dev], maxresources: {memory: 50, vcore: 5}}]}]}]}"),
     cfg("{name: root, limits: [{groups: [dev], maxresources: {memory: 100, vcore: 5}}], queues: ["
         "{name: a, limits: [{groups: [dev], maxresources: {memory: 50}}], queues: [{name: b, "
         "limits: [{groups: [dev], maxresources: {memory: 60}}]}]}]}"),
     "set at root, root.a", "partitions[0].queues[0].queues[0].queues[0].limits[0].groups[0]"),
    ("a named user's limit fits in an ancestor's wildcard limit",
     cfg("{name: root, limits: [{users: ['*'], maxresources: {memory: 100}}], queues: [{name: a,"
         " limits: [{users: [sue], maxresources: {memory: 100}}]}]}"),
     cfg("{name: root, limits: [{users: ['*'], maxresources: {memory: 100}}], queues: [{name: a,"
         " limits: [{users: [sue], maxresources: {memory: 101}}]}]}"),
     "greater than wildcard maximum resource {memory: 100} of immediate or ancestor parent queue"
     " root", "partitions[0].queues[0].queues[0].limits[0].users[0]"),
    ("a child's application limit stays within the ancestor's for the same user",
     cfg("{name: root, limits: [{users: [sue], maxapplications: 5}], queues: [{name: a,"
         " limits: [{users: [sue], maxapplications: 5}]}]}"),
     cfg("{name: root, limits: [{users: [sue], maxapplications: 5}], queues: [{name: a,"
         " limits: [{users: [sue], maxresources: {memory: 1}}]}]}"),
     "user sue max applications 0 (unlimited) of queue root.a",
     "partitions[0].queues[0].queues[0].limits[0].users[0]"),
    ("a group's application limit stays within an ancestor's wildcard group limit",
     cfg("{name: root, limits: [{groups: [ops], maxapplications: 9}, {groups: ['*'], "
         "maxapplications: 3}], queues: [{name: a, limits: [{groups: [dev], "
         "maxapplications: 3}]}]}"),
     cfg("{name: root, limits: [{groups: [ops], maxapplications: 9}, {groups: ['*'], "
         "maxapplications: 3}], queues: [{name: a, limits: [{groups: [dev], "
         "maxapplications: 4}]}]}"),
     "group dev max applications 4 of queue root.a", "partitions[0].queues[0].queues[0].limits[0]"
     ".groups[0]"),
    ("a placement rule name is an identifier",
     cfg("{name: root}", "placementrules: [{name: _any_Rule1, create: true}]"),
     cfg("{name: root}", "placementrules: [{name: 1234}]"),
     "invalid rule name '1234'", "partitions[0].placementrules[0].name"),
    ("a placement filter type is allow or deny",
     cfg("{name: root}", "placementrules: [{name: user, create: true, filter: {type: Deny}}]"),
     cfg("{name: root}", "placementrules: [{name: user, create: true, filter: {type: bogus}}]"),
     "invalid rule filter type bogus", "partitions[0].placementrules[0].filter.type"),
    ("a single filter user is a name or a regular expression",
     cfg("{name: root}", "placementrules: [{name: user, create: true, filter: "
         "{users: ['test[1-9]']}}]"),
     cfg("{name: root}", "placementrules: [{name: user, create: true, filter: "
         "{users: ['test[1-9']}}]"),
     "invalid rule filter user list is not a proper list or regexp",
     "partitions[0].placementrules[0].filter.users[0]"),
    ("a single filter group is a name or a regular expression",
     cfg("{name: root}", "placementrules: [{name: user, create: true, filter: "
         "{groups: [dev, 'test@group']}}]"),
     cfg("{name: root}", "placementrules: [{name: user, create: true, filter: "
         "{groups: ['test@group']}}]"),
     "invalid rule filter group list", "partitions[0].placementrules[0].filter.groups[0]"),
    ("a fixed rule without create names an existing queue",
     cfg("{name: root, queues: [{name: default}]}", "placementrules: [{name: fixed, value: "
         "root.default}]"),
     cfg("{name: root, queues: [{name: default}]}", "placementrules: [{name: fixed, value: "
         "root.other}]"),
     "references non-existing queues (root.other) and create is 'false'",
     "partitions[0].placementrules[0]"),
    ("a fixed rule that ends the chain names a leaf",
     cfg("{name: root, queues: [{name: users, parent: true}]}", "placementrules: [{name: user, "
         "create: true, parent: {name: fixed, value: users}}]"),
     cfg("{name: root, queues: [{name: users, parent: true}]}", "placementrules: [{name: fixed,"
         " value: users}]"),
     "references a queue (root.users) which is not a leaf", "partitions[0].placementrules[0]"),
    ("a fixed parent of a dynamic rule names a parent queue",
     cfg("{name: root, queues: [{name: users, parent: true}]}", "placementrules: [{name: user, "
         "create: true, parent: {name: fixed, value: root.users}}]"),
     cfg("{name: root, queues: [{name: users}]}", "placementrules: [{name: user, "
         "create: true, parent: {name: fixed, value: root.users}}]"),
     "which is a leaf, but the rest of the chain", "partitions[0].placementrules[0]"),
    ("only the first fixed rule of a chain is fully qualified",
     cfg("{name: root, queues: [{name: a, parent: true}]}", "placementrules: [{name: fixed, "
         "value: b, create: true, parent: {name: fixed, value: root.a}}]"),
     cfg("{name: root, queues: [{name: a, parent: true}]}", "placementrules: [{name: fixed, "
         "value: root.b, create: true, parent: {name: fixed, value: root.a}}]"),
     "illegal fully qualified 'fixed' rule with value root.b", "partitions[0].placementrules[0]"),
    ("every key is one YuniKorn knows",
     cfg(leaf("properties: {sample: value}")),
     cfg(leaf("sample: value")),
     "unknown key 'sample' in a queue", "partitions[0].queues[0].queues[0].sample"),
    ("keys are lowercase, as YuniKorn matches them exactly",
     cfg(leaf("maxapplications: 1")),
     cfg(leaf("maxApplications: 1")),
     "unknown key 'maxApplications'", "partitions[0].queues[0].queues[0].maxApplications"),
    ("a flag is a plain true or false",
     cfg(leaf("parent: yes")),
     cfg(leaf("parent: 'true'")),
     "parent must be true or false", "partitions[0].queues[0].queues[0].parent"),
    ("maxapplications is a whole number from 0",
     cfg(leaf("maxapplications: 0x10")),
     cfg(leaf("maxapplications: -1")),
     "maxapplications must be a whole number", "partitions[0].queues[0].queues[0].maxapplications"),
    ("a list of users is a list",
     cfg(leaf(limits("{users: [sue], maxapplications: 1}"))),
     cfg(leaf(limits("{users: sue, maxapplications: 1}"))),
     "users must be a list", "partitions[0].queues[0].queues[0].limits[0].users"),
    ("a key appears once per mapping",
     cfg(leaf("submitacl: '*'")),
     cfg(leaf("submitacl: '*', submitacl: sue")),
     "key 'submitacl' is set twice", "partitions[0].queues[0].queues[0].submitacl"),
]


@pytest.mark.parametrize(("valid", "broken", "words", "location"),
                         [pytest.param(*row[1:], id=row[0]) for row in RULES])
def test_each_rule_accepts_its_valid_neighbour_and_names_the_broken_one(
        problems: Problems, valid: str, broken: str, words: str, location: str) -> None:
    assert [str(p) for p in problems(valid)] == []
    found = problems(broken)
    assert found, "the broken neighbour was accepted"
    assert words in found[0].reason, str(found[0])
    assert found[0].location == location


def test_a_partition_limit_applies_to_root_and_is_checked_there(problems: Problems) -> None:
    found = problems(cfg("{name: root, queues: [{name: a, limits: [{users: [sue], "
                         "maxapplications: 9}]}]}", "limits: [{users: [sue], maxapplications: 3}]"))
    assert "max applications 9 of queue root.a" in found[0].reason
    assert "set at root" in found[0].reason


def test_root_limits_are_not_checked_against_a_max(problems: Problems) -> None:
    assert problems(cfg("{name: root, limits: [{users: [sue], maxresources: {memory: 1E}}]}")) == []


def test_sibling_queues_are_judged_independently(problems: Problems) -> None:
    text = cfg("{name: root, queues: [{name: a, limits: [{users: [sue], maxapplications: 1}]},"
               " {name: b, limits: [{users: [sue], maxapplications: 9}]}]}")
    assert problems(text) == []


def test_a_name_at_the_same_queue_as_the_wildcard_is_not_bound_by_it(problems: Problems) -> None:
    text = cfg(leaf(limits("{users: [sue], maxapplications: 9}",
                           "{users: ['*'], maxapplications: 1}")))
    assert problems(text) == []


def test_names_an_ancestor_leaves_out_are_unconstrained(problems: Problems) -> None:
    text = cfg("{name: root, limits: [{users: [sue], maxresources: {memory: 10}}], queues: ["
               "{name: a, limits: [{users: [sue], maxresources: {memory: 10, vcore: 1000}}]}]}")
    assert problems(text) == []


def test_a_zero_in_a_queue_max_forbids_that_resource_to_children(problems: Problems) -> None:
    text = cfg("{name: root, queues: [{name: a, resources: {max: {memory: 10, gpu: 0}}, "
               "queues: [{name: b, resources: {max: {gpu: 1}}}]}]}")
    assert "on gpu" in problems(text)[0].reason


def test_unknown_rule_names_pass_as_in_yunikorn(problems: Problems) -> None:
    text = cfg("{name: root}", "placementrules: [{name: Something, filter: {users: [a, b]}}]")
    assert problems(text) == []
