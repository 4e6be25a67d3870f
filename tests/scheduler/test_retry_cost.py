"""What a cycle asks the user group manager after a release: proportional to what changed.

A user at the limit on running applications with a long backlog used to cost one refused
increase per pending application after each of the user's releases; now the first refusal
in a cycle holds back the user's other new applications in that leaf with the same reason.
"""

from __future__ import annotations

from quotactor import UserGroup
from quotactor.scheduler import Ask

CONFIG = """
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: work
            limits:
              - limit: two each
                users: ["*"]
                maxapplications: 2
"""

SUE = UserGroup("sue", ("dev",))
ONE = {"vcore": 1000}


def _counting(scheduler) -> dict[str, int]:
    """Count increases asked of the default partition's user group manager."""
    ugm = scheduler.ugm()
    counts = {"decide_increase": 0}
    original = ugm.decide_increase

    def spy(*args, **kwargs):
        counts["decide_increase"] += 1
        return original(*args, **kwargs)

    ugm.decide_increase = spy
    return counts


def test_a_release_costs_one_refusal_per_user_not_one_per_pending_app(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 64000})
    for i in range(40):
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    counts = _counting(s)
    s.remove_application("a0")
    made = s.schedule()
    assert [a.application_id for a in made] == ["a2"]
    # one increase that succeeds (a2), one refused (a3); a4..a39 reuse a3's refusal
    assert counts["decide_increase"] == 2
    for i in range(3, 40):
        wait = s.why_pending(f"a{i}")
        assert wait is not None and (wait.kind, wait.name, wait.limit) == (
            "user", "sue", "applications")


def test_another_user_in_the_same_leaf_is_still_asked_about(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 64000})
    for i in range(3):
        s.submit(f"sue-{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.submit("bob-0", UserGroup("bob", ("dev",)), queue="root.work", asks=[Ask("k", ONE)])
    made = s.schedule()
    assert sorted(a.application_id for a in made) == ["bob-0", "sue-0", "sue-1"]
    assert s.why_pending("sue-2").kind == "user"
