"""A Python client for a running `quotactor serve`: the shim API to drive it, reads to watch it.

```python
from quotactor.client import Client

with Client("http://127.0.0.1:9080", shim_token=token, rm_id="my-shim") as shim:
    shim.add_node("n1", {"vcore": 8000, "memory": 32 << 30})
    shim.add_application("app-1", "sue", groups=["dev"], queue="root.dev")
    shim.ask("app-1", "task-1", {"vcore": 1000})
    page = shim.decisions(after=0, wait=5.0)      # what the scheduler decided, for this shim
    for allocation in page.allocations():
        ...
```

Writes send YuniKorn's scheduler-interface messages (see `quotactor.rest.shim.models`); the
helpers build the common ones. Every failure the service answers (4xx, 5xx) raises
`ServiceError` carrying YuniKorn's error body; transport failures are httpx's own exceptions.
The client is thread-safe (httpx's client is), so one instance may serve several threads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx

from quotactor.scheduler.objects.gang import TASK_GROUPS_TAG

__all__ = ["Client", "Decisions", "ServiceError", "encode_name"]

PREFIX = "/ws/v1"


class ServiceError(Exception):
    """The service refused a request: `status_code`, `message`, `description` (YuniKorn's)."""

    def __init__(self, status_code: int, message: str, description: str) -> None:
        super().__init__(f"{status_code} {message}: {description}")
        self.status_code = status_code
        self.message = message
        self.description = description


def encode_name(name: str) -> str:
    """A queue, application, node or user name as one path segment, double-encoded as
    YuniKorn's own clients do (so `#`, `/`, `@`, `:` and `%` survive every proxy)."""
    return quote(quote(name, safe=""), safe="")


def _resource(values: Mapping[str, int]) -> dict[str, Any]:
    return {"resources": {name: {"value": int(v)} for name, v in values.items()}}


@dataclass(frozen=True, slots=True)
class Decisions:
    """One answer of the decision long-poll: pass `position` as `after` to the next call."""

    position: int
    missed: bool
    """True when decisions after the `after` given had already been dropped (too far behind,
    or the service restarted)."""
    records: tuple[dict[str, Any], ...]
    restarted: bool = False
    """True when `after` was a position of an earlier run of the service: register nodes and
    applications again and recover running allocations, as after the shim's own restart."""

    def allocations(self) -> list[dict[str, Any]]:
        """The new allocations (`si.Allocation`), in the order they were made."""
        return [a for r in self.records for a in r.get("allocationResponse", {}).get("new", [])]

    def released(self) -> list[dict[str, Any]]:
        return [a for r in self.records
                for a in r.get("allocationResponse", {}).get("released", [])]

    def rejected_allocations(self) -> list[dict[str, Any]]:
        return [a for r in self.records
                for a in r.get("allocationResponse", {}).get("rejectedAllocations", [])]

    def rejected_applications(self) -> list[dict[str, Any]]:
        return [a for r in self.records
                for a in r.get("applicationResponse", {}).get("rejected", [])]


class Client:
    """One service at `url` (with or without `/ws/v1`); `rm_id` names this shim."""

    def __init__(self, url: str, *, shim_token: str | None = None,
                 admin_token: str | None = None, rm_id: str = "quotactor-client",
                 timeout: float = 30.0, transport: httpx.BaseTransport | None = None) -> None:
        base = url.rstrip("/")
        if not base.endswith(PREFIX):
            base += PREFIX
        self.url = base
        self.rm_id = rm_id
        self._shim = {"Authorization": f"Bearer {shim_token}"} if shim_token else {}
        self._admin = {"Authorization": f"Bearer {admin_token}"} if admin_token else {}
        self._http = httpx.Client(base_url=base, timeout=timeout, transport=transport,
                                  limits=httpx.Limits(max_connections=32,
                                                      max_keepalive_connections=32))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- plumbing --------------------------------------------------------------------------

    def _send(self, method: str, path: str, *, body: Any = None, content: bytes | None = None,
              headers: Mapping[str, str] | None = None, params: Mapping[str, Any] | None = None,
              timeout: float | None = None) -> httpx.Response:
        extra: dict[str, Any] = {}
        if timeout is not None:
            extra["timeout"] = timeout
        response = self._http.request(method, path, json=body, content=content,
                                      headers=dict(headers or {}), params=params, **extra)
        if response.status_code >= 400:
            try:
                error = response.json()
                raise ServiceError(response.status_code, str(error.get("message", "")),
                                   str(error.get("description", "")))
            except (ValueError, AttributeError):
                raise ServiceError(response.status_code, response.reason_phrase,
                                   response.text[:200]) from None
        return response

    def _get(self, path: str, **params: Any) -> Any:
        wanted = {k: v for k, v in params.items() if v is not None}
        return self._send("GET", path, params=wanted).json()

    # -- the shim API: raw scheduler-interface messages -------------------------------------

    def node_request(self, nodes: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
        """Send a `NodeRequest`; returns `{accepted, rejected}`."""
        body = {"nodes": list(nodes), "rmID": self.rm_id}
        result: dict[str, Any] = self._send("POST", "/shim/nodes", body=body,
                                            headers=self._shim).json()
        return result

    def application_request(self, new: Iterable[Mapping[str, Any]] = (),
                            remove: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """Send an `ApplicationRequest`; returns `{accepted, rejected, removed}`."""
        body = {"new": list(new), "remove": list(remove), "rmID": self.rm_id}
        result: dict[str, Any] = self._send("POST", "/shim/applications", body=body,
                                            headers=self._shim).json()
        return result

    def allocation_request(self, allocations: Iterable[Mapping[str, Any]] = (),
                           releases: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """Send an `AllocationRequest`; returns `{rejectedAllocations, released}`."""
        body = {"allocations": list(allocations), "rmID": self.rm_id,
                "releases": {"allocationsToRelease": list(releases)}}
        result: dict[str, Any] = self._send("POST", "/shim/allocations", body=body,
                                            headers=self._shim).json()
        return result

    def decisions(self, after: int = 0, wait: float = 0.0, limit: int = 1000,
                  mine: bool = True) -> Decisions:
        """Decisions after position `after`, waiting up to `wait` seconds for the first one;
        only this shim's (`rm_id`) unless `mine` is False."""
        params: dict[str, Any] = {"after": after, "wait": wait, "limit": limit}
        if mine:
            params["rmID"] = self.rm_id
        body = self._send("GET", "/shim/decisions", params=params, headers=self._shim,
                          timeout=wait + 30.0).json()
        return Decisions(body["position"], body["missed"], tuple(body["decisions"]),
                         body.get("restarted", False))

    # -- the shim API: the common messages -------------------------------------------------

    def add_node(self, node_id: str, capacity: Mapping[str, int], *, partition: str = "",
                 schedulable: bool = True, attributes: Mapping[str, str] | None = None
                 ) -> dict[str, Any]:
        attrs = dict(attributes or {})
        if partition:
            attrs["si/node-partition"] = partition
        return self.node_request([{"nodeID": node_id,
                                   "action": "CREATE" if schedulable else "CREATE_DRAIN",
                                   "attributes": attrs,
                                   "schedulableResource": _resource(capacity)}])

    def update_node(self, node_id: str, capacity: Mapping[str, int], *, partition: str = ""
                    ) -> dict[str, Any]:
        attrs = {"si/node-partition": partition} if partition else {}
        return self.node_request([{"nodeID": node_id, "action": "UPDATE", "attributes": attrs,
                                   "schedulableResource": _resource(capacity)}])

    def remove_node(self, node_id: str, *, partition: str = "") -> dict[str, Any]:
        attrs = {"si/node-partition": partition} if partition else {}
        return self.node_request([{"nodeID": node_id, "action": "DECOMISSION",
                                   "attributes": attrs}])

    def add_application(self, application_id: str, user: str, *, groups: Iterable[str] = (),
                        queue: str = "", partition: str = "",
                        tags: Mapping[str, str] | None = None,
                        task_groups: Iterable[tuple[str, int, Mapping[str, int]]] = (),
                        gang_style: str = "", placeholder_timeout: float = 0.0
                        ) -> dict[str, Any]:
        """Add an application; `task_groups` ((name, min members, size) each) make it a gang
        (the scheduler creates its placeholders), `gang_style` Soft or Hard."""
        body: dict[str, Any] = {
            "applicationID": application_id, "queueName": queue, "partitionName": partition,
            "ugi": {"user": user, "groups": list(groups)}, "tags": dict(tags or {})}
        declared = list(task_groups)
        if declared:
            body["tags"][TASK_GROUPS_TAG] = json.dumps([
                {"name": name, "minMember": count, "minResource": dict(size)}
                for name, count, size in declared])
            total: dict[str, int] = {}
            for _, count, size in declared:
                for name, quantity in size.items():
                    total[name] = total.get(name, 0) + quantity * count
            body["placeholderAsk"] = _resource(total)
            body["gangSchedulingStyle"] = gang_style or "Soft"
            body["executionTimeoutMilliSeconds"] = round(placeholder_timeout * 1000)
        return self.application_request(new=[body])

    def remove_application(self, application_id: str, *, partition: str = ""
                           ) -> dict[str, Any]:
        return self.application_request(remove=[{"applicationID": application_id,
                                                 "partitionName": partition}])

    def ask(self, application_id: str, key: str, resource: Mapping[str, int], *,
            priority: int = 0, partition: str = "", task_group: str = "",
            tags: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Ask for one allocation; with `task_group` it replaces one of its placeholders."""
        return self.allocation_request(allocations=[{
            "allocationKey": key, "applicationID": application_id, "partitionName": partition,
            "resourcePerAlloc": _resource(resource), "priority": priority,
            "taskGroupName": task_group, "allocationTags": dict(tags or {})}])

    def recover(self, application_id: str, key: str, node_id: str,
                resource: Mapping[str, int], *, priority: int = 0, partition: str = "",
                task_group: str = "", placeholder: bool = False) -> dict[str, Any]:
        """Report an allocation that still runs on `node_id` (recovery after a restart)."""
        return self.allocation_request(allocations=[{
            "allocationKey": key, "applicationID": application_id, "partitionName": partition,
            "nodeID": node_id, "resourcePerAlloc": _resource(resource), "priority": priority,
            "taskGroupName": task_group, "placeholder": placeholder}])

    def release(self, application_id: str, key: str, *, partition: str = "",
                termination: str = "STOPPED_BY_RM") -> dict[str, Any]:
        """Release an allocation; confirm one the scheduler asked for (a `released`
        decision) with the same `termination`. Its answer's `new` lists the real allocation
        that took a replaced placeholder's place."""
        return self.allocation_request(releases=[{
            "applicationID": application_id, "allocationKey": key, "partitionName": partition,
            "terminationType": termination}])

    # -- reads -----------------------------------------------------------------------------

    def partitions(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._get("/partitions")
        return result

    def queues(self, partition: str = "default") -> dict[str, Any]:
        result: dict[str, Any] = self._get(f"/partition/{encode_name(partition)}/queues")
        return result

    def queue(self, path: str, partition: str = "default", subtree: bool = False
              ) -> dict[str, Any]:
        result: dict[str, Any] = self._get(
            f"/partition/{encode_name(partition)}/queue/{encode_name(path)}",
            subtree="" if subtree else None)
        return result

    def applications(self, state: str = "active", partition: str = "default",
                     status: str | None = None) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._get(
            f"/partition/{encode_name(partition)}/applications/{state}", status=status)
        return result

    def application(self, application_id: str, partition: str = "default") -> dict[str, Any]:
        result: dict[str, Any] = self._get(
            f"/partition/{encode_name(partition)}/application/{encode_name(application_id)}")
        return result

    def nodes(self, partition: str = "default") -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._get(f"/partition/{encode_name(partition)}/nodes")
        return result

    def users_usage(self, partition: str = "default") -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._get(
            f"/partition/{encode_name(partition)}/usage/users")
        return result

    def user_usage(self, user: str, partition: str = "default") -> dict[str, Any]:
        result: dict[str, Any] = self._get(
            f"/partition/{encode_name(partition)}/usage/user/{encode_name(user)}")
        return result

    def healthcheck(self) -> dict[str, Any]:
        result: dict[str, Any] = self._get("/scheduler/healthcheck")
        return result

    def events(self, start: int = 0, count: int | None = None) -> dict[str, Any]:
        """`EventRecordDAO`: records from id `start` on."""
        result: dict[str, Any] = self._get("/events/batch", start=start, count=count)
        return result

    def stream_events(self, start: int = 0, count: int | None = None
                      ) -> Iterator[dict[str, Any]]:
        """Event records as the server streams them (server-sent events), from id `start`;
        ends after `count` records, or when the caller stops iterating."""
        params: dict[str, Any] = {"start": start}
        if count is not None:
            params["count"] = count
        with self._http.stream("GET", "/events/stream", params=params,
                               timeout=httpx.Timeout(30.0, read=None)) as response:
            if response.status_code >= 400:
                response.read()
                raise ServiceError(response.status_code, "stream refused", response.text[:200])
            for line in response.iter_lines():
                if line.startswith("data: ") and '"InstanceUUID"' not in line[:30]:
                    yield json.loads(line[len("data: "):])
