"""Placement rules (provided, user, fixed, tag; create, parent, filter) and queue ACLs."""

from __future__ import annotations

from quotactor import UserGroup
from quotactor.scheduler import ApplicationState

CONFIG = """
partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
        parent:
          name: fixed
          value: root.namespaces
        filter:
          type: allow
          groups: [dev]
      - name: provided
      - name: user
        create: true
        filter:
          type: deny
          users: [nobody]
        parent:
          name: fixed
          value: users
      - name: fixed
        value: root.fallback
    queues:
      - name: root
        submitacl: " admins"
        queues:
          - name: namespaces
            parent: true
            submitacl: "*"
          - name: users
            parent: true
            submitacl: "*"
          - name: restricted
            submitacl: "alice,bob ops"
          - name: adminonly
            adminacl: carol
          - name: fallback
            submitacl: "*"
          - name: leaf
            submitacl: "*"
"""

DEV = UserGroup("dana", ["dev"])
EVE = UserGroup("eve", ["staff"])


def placed(scheduler, app: str, user: UserGroup, queue: str = "", **tags: str) -> str:
    info = scheduler.submit(app, user, queue=queue, tags=tags)
    assert info.state is ApplicationState.NEW, info.rejected_message
    return info.queue_path


def test_the_tag_rule_creates_the_namespace_queue_below_its_fixed_parent(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    assert placed(s, "a1", DEV, Namespace="team-a") == "root.namespaces.team-a"
    assert not s.queue("root.namespaces.team-a").managed


def test_a_filter_skips_the_rule_for_users_it_does_not_admit(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    assert placed(s, "a1", EVE, namespace="team-a") == "root.users.eve"


def test_provided_without_create_needs_the_queue_to_exist(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    assert placed(s, "a1", EVE, "root.leaf") == "root.leaf"
    assert placed(s, "a2", EVE, "missing") == "root.users.eve"


def test_a_dot_in_a_user_name_does_not_make_a_level(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    assert placed(s, "a1", UserGroup("first.last")) == "root.users.first_dot_last"


def test_the_fixed_rule_is_the_last_resort(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    assert placed(s, "a1", UserGroup("nobody")) == "root.fallback"


def test_submit_acls_allow_listed_users_and_members_of_listed_groups(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    assert placed(s, "a1", UserGroup("alice"), "root.restricted") == "root.restricted"
    assert placed(s, "a2", UserGroup("olga", ["ops"]), "root.restricted") == "root.restricted"
    assert placed(s, "a3", EVE, "root.restricted") == "root.users.eve", "denied: next rule"


def test_the_admin_acl_also_grants_submission(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    assert placed(s, "a1", UserGroup("carol"), "root.adminonly") == "root.adminonly"
    assert placed(s, "a2", UserGroup("nobody"), "root.adminonly") == "root.fallback"


def test_acls_are_checked_up_to_the_root(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    boss = UserGroup("boss", ["admins"])
    assert placed(s, "a1", boss, "root.restricted") == "root.restricted"
    assert placed(s, "a2", boss, "root.adminonly") == "root.adminonly"


def test_an_application_no_rule_places_is_rejected_with_every_rules_outcome(
    start_scheduler,
) -> None:
    s = start_scheduler("""
        partitions:
          - name: default
            placementrules:
              - name: provided
              - name: user
            queues:
              - name: root
                queues:
                  - name: open
                    submitacl: "*"
                  - name: closed
                    submitacl: alice
    """)
    assert placed(s, "a1", EVE, "root.open") == "root.open"
    info = s.submit("a2", EVE, queue="root.closed")
    assert info.state is ApplicationState.REJECTED
    assert info.rejected_message == (
        "application rejected: no placement rule matched"
        " (provided: root.closed denies user eve; user: no queue)")
    assert s.events("a2")[-1].message.startswith("New -> Rejected: application rejected")


def test_without_rules_the_provided_queue_must_exist(start_scheduler) -> None:
    s = start_scheduler("""
        partitions:
          - name: default
            queues:
              - name: root
                submitacl: "*"
                queues: [{name: a}]
    """)
    assert placed(s, "a1", EVE, "root.a") == "root.a"
    assert placed(s, "a2", EVE, "a") == "root.a"
    assert s.submit("a3", EVE, queue="root.b").state is ApplicationState.REJECTED


def test_a_parent_rule_that_names_a_leaf_queue_rejects_the_application(start_scheduler) -> None:
    s = start_scheduler("""
        partitions:
          - name: default
            placementrules:
              - name: user
                create: true
                parent: {name: tag, value: namespace}
            queues:
              - name: root
                submitacl: "*"
                queues: [{name: leaf}]
    """)
    info = s.submit("a1", EVE, tags={"namespace": "leaf"})
    assert info.rejected_message == "parent rule returned a leaf queue: root.leaf"


def test_a_single_filter_entry_that_is_no_name_is_a_regular_expression(start_scheduler) -> None:
    s = start_scheduler("""
        partitions:
          - name: default
            placementrules:
              - name: user
                create: true
                filter: {type: allow, groups: ["^dev.*"]}
              - name: fixed
                value: other
                create: true
            queues: [{name: root, submitacl: "*"}]
    """)
    assert placed(s, "a1", UserGroup("sam", ["devops"])) == "root.sam"
    assert placed(s, "a2", UserGroup("tom", ["ops"])) == "root.other"


def test_a_draining_queue_takes_no_new_applications(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    placed(s, "a1", EVE, "root.leaf")
    s.update_config(CONFIG.replace("          - name: leaf\n            submitacl: \"*\"\n", ""))
    assert s.queue("root.leaf").status == "Draining"
    info = s.submit("a2", EVE, queue="root.leaf")
    assert info.state is ApplicationState.REJECTED
    assert "root.leaf" in info.rejected_message
