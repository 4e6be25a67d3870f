"""Import the history a running YuniKorn (or `quotactor serve`) holds, through its REST API.

Read, for one partition: its nodes (the cluster file), its active and completed applications
(the jobs), the event records (each application's allocations over time, when the server keeps
them) and its config (`GET /config`, written as the queue config to replay under; when the
server gives none that quotactor accepts, a config listing the queues of `/queues`).

An application becomes one job: submitted at its `submissionTime`, started when it first went
`Starting`/`Running` (else at its first allocation), ended when it went `Completing` or
`Failing` (else at its `finishedTime`). Its tasks are its peak of concurrent allocations:
replayed from the event records, else its current allocations and pending asks, else its
`maxUsedResource` split evenly over the `pods` it counts (one task when it counts none).
Placeholders never count. Applications that never started, or (unless `include_running`) are
still running, are left out and counted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import yaml

from quotactor.config import ConfigError, load_config
from quotactor.core.errors import InvalidRequest
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.resources import QuantityError, Resource
from quotactor.sim.inputs.importers.imported import (
    MAX_SECONDS,
    FetchError,
    Imported,
    SourceError,
    build_workload,
    node_classes,
    origin_note,
    queues_config,
    resources_text,
)
from quotactor.sim.inputs.importers.quantity import replayable

if TYPE_CHECKING:  # httpx is the `client` extra, imported when an import runs
    import httpx

__all__ = ["MAX_EVENTS", "MAX_RESPONSE_BYTES", "import_yunikorn"]

PREFIX = "/ws/v1"
MAX_RESPONSE_BYTES = 256 * 2**20
"""The largest body read from one request."""
MAX_EVENTS = 1_000_000
"""Event records read at most (YuniKorn keeps 100,000 by default)."""
_EVENT_PAGE = 10_000
_APP, _SET, _ADD, _REMOVE, _APP_ALLOC = 2, 1, 2, 3, 200
_PLACEHOLDER_GONE = {502, 503}  # ALLOC_TIMEOUT, ALLOC_REPLACED: only placeholders end so
_ALLOCATION_GONE = {500, 501, 502, 503, 504}
_STARTED = ("Starting", "Running")
_ENDED = ("Completing", "Failing", "Completed", "Failed", "Expired")
_RUNNING = ("Starting", "Running", "Resuming")


def import_yunikorn(url: str, *, partition: str | None = None, include_running: bool = False,
                    now: float | None = None, timeout: float = 30.0,
                    transport: httpx.BaseTransport | None = None) -> Imported:
    """Import the partition `partition` (default: the first the server lists) of the server at
    `url` (with or without `/ws/v1`). With `include_running`, a running application counts as
    ending at `now` (seconds since the epoch of the server's clock; required then).

    Raises `FetchError` when the server cannot be reached or answers what YuniKorn would not,
    `SourceError` when it holds no job to import; the message is one line.
    """
    import httpx

    if include_running and now is None:
        raise ValueError("include_running needs the time it is now")
    base = _base_url(url)
    with httpx.Client(base_url=base, timeout=timeout, transport=transport,
                      follow_redirects=False) as client:
        server = _Server(client, base)
        names = [p.get("name") for p in server.get_list("/partitions")]
        chosen = partition or (names[0] if names else None)
        if chosen is None or chosen not in names:
            listed = ", ".join(str(n) for n in names) or "none"
            raise SourceError(f"{base}: no partition {chosen!r} (it has {listed})")
        where = f"/partition/{quote(chosen, safe='')}"
        nodes = server.get_list(f"{where}/nodes")
        apps = server.get_list(f"{where}/applications/active")
        completed = server.get_optional(f"{where}/applications/completed")
        if isinstance(completed, list):
            apps += completed
        queues = server.get_json(f"{where}/queues")
        events = server.allocation_events()
        config_text = server.get_text("/config")
    return _convert(base, chosen, nodes, apps, queues, events, config_text,
                    now if include_running else None, completed is not None)


def _base_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise FetchError(f"{url!r} is not an http(s) URL of a YuniKorn REST API")
    base = url.rstrip("/")
    return base if base.endswith(PREFIX) else base + PREFIX


@dataclass(frozen=True, slots=True)
class _Answer:
    """One answer: its status and its (decoded, bounded) body."""

    status: int
    body: bytes


class _Server:
    """GETs that answer parsed JSON (or text) of bounded size, or fail with one line."""

    def __init__(self, client: httpx.Client, base: str) -> None:
        self.client = client
        self.base = base

    def _get(self, path: str, params: Mapping[str, int] | None = None) -> _Answer:
        import httpx

        try:
            with self.client.stream("GET", path, params=params) as response:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
                    raise FetchError(f"{self.base}{path}: the answer is {declared} bytes, "
                                     f"more than the {MAX_RESPONSE_BYTES} an import reads")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise FetchError(f"{self.base}{path}: the answer is more than "
                                         f"{MAX_RESPONSE_BYTES} bytes")
                return _Answer(response.status_code, bytes(body))
        except httpx.HTTPError as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise FetchError(f"cannot read {self.base}{path}: {reason}") from None

    def _ok(self, path: str, answer: _Answer) -> _Answer:
        if answer.status != 200:
            message = ""
            try:
                body = json.loads(answer.body)
                if isinstance(body, dict):
                    message = str(body.get("message") or body.get("description") or "")
            except (ValueError, RecursionError):
                pass
            detail = f": {message[:200]}" if message else ""
            raise FetchError(f"{self.base}{path}: HTTP {answer.status}{detail}")
        return answer

    def get_optional(self, path: str) -> list[dict[str, Any]] | None:
        """A list the server may not serve (older YuniKorns): None on 400/404."""
        answer = self._get(path)
        if answer.status in (400, 404):
            return None
        return self._list(path, self._ok(path, answer))

    def get_list(self, path: str) -> list[dict[str, Any]]:
        return self._list(path, self._ok(path, self._get(path)))

    def _list(self, path: str, answer: _Answer) -> list[dict[str, Any]]:
        body = self._json(path, answer)
        if not isinstance(body, list) or not all(isinstance(item, dict) for item in body):
            raise FetchError(f"{self.base}{path}: expected a JSON list of objects")
        return body

    def _json(self, path: str, answer: _Answer) -> Any:
        try:
            return json.loads(answer.body)
        except (ValueError, RecursionError):
            raise FetchError(f"{self.base}{path}: the answer is not JSON") from None

    def get_json(self, path: str) -> Any:
        return self._json(path, self._ok(path, self._get(path)))

    def get_text(self, path: str) -> str | None:
        """The body as UTF-8 text, or None when the server does not answer 200 with it."""
        answer = self._get(path)
        if answer.status != 200:
            return None
        try:
            return answer.body.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def allocation_events(self) -> list[_AllocationEvent] | None:
        """The allocation records of applications the server still holds, oldest first;
        None when it serves no event records. At most `MAX_EVENTS` records are read."""
        found: list[_AllocationEvent] = []
        start, read = 0, 0
        while read < MAX_EVENTS:
            answer = self._get("/events/batch", {"start": start, "count": _EVENT_PAGE})
            if answer.status != 200:
                return found if read else None
            page = self._json("/events/batch", answer)
            batch = page.get("EventRecords") if isinstance(page, dict) else None
            if not isinstance(batch, list) or not batch:
                break
            read += len(batch)
            found += filter(None, map(_allocation_event, batch))
            ids = [r["id"] for r in batch if isinstance(r, dict) and isinstance(r.get("id"), int)]
            highest = page.get("HighestID")
            if not ids or not isinstance(highest, int) or max(ids) >= highest:
                break
            start = max(ids) + 1
        return found


@dataclass(frozen=True, slots=True)
class _AllocationEvent:
    """An allocation of `app` made (`added`) or ended; `placeholder` when the record marks
    `key` as a placeholder (one replaced or timed out, or asked to be)."""

    app: str
    key: str
    added: bool
    placeholder: bool
    resource: Resource


def _allocation_event(record: Any) -> _AllocationEvent | None:
    if not isinstance(record, dict) or record.get("type") != _APP:
        return None
    change, detail = record.get("eventChangeType"), record.get("eventChangeDetail")
    added = change == _ADD and detail == _APP_ALLOC
    placeholder = change in (_SET, _REMOVE) and detail in _PLACEHOLDER_GONE
    if not added and not placeholder and not (change == _REMOVE and detail in _ALLOCATION_GONE):
        return None
    app, key = record.get("objectID"), record.get("referenceID")
    resource = _event_resource(record.get("resource"))
    if not isinstance(app, str) or not isinstance(key, str) or not key or resource is None:
        return None
    return _AllocationEvent(app, key, added, placeholder, resource)


def _peaks(events: Iterable[_AllocationEvent]) -> dict[str, Counter[Resource]]:
    """Each application's peak set of concurrent real allocations (by count, first reached),
    by shape; placeholders left out."""
    per_app: dict[str, list[_AllocationEvent]] = {}
    for event in events:
        per_app.setdefault(event.app, []).append(event)
    peaks: dict[str, Counter[Resource]] = {}
    for app, sequence in per_app.items():
        placeholders = {e.key for e in sequence if e.placeholder}
        live: dict[str, Resource] = {}
        shapes: Counter[Resource] = Counter()
        peak: Counter[Resource] = Counter()
        for event in sequence:
            if event.key in placeholders:
                continue
            if event.added and event.key not in live:
                live[event.key] = event.resource
                shapes[event.resource] += 1
                if len(live) > peak.total():
                    peak = Counter(shapes)
            elif not event.added and event.key in live:
                gone = live.pop(event.key)
                shapes[gone] -= 1
                if not shapes[gone]:
                    del shapes[gone]
        peaks[app] = peak
    return peaks


def _event_resource(value: Any) -> Resource | None:
    values = value.get("resources") if isinstance(value, dict) else None
    if not isinstance(values, dict):
        return None
    plain: dict[str, Any] = {}
    for name, entry in values.items():
        plain[name] = entry.get("value") if isinstance(entry, dict) else None
    try:
        return _resource(plain)
    except (QuantityError, ValueError):
        return None


def _resource(values: Any) -> Resource:
    """A REST resource map (base units) without the dropped names; ValueError if not one."""
    if values is None:
        return Resource()
    if not isinstance(values, dict):
        raise ValueError("a resource must be a map of names to quantities")
    clean: dict[str, int] = {}
    for name, quantity in values.items():
        if isinstance(quantity, str) and quantity.isdigit():
            quantity = int(quantity)
        if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 0:
            raise ValueError(f"quantity of {name} must be a whole number, got {quantity!r}")
        clean[str(name)] = quantity
    return replayable(Resource(clean))


def _seconds(ns: Any, what: str) -> float:
    if isinstance(ns, bool) or not isinstance(ns, int) or not 0 <= ns <= MAX_SECONDS * 10**9:
        raise ValueError(f"{what} must be nanoseconds since the epoch, got {ns!r}")
    return ns / 1e9


@dataclass(frozen=True, slots=True)
class _Run:
    start: float
    end: float | None


def _run(app: Mapping[str, Any], allocations: Sequence[Mapping[str, Any]]) -> _Run | None:
    """When the application ran: None if it never started; `end` None while it runs."""
    log: list[tuple[float, str]] = []
    for entry in app.get("stateLog") or []:
        if isinstance(entry, dict):
            log.append((_seconds(entry.get("time"), "a stateLog time"),
                        str(entry.get("applicationState", ""))))
    log.sort(key=lambda item: item[0])
    started = [t for t, state in log if state in _STARTED]
    allocated = [_seconds(a.get("allocationTime"), "allocationTime") for a in allocations
                 if a.get("allocationTime") is not None]
    if started:
        start = started[0]
    elif allocated:
        start = min(allocated)
    else:
        return None
    state = str(app.get("applicationState", ""))
    if state in _RUNNING:
        return _Run(start, None)
    ended = [t for t, s in log if s in _ENDED and t >= start]
    if ended:
        return _Run(start, ended[0])
    finished = app.get("finishedTime")
    if finished is not None:
        return _Run(start, _seconds(finished, "finishedTime"))
    return _Run(start, None)


def _tasks(app: Mapping[str, Any], real: Sequence[Mapping[str, Any]],
           peak: Counter[Resource]) -> Counter[Resource]:
    """How many tasks of which shape the job holds (see the module docstring)."""
    current: Counter[Resource] = Counter()
    for allocation in real:
        current[_resource(allocation.get("resource"))] += 1
    for ask in app.get("requests") or []:
        if not isinstance(ask, dict) or ask.get("placeholder"):
            continue
        count = ask.get("pendingCount", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 10**6:
            raise ValueError(f"pendingCount must be a whole number, got {count!r}")
        current[_resource(ask.get("resource"))] += count
    chosen = current if current.total() > peak.total() else peak
    chosen = Counter({shape: n for shape, n in chosen.items() if not shape.is_empty()})
    if chosen:
        return chosen
    used = _resource_with_pods(app.get("maxUsedResource"))
    pods = used.pop("pods", 0)
    shape = replayable(used)
    if shape.is_empty():
        return Counter()
    if pods > 1 and all(q % pods == 0 for q in shape.values()):
        return Counter({Resource({n: q // pods for n, q in shape.items()}): pods})
    return Counter({shape: 1})


def _resource_with_pods(values: Any) -> dict[str, int]:
    pods = values.get("pods") if isinstance(values, dict) else None
    shape = dict(_resource(values).items())
    if isinstance(pods, int) and not isinstance(pods, bool) and 0 < pods <= 10**6:
        shape["pods"] = pods
    return shape


def _convert(base: str, partition: str, nodes: list[dict[str, Any]],
             apps: list[dict[str, Any]], queues: Any, events: list[_AllocationEvent] | None,
             config_text: str | None, now: float | None, has_completed: bool) -> Imported:
    peaks = _peaks(events or [])
    skipped: Counter[str] = Counter()
    records: list[tuple[int, str, dict[str, Any]]] = []
    problems: list[tuple[int, str]] = []
    for number, app in enumerate(_unique(apps), start=1):
        app_id = str(app.get("applicationID") or "")
        label = f"application {app_id or '#' + str(number)}"
        state = str(app.get("applicationState", ""))
        if state == "Rejected":
            skipped["rejected"] += 1
            continue
        try:
            allocations = [a for a in app.get("allocations") or []
                           if isinstance(a, dict) and not a.get("placeholder")]
            run = _run(app, allocations)
            if run is None:
                skipped["never started"] += 1
                continue
            end = run.end if run.end is not None else now
            if end is None:
                skipped["still running"] += 1
                continue
            if end < run.start:
                raise ValueError(f"ends ({end:.0f}) before it starts ({run.start:.0f})")
            tasks = _tasks(app, allocations, peaks.get(app_id, Counter()))
            submit = _seconds(app.get("submissionTime"), "submissionTime")
        except ValueError as exc:
            problems.append((number, f"{label}: {exc}"))
            continue
        if not tasks:
            problems.append((number, f"{label}: no resources known for its tasks"))
            continue
        groups = [{"name": "tasks" if i == 0 else f"tasks-{i + 1}", "count": n,
                   "resources": resources_text(shape)}
                  for i, (shape, n) in enumerate(tasks.most_common())]
        records.append((number, label, {
            "job_id": app_id, "user": app.get("user"), "groups": app.get("groups") or None,
            "queue": app.get("queueName") or None, "submit": min(submit, run.start),
            "duration": f"{end - run.start:.3f}", "taskGroups": groups}))
    if not records and not problems:
        left = ", ".join(f"{n} {why}" for why, n in skipped.items()) or "no applications"
        raise SourceError(f"{base}: partition {partition!r} has no application that ran to "
                          f"the end ({left})")
    workload, origin = build_workload(f"{base} partition {partition}", records, problems)
    config, origin_of_config = _config(config_text, partition, queues, workload)
    notes = [origin_note(origin)]
    if events is None:
        notes.append("the server keeps no event records: tasks of completed applications "
                     "come from their peak usage")
    if not has_completed:
        notes.append("the server lists no completed applications (YuniKorn before 1.5?)")
    hints = [(_hint(n), _resource(n.get("capacity"))) for n in nodes if isinstance(n, dict)]
    classes = node_classes((h, c) for h, c in hints if not c.is_empty())
    return Imported(source=f"{base} partition {partition}", workload=workload, config=config,
                    config_origin=origin_of_config, nodes=classes, skipped=dict(skipped),
                    notes=tuple(notes), fmt="jsonl")


def _unique(apps: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each application once (one can move from active to completed between two reads)."""
    seen: set[str] = set()
    for app in apps:
        key = str(app.get("applicationID"))
        if key not in seen:
            seen.add(key)
            yield app


def _hint(node: Mapping[str, Any]) -> str:
    attributes = node.get("attributes")
    if isinstance(attributes, dict):
        for key in ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type",
                    "si/instance-type"):
            value = attributes.get(key)
            if isinstance(value, str) and value:
                return value
    return "node"


def _config(text: str | None, partition: str, queues: Any, workload: Any) -> tuple[str, str]:
    """The server's config when quotactor accepts it and it has `partition`; else one with
    the queues of the tree (and of the jobs) and no limits."""
    if text is not None:
        try:
            config = load_config(text)
            if any(p.name == partition for p in config.partitions):
                return text, "the server's config"
        except (ConfigError, yaml.YAMLError, ValueError):
            pass
    paths = set(_queue_paths(queues)) | {job.queue for job in workload.jobs if job.queue}
    why = f"The queues of partition {partition}; the server gave no config quotactor reads."
    return (queues_config(partition, paths, [{"name": "provided", "create": True}], why),
            "the queues seen, without limits")


def _queue_paths(queue: Any) -> Iterator[str]:
    if not isinstance(queue, dict):
        return
    name = queue.get("queuename")
    children = queue.get("children") or []
    if isinstance(name, str) and name.startswith("root.") and not children and _valid(name):
        yield name
    if isinstance(children, list):
        for child in children:
            yield from _queue_paths(child)


def _valid(path: str) -> bool:
    try:
        parse_queue_path(path)
    except InvalidRequest:
        return False
    return True
