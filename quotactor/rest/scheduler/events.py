"""`/events/batch` and `/events/stream`: YuniKorn's event records, by page and live.

The batch answers `EventRecordDAO` (`InstanceUUID`, `LowestID`, `HighestID`, `EventRecords`)
from `?start=` on, at most `?count=`. The stream is server-sent events: one `data:` line per
record, each with its `id:` so a client reconnecting with `Last-Event-ID` (or `?start=`)
resumes after the last record it saw. Both read the feed without holding a worker thread, so
idle subscribers do not starve other requests.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query
from fastapi.responses import JSONResponse, StreamingResponse

from quotactor.rest.http.errors import ApiError
from quotactor.rest.scheduler.feed import Feed
from quotactor.rest.schemas import ErrorInfo

__all__ = ["IDLE_WAIT", "MAX_BATCH", "event_router"]

MAX_BATCH = 10_000
IDLE_WAIT = 5.0
"""How long a stream waits for a record before looking again (seconds)."""


def _count(value: int | None) -> int:
    if value is None:
        return MAX_BATCH
    if value <= 0:
        raise ApiError(400, '0 is not a valid value for "count"')
    return min(value, MAX_BATCH)


def event_router(events: Feed) -> APIRouter:
    """The event endpoints over `events`; one instance ID per server, as YuniKorn has."""
    router = APIRouter(tags=["events"], responses={400: {"model": ErrorInfo}})
    instance = str(uuid.uuid4())

    @router.get("/events/batch", summary="Event records from ?start= on (EventRecordDAO)")
    def batch(start: Annotated[int, Query(ge=0, description="first record id wanted")] = 0,
              count: Annotated[int | None, Query(
                  description="at most this many (0 is refused, as YuniKorn does)",
                  json_schema_extra={"minimum": 1})] = None,
              ) -> JSONResponse:
        page = events.after(start - 1 if start > 0 else 0, _count(count))
        return JSONResponse({"InstanceUUID": instance, "LowestID": page.lowest,
                             "HighestID": page.highest, "EventRecords": list(page.records)})

    @router.get("/events/stream", response_class=StreamingResponse,
                responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}},
                                 "description": "server-sent events, one record each"}},
                summary="Event records as they happen (server-sent events)")
    async def stream(
        start: Annotated[int | None, Query(ge=0, description="resume from this record id")
                         ] = None,
        count: Annotated[int | None, Query(ge=1, le=MAX_BATCH,
                                           description="end after this many records")] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> StreamingResponse:
        if start is not None:
            position = start - 1 if start > 0 else 0
        elif last_event_id is not None and last_event_id.isdigit():
            position = int(last_event_id)
        else:
            position = events.highest
        return StreamingResponse(_sse(events, instance, position, count),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    return router


async def _sse(events: Feed, instance: str, position: int,
               count: int | None) -> AsyncIterator[bytes]:
    yield f"event: hello\ndata: {json.dumps({'InstanceUUID': instance})}\n\n".encode()
    sent = 0
    while count is None or sent < count:
        page = events.after(position, 500 if count is None else min(500, count - sent))
        if not page.records:
            # Starlette cancels this generator when the client goes (ASGI spec 2.3).
            await events.wait_after(position, IDLE_WAIT)
            continue
        chunk = []
        for record in page.records:
            chunk.append(f"id: {record['id']}\ndata: {json.dumps(record)}\n\n")
            position = record["id"]
        sent += len(page.records)
        yield "".join(chunk).encode()
