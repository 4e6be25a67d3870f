"""Rejections, refusals and state changes are logged as structured events."""

from __future__ import annotations

import logging

from quotactor import UserGroup
from quotactor.scheduler import Ask

SUE = UserGroup("sue", ["dev"])


ONE_APP_FOR_SUE = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues:
      - name: root
        submitacl: '*'
        limits: [{limit: sue, users: [sue], maxapplications: 1}]
"""


def _started(start_scheduler):
    s = start_scheduler(ONE_APP_FOR_SUE)
    s.add_node("n1", {"vcore": 4000})
    return s


def events_of(caplog) -> list[dict]:
    return [r.msg for r in caplog.records if isinstance(r.msg, dict)]


def test_rejections_refusals_and_state_changes_are_logged_with_context(start_scheduler,
                                                                        caplog) -> None:
    s = _started(start_scheduler)
    with caplog.at_level(logging.INFO, logger="quotactor"):
        s.submit("bad", SUE)
        s.submit("a1", SUE, queue="root.q", asks=[Ask("k", {"vcore": 1000})])
        s.submit("a2", SUE, queue="root.q", asks=[Ask("k", {"vcore": 1000})])
        s.schedule()
    logged = events_of(caplog)
    rejected = next(e for e in logged if e["event"] == "scheduler.app_rejected")
    assert rejected["partition"] == "default" and rejected["app"] == "bad"
    assert "no placement rule matched" in rejected["reason"]
    moves = [(e["app"], e["destination"]) for e in logged if e["event"] == "scheduler.app_state"]
    assert ("a1", "Starting") in moves and ("bad", "Rejected") in moves
    waiting = next(e for e in logged if e["event"] == "scheduler.app_waiting")
    assert (waiting["app"], waiting["kind"], waiting["limit"]) == ("a2", "user", "applications")


def test_levels_the_host_drops_build_no_event_and_reasons_read_as_text(start_scheduler,
                                                                        caplog) -> None:
    s = _started(start_scheduler)
    with caplog.at_level(logging.WARNING, logger="quotactor"):
        s.submit("a1", SUE, queue="root.q", asks=[Ask("k", {"vcore": 1000})])
        s.submit("a2", SUE, queue="root.q", asks=[Ask("k", {"vcore": 1000})])
        s.schedule()
    assert events_of(caplog) == [], "an info or debug event reached the host at WARNING"
    with caplog.at_level(logging.DEBUG, logger="quotactor"):
        s.submit("a3", SUE, queue="root.q", asks=[Ask("k", {"vcore": 1000})])
        s.schedule()
    assert any(e["event"] == "scheduler.app_submitted" for e in events_of(caplog))
    waiting = [e for e in s.events("a2") if e.kind == "waiting"]
    # kept as the reason itself, formatted only when read
    assert waiting and all(isinstance(e.message, str) for e in waiting)
    assert waiting[-1].message == str(s.application("a2").wait)
