"""The numbered feeds behind events and decisions: resume, overflow, and wake-ups."""

from __future__ import annotations

import asyncio
import threading

import pytest

from quotactor.rest.scheduler.feed import Feed


def test_readers_resume_after_a_position_and_learn_what_fell_off() -> None:
    feed = Feed(capacity=3)
    assert feed.after(0, 10).records == () and feed.highest == 0
    assert feed.publish({"n": i} for i in range(5)) == 5
    page = feed.after(0, 10)
    assert [r["id"] for r in page.records] == [3, 4, 5]
    assert (page.lowest, page.highest) == (3, 5)  # 1 and 2 were dropped: a reader at 0 missed them
    assert [r["id"] for r in feed.after(3, 1).records] == [4]
    assert feed.after(5, 10).records == ()


FOREVER = 3600.0
"""A reader's own timeout that no test outlasts: a wait that ends, ended for another reason."""
BOUND = 30.0
"""How long a test waits for a reader that should wake at once."""


def test_a_waiting_reader_wakes_when_another_thread_publishes() -> None:
    feed = Feed()

    async def main() -> None:
        waiting = asyncio.ensure_future(feed.wait_after(0, FOREVER))
        await asyncio.sleep(0)  # let the waiter register  # sleep-ok: yields to the loop once
        publisher = threading.Thread(target=feed.publish, args=([{"n": 1}],))
        publisher.start()
        await asyncio.wait_for(waiting, BOUND)
        publisher.join(BOUND)

    asyncio.run(main())
    assert [r["n"] for r in feed.after(0, 10).records] == [1]


def test_a_wait_ends_at_its_timeout_or_at_once_when_records_exist() -> None:
    feed = Feed()
    asyncio.run(feed.wait_after(0, 0.05))
    feed.publish([{"n": 1}])
    asyncio.run(asyncio.wait_for(feed.wait_after(0, FOREVER), BOUND))


def test_a_feed_keeps_at_least_one_record() -> None:
    with pytest.raises(ValueError):
        Feed(capacity=0)
