"""The shim API: a scheduler front end in any language drives quotactor's scheduler over HTTP.

`POST /shim/nodes`, `/shim/applications` and `/shim/allocations` take YuniKorn's
`NodeRequest`, `ApplicationRequest` and `AllocationRequest` (see `shim_models`); what the
scheduler decides later (allocations made by its cycles, and the rejections and releases the
writes caused) is read from `GET /shim/decisions?after=N`, a long-poll that resumes after the
last decision the shim saw.

Gangs declare their task groups in an application tag (see `shim.gang`); allocations sent
with `nodeID` set are existing ones the shim recovers after a restart (booked without limit
checks, as YuniKorn's recovery does). Releases the scheduler decides on (a placeholder replaced
by its real ask, placeholders timed out, later preemption victims) reach the shim as
`allocationResponse.released` decisions; they change usage only when the shim releases the
allocation in turn, and a confirmed `PLACEHOLDER_REPLACED` books the real allocation, listed
in the answer's `new` and as a decision.

Two kinds of failure, as in YuniKorn: a request that is malformed (a field missing, of the
wrong type, a negative size, an unknown partition) is a 400 naming the field, and nothing
changes; a well-formed item the scheduler refuses (an ask for an unknown application) is
listed in the response's `rejected` lists, and the other items still apply. Replaying a
request is harmless: registering a node or an application again with the same settings,
re-sending an ask already pending or allocated, releasing what is already gone, all succeed
without changing anything.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import UserGroup
from quotactor.rest.auth import require_shim
from quotactor.rest.http.body import JsonBodyRoute
from quotactor.rest.http.errors import ApiError
from quotactor.rest.scheduler.bridge import SchedulerBridge, si_allocation
from quotactor.rest.scheduler.feed import event_record
from quotactor.rest.schemas import ErrorInfo
from quotactor.rest.shim import apply
from quotactor.rest.shim import models as si
from quotactor.rest.shim.gang import gang_of
from quotactor.scheduler import Allocation, Ask, Scheduler
from quotactor.scheduler.objects.spec import DEFAULT_PARTITION
from quotactor.scheduler.objects.states import TERMINAL_STATES

__all__ = ["MAX_WAIT", "shim_router"]

MAX_WAIT = 30.0
"""The longest a decision long-poll waits for something to happen (seconds)."""


def _partition(scheduler: Scheduler, name: str, field: str) -> str:
    """`partitionName` as YuniKorn's shims send it (`[rmID]name` or `name`); default if empty."""
    plain = name.rsplit("]", 1)[-1] if name.startswith("[") else name
    plain = plain or DEFAULT_PARTITION
    if plain not in scheduler.partitions:
        raise ApiError(400, "Invalid request", f"{field}: unknown partition {plain!r}")
    return plain


def _node_partition(scheduler: Scheduler, node: si.NodeInfo, index: int) -> str:
    return _partition(scheduler, node.attributes.get("si/node-partition", ""),
                      f"nodes.{index}.attributes.si/node-partition")


def _resource(value: si.SiResource | None, field: str, positive: bool) -> dict[str, int]:
    values = {} if value is None else value.quantities()
    if any(v < 0 for v in values.values()):
        raise ApiError(400, "Invalid request", f"{field}: quantities must not be negative")
    if positive and not any(v > 0 for v in values.values()):
        raise ApiError(400, "Invalid request", f"{field}: must request a positive quantity")
    return values


