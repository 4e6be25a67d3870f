"""The numbered feeds behind events and decisions: resume, overflow, and wake-ups."""

from __future__ import annotations

import asyncio
import threading
import time

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


def test_a_waiting_reader_wakes_when_another_thread_publishes() -> None:
    feed = Feed()

    async def wait() -> float:
        started = time.monotonic()
        await feed.wait_after(0, 10.0)
        return time.monotonic() - started

    async def main() -> float:
        waiting = asyncio.ensure_future(wait())
        await asyncio.sleep(0)  # let the waiter register  # sleep-ok: yields to the loop once
        threading.Thread(target=feed.publish, args=([{"n": 1}],)).start()
        return await asyncio.wait_for(waiting, 5.0)

    assert asyncio.run(main()) < 5.0
    assert [r["n"] for r in feed.after(0, 10).records] == [1]


def test_a_wait_ends_at_its_timeout_or_at_once_when_records_exist() -> None:
    feed = Feed()
    asyncio.run(feed.wait_after(0, 0.05))
    feed.publish([{"n": 1}])
    started = time.monotonic()
    asyncio.run(feed.wait_after(0, 10.0))
    assert time.monotonic() - started < 1.0


def test_a_feed_keeps_at_least_one_record() -> None:
    with pytest.raises(ValueError):
        Feed(capacity=0)