def shim_router(scheduler: Scheduler, bridge: SchedulerBridge) -> APIRouter:
    """The write endpoints and decision long-poll of `scheduler`; all need the shim token."""
    router = APIRouter(tags=["shim"], dependencies=[Depends(require_shim)],
                       route_class=JsonBodyRoute, responses={
        400: {"model": ErrorInfo, "description": "a malformed request; nothing changed"},
        401: {"model": ErrorInfo}, 403: {"model": ErrorInfo}, 408: {"model": ErrorInfo},
        413: {"model": ErrorInfo},
    })

    @router.post("/shim/nodes", response_model=None,
                 responses={200: {"model": si.NodeResponse}},
                 summary="Register, update, drain or remove nodes (NodeRequest)")
    def nodes(request: si.NodeRequest) -> JSONResponse:
        plan = []
        for i, node in enumerate(request.nodes):
            partition = _node_partition(scheduler, node, i)
            capacity = _resource(node.schedulableResource, f"nodes.{i}.schedulableResource",
                                 positive=False)
            if node.action == "UNKNOWN_ACTION_FROM_RM":
                raise ApiError(400, "Invalid request", f"nodes.{i}.action: must be set")
            if node.action in ("CREATE", "CREATE_DRAIN") and node.schedulableResource is None:
                raise ApiError(400, "Invalid request",
                               f"nodes.{i}.schedulableResource: a new node needs its capacity")
            plan.append((node, partition, capacity))
        accepted: list[dict[str, str]] = []
        rejected: list[dict[str, str]] = []
        for node, partition, capacity in plan:
            reason = apply.apply_node(scheduler, bridge, request.rmID, node, partition, capacity)
            if reason is None:
                accepted.append({"nodeID": node.nodeID})
            else:
                rejected.append({"nodeID": node.nodeID, "reason": reason})
        response = {"accepted": accepted, "rejected": rejected}
        if rejected:
            bridge.decide(request.rmID, "nodeResponse", {"rejected": rejected})
        return JSONResponse(response)

    @router.post("/shim/applications", response_model=None,
                 responses={200: {"model": si.ApplicationAnswer}},
                 summary="Add (gangs too) or remove applications (ApplicationRequest)")
    def applications(request: si.ApplicationRequest) -> JSONResponse:
        news = []
        for i, app in enumerate(request.new):
            partition = _partition(scheduler, app.partitionName, f"new.{i}.partitionName")
            try:
                user = UserGroup(app.ugi.user, list(app.ugi.groups))
            except InvalidRequest as exc:
                raise ApiError(400, "Invalid request", f"new.{i}.ugi: {exc}") from None
            news.append((app, partition, user, gang_of(app, f"new.{i}")))
        removes = [(gone, _partition(scheduler, gone.partitionName, f"remove.{i}.partitionName"))
                   for i, gone in enumerate(request.remove)]
        accepted: list[dict[str, str]] = []
        rejected: list[dict[str, str]] = []
        for app, partition, user, gang in news:
            reason = apply.add_application(scheduler, bridge, request.rmID, app, partition, user,
                                      gang)
            if reason is None:
                accepted.append({"applicationID": app.applicationID})
            else:
                rejected.append({"applicationID": app.applicationID, "reason": reason})
        removed = []
        for gone, partition in removes:
            app_id = gone.applicationID
            try:
                if scheduler.application(app_id, partition=partition).state in TERMINAL_STATES:
                    continue  # ended already: a replay
                scheduler.remove_application(app_id, partition=partition)
            except InvalidRequest:
                continue  # gone already: a replay
            bridge.note_state(partition, app_id)
            bridge.forget(partition, app_id)
            removed.append(app_id)
            bridge.events.publish([event_record("APP", app_id, "REMOVE",
                                                "APP_COMPLETED", message="removed by the shim")])
        response = {"accepted": accepted, "rejected": rejected, "removed": removed}
        if accepted or rejected:
            bridge.decide(request.rmID, "applicationResponse",
                          {"accepted": accepted, "rejected": rejected})
        return JSONResponse(response)

    @router.post("/shim/allocations", response_model=None,
                 responses={200: {"model": si.AllocationAnswer}},
                 summary="Add asks, recover running allocations (nodeID), release allocations "
                 "or confirm releases the scheduler asked for (AllocationRequest)")
    def allocations(request: si.AllocationRequest) -> JSONResponse:
        asks = []
        existing = []
        for i, allocation in enumerate(request.allocations):
            field = f"allocations.{i}"
            partition = _partition(scheduler, allocation.partitionName, f"{field}.partitionName")
            if allocation.placeholder and not allocation.nodeID:
                raise ApiError(400, "Invalid request", f"{field}.placeholder: placeholders "
                               "are created by the scheduler from the application's task "
                               "groups, not asked for by the shim")
            if allocation.placeholder and not allocation.taskGroupName:
                raise ApiError(400, "Invalid request", f"{field}.taskGroupName: a recovered "
                               "placeholder names its task group")
            resource = _resource(allocation.resourcePerAlloc, f"{field}.resourcePerAlloc",
                                 positive=True)
            policy = allocation.preemptionPolicy
            try:
                ask = Ask(allocation.allocationKey, resource, allocation.priority,
                          task_group=allocation.taskGroupName, tags=allocation.allocationTags,
                          required_node=allocation.allocationTags.get(si.REQUIRED_NODE_TAG) or None,
                          allow_preempt_self=policy is None or policy.allowPreemptSelf,
                          allow_preempt_other=policy is None or policy.allowPreemptOther,
                          originator=allocation.originator)
            except InvalidRequest as exc:
                raise ApiError(400, "Invalid request", f"{field}: {exc}") from None
            if allocation.nodeID:
                now = scheduler.clock.now()  # when it started is the shim's secret
                existing.append((allocation, Allocation(
                    ask.key, allocation.applicationID, partition, allocation.nodeID,
                    ask.resource, ask.priority, allocation.placeholder, ask.task_group,
                    requested_at=now, allocated_at=now,
                    allow_preempt_self=ask.allow_preempt_self, originator=ask.originator,
                    required_node=ask.required_node, tags=ask.tags)))
            else:
                asks.append((allocation, partition, ask))
        releases = request.releases.allocationsToRelease if request.releases else []
        targets = [(release, _partition(
            scheduler, release.partitionName,
            f"releases.allocationsToRelease.{i}.partitionName")) for i, release in
            enumerate(releases)]
        rejected = apply.recover(scheduler, bridge, [recovered for _, recovered in existing])
        for allocation, partition, ask in asks:
            reason = apply.add_ask(scheduler, bridge, allocation, partition, ask)
            if reason is not None:
                rejected.append({"allocationKey": ask.key,
                                 "applicationID": allocation.applicationID, "reason": reason})
        released = []
        made: list[dict[str, Any]] = []
        for release, partition in targets:
            done = apply.release(scheduler, bridge, release, partition)
            if done is not None:
                released.append(done[0])
                if done[1] is not None:
                    made.append(si_allocation(done[1]))
        if rejected:
            bridge.decide(request.rmID, "allocationResponse", {"rejectedAllocations": rejected})
        if made:
            bridge.decide(request.rmID, "allocationResponse", {"new": made})
        return JSONResponse({"rejectedAllocations": rejected, "released": released,
                             "new": made})

    @router.get("/shim/decisions", response_model=None,
                responses={200: {"model": si.Decisions}},
                summary="What the scheduler decided after position ?after= (long-poll)")
    async def decisions(
        after: Annotated[int, Query(ge=0, description="the last decision id already seen")
                         ] = 0,
        wait: Annotated[float, Query(ge=0, le=MAX_WAIT,
                                     description="seconds to wait when nothing is new")] = 0,
        limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
        rmID: Annotated[str | None, Query(max_length=si.MAX_NAME, pattern=si.PRINTABLE,
                                          description="only decisions for this shim")] = None,
    ) -> JSONResponse:
        log = bridge.decisions
        deadline = time.monotonic() + wait
        start = log.first - 1  # this run's beginning
        restarted = after != 0 and not start <= after <= log.highest
        position = start if after == 0 or restarted else after
        keep = None if rmID is None else (lambda d: d["rmID"] == rmID)
        while True:
            page = log.after(position, limit, keep)
            position = page.last
            left = deadline - time.monotonic()
            if page.records or left <= 0:
                break
            if position >= page.highest:
                await log.wait_after(position, left)
        missed = restarted or (after != 0 and after + 1 < page.lowest)
        return JSONResponse({"position": position, "lowest": page.lowest, "missed": missed,
                             "restarted": restarted, "decisions": list(page.records)})

    return router
