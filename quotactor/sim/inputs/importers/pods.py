"""Import `kubectl get pods -A -o json` output: each pod that ran to its end becomes a job.

A pod is one job of one task asking for the pod's effective request, as the Kubernetes
scheduler computes it: its containers' requests summed (with restartable init containers,
Kubernetes' sidecars), raised to the largest request of any other init container, plus the
pod's `overhead`. `cpu` becomes `vcore`; `pods`, `ephemeral-storage` and `hugepages-*` are left
out (see `quantity.DROPPED_RESOURCES`); `nvidia.com/gpu` and any other extended resource are
kept by name.

Who and where, first found wins:
- user: the label given as `user_label`; YuniKorn's `yunikorn.apache.org/user.info` annotation
  (which also gives the groups); the `yunikorn.apache.org/username` label; the namespace;
- queue: the label given as `queue_label`; `yunikorn.apache.org/queue` (label, then
  annotation); the `queue` label; else none, and the placement rules decide (each job carries
  its `namespace` tag, for YuniKorn's `tag` rule);
- times: `creationTimestamp` is the submission, `status.startTime` the start, and the latest
  `finishedAt` of its terminated containers the end.

A pod still pending (or never given a start) is left out and counted, as is one still running
unless `include_running` (then it counts as ending `now`), a finished one that states no end,
and one that asks for nothing the replay counts (a BestEffort pod). Submission times count
from the earliest one imported.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from quotactor.core.resources import QuantityError, Resource
from quotactor.sim.inputs.importers.imported import (
    MAX_SECONDS,
    Imported,
    NodeClass,
    SourceError,
    build_workload,
    node_classes,
    origin_note,
    queues_config,
    read_limited,
    resources_text,
)
from quotactor.sim.inputs.importers.quantity import k8s_resources

__all__ = ["MAX_FILE_BYTES", "MAX_PODS", "import_pods", "read_nodes"]

MAX_FILE_BYTES = 512 * 2**20
"""The largest pods (or nodes) file read, once unzipped."""
MAX_PODS = 1_000_000
"""The most pods (or nodes) one file may list."""
USER_INFO = "yunikorn.apache.org/user.info"
USER_LABEL = "yunikorn.apache.org/username"
QUEUE_KEY = "yunikorn.apache.org/queue"
APP_ID_KEYS = ("applicationId", "yunikorn.apache.org/app-id")
INSTANCE_TYPES = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_RULES = ({"name": "provided", "create": True},
          {"name": "tag", "value": "namespace", "create": True})


def import_pods(path: Path, *, nodes: Path | None = None, user_label: str | None = None,
                queue_label: str | None = None, include_running: bool = False,
                now: float | None = None, max_bytes: int = MAX_FILE_BYTES,
                max_pods: int = MAX_PODS) -> Imported:
    """The pods of `path` as a workload (see the module docstring); with `nodes` (a
    `kubectl get nodes -o json` file), the cluster too. `now` (seconds since the epoch) is
    needed with `include_running`.

    Raises `SourceError` (one line) for a file that is unreadable, too large (`max_bytes`,
    `max_pods`), not a pod list, or without a single pod that ran to its end.
    """
    if include_running and now is None:
        raise ValueError("include_running needs the time it is now")
    items = _items(path, "Pod", max_bytes, max_pods)
    skipped: Counter[str] = Counter()
    records: list[tuple[int, str, dict[str, Any]]] = []
    problems: list[tuple[int, str]] = []
    for number, pod in enumerate(items, start=1):
        label = f"pod {_name(pod) or '#' + str(number)}"
        try:
            record = _record(pod, user_label, queue_label, now if include_running else None)
        except (ValueError, QuantityError) as exc:
            problems.append((number, f"{label}: {exc}"))
            continue
        if isinstance(record, str):
            skipped[record] += 1
        else:
            records.append((number, label, record))
    if not records and not problems:
        left = ", ".join(f"{n} {why}" for why, n in skipped.items()) or "the list is empty"
        raise SourceError(f"{path}: no pod ran to its end ({left})")
    workload, origin = build_workload(str(path), records, problems)
    queues = {job.queue for job in workload.jobs if job.queue}
    config = queues_config("default", queues, _RULES,
                           f"The queues the pods of {path.name} name; the rest are placed "
                           f"in root.<namespace>.")
    classes = read_nodes(nodes, max_bytes, max_pods) if nodes is not None else ()
    return Imported(source=str(path), workload=workload, config=config,
                    config_origin="the queues the pods name, without limits", nodes=classes,
                    skipped=dict(skipped), notes=(origin_note(origin),), fmt="csv",
                    nodes_source=str(nodes or ""))


def read_nodes(path: Path, max_bytes: int = MAX_FILE_BYTES,
               max_nodes: int = MAX_PODS) -> tuple[NodeClass, ...]:
    """The nodes of a `kubectl get nodes -o json` file by class (instance type and
    allocatable resources); `SourceError` names the first node that cannot be read."""
    found: list[tuple[str, Resource]] = []
    for number, node in enumerate(_items(path, "Node", max_bytes, max_nodes), start=1):
        status = _mapping(node.get("status"))
        values = status.get("allocatable") or status.get("capacity")
        try:
            capacity = k8s_resources(values, "allocatable")
        except QuantityError as exc:
            raise SourceError(f"{path}: node {_name(node) or number}: {exc}") from None
        if capacity.is_empty():
            raise SourceError(f"{path}: node {_name(node) or number}: no allocatable resources")
        labels = _mapping(_metadata(node).get("labels"))
        hint = next((labels[k] for k in INSTANCE_TYPES if labels.get(k)), "node")
        found.append((hint, capacity))
    if not found:
        raise SourceError(f"{path}: lists no node")
    return node_classes(found)


def _items(path: Path, kind: str, max_bytes: int, max_items: int) -> list[dict[str, Any]]:
    data = read_limited(path, max_bytes, f"{kind.lower()} lists")
    try:
        document = json.loads(data)
    except UnicodeDecodeError:
        raise SourceError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise SourceError(f"{path}: JSON nested too deeply") from None
    if isinstance(document, dict) and document.get("kind") == kind:
        document = {"items": [document]}
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise SourceError(f"{path}: expected `kubectl get {kind.lower()}s -o json` output "
                          f"(an object with an `items` list)")
    if len(items) > max_items:
        raise SourceError(f"{path}: {len(items)} items; an import reads at most {max_items}")
    wrong = next((i for i, item in enumerate(items, start=1)
                  if not isinstance(item, dict) or item.get("kind", kind) != kind), None)
    if wrong is not None:
        raise SourceError(f"{path}: item {wrong} is not a {kind}")
    return items


def _record(pod: Mapping[str, Any], user_label: str | None, queue_label: str | None,
            now: float | None) -> dict[str, Any] | str:
    """The job record of one pod, or why it is left out (a reason to count)."""
    meta = _metadata(pod)
    if not isinstance(meta.get("name"), str) or not meta["name"]:
        raise ValueError("missing metadata.name")
    spec = _mapping(pod.get("spec"))
    status = _mapping(pod.get("status"))
    phase = str(status.get("phase", ""))
    start_text = status.get("startTime")
    if phase == "Pending" or not start_text:
        return "never started"
    if phase not in ("Running", "Succeeded", "Failed"):
        return f"in phase {phase or 'unknown'}"
    start = _time(start_text, "status.startTime")
    if phase == "Running":
        if now is None:
            return "still running"
        end = now
    else:
        finished = []
        for container in status.get("containerStatuses") or []:
            terminated = _mapping(_mapping(_mapping(container).get("state")).get("terminated"))
            if terminated.get("finishedAt"):
                finished.append(_time(terminated["finishedAt"], "finishedAt"))
        if not finished:
            return "finished with no end time"
        end = max(finished)
    if end < start:
        raise ValueError(f"ends ({end:.0f}) before it starts ({start:.0f})")
    request = _request(spec)
    if request.is_empty():
        return "asking for nothing"
    namespace = str(meta.get("namespace") or "default")
    labels = _mapping(meta.get("labels"))
    annotations = _mapping(meta.get("annotations"))
    user, groups = _identity(labels, annotations, user_label, namespace)
    tags = {"namespace": namespace}
    app_id = next((str(labels[k]) for k in APP_ID_KEYS if labels.get(k)), "")
    if app_id:
        tags["applicationId"] = app_id
    return {
        "job_id": f"{namespace}/{meta.get('name')}", "user": user, "groups": groups or None,
        "queue": _queue(labels, annotations, queue_label),
        "submit": _time(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
        "duration": f"{end - start:.3f}", "tasks": 1,
        "resources": resources_text(request), "tags": tags,
    }


def _request(spec: Mapping[str, Any]) -> Resource:
    """The pod's effective request (see the module docstring)."""
    total = Resource()
    for container in spec.get("containers") or []:
        total = total + _container_request(container, "containers")
    largest_init = Resource()
    sidecars = Resource()
    for container in spec.get("initContainers") or []:
        request = _container_request(container, "initContainers")
        if _mapping(container).get("restartPolicy") == "Always":
            sidecars = sidecars + request
        else:
            largest_init = largest_init.component_max(sidecars + request)
    effective = (total + sidecars).component_max(largest_init)
    return effective + k8s_resources(spec.get("overhead"), "overhead")


def _container_request(container: Any, where: str) -> Resource:
    resources = _mapping(_mapping(container).get("resources"))
    name = _mapping(container).get("name", "?")
    # Kubernetes defaults a request to the limit when only the limit is given.
    values = {**_mapping(resources.get("limits")), **_mapping(resources.get("requests"))}
    return k8s_resources(values, f"{where} {name}")


def _identity(labels: Mapping[str, Any], annotations: Mapping[str, Any],
              user_label: str | None, namespace: str) -> tuple[str, list[str]]:
    info: Mapping[str, Any] = {}
    text = annotations.get(USER_INFO)
    if isinstance(text, str) and text:
        try:
            parsed = json.loads(text[:65536])
        except ValueError:
            raise ValueError(f"annotation {USER_INFO} is not JSON") from None
        info = _mapping(parsed)
    groups = [str(g) for g in info.get("groups") or [] if isinstance(g, str)]
    if user_label and labels.get(user_label):
        return str(labels[user_label]), groups
    if isinstance(info.get("user"), str) and info["user"]:
        return str(info["user"]), groups
    if labels.get(USER_LABEL):
        return str(labels[USER_LABEL]), groups
    return namespace, groups


def _queue(labels: Mapping[str, Any], annotations: Mapping[str, Any],
           queue_label: str | None) -> str | None:
    for value in ((labels.get(queue_label) if queue_label else None), labels.get(QUEUE_KEY),
                  annotations.get(QUEUE_KEY), labels.get("queue")):
        if isinstance(value, str) and value:
            return value if value == "root" or value.startswith("root.") else f"root.{value}"
    return None


def _time(value: Any, what: str) -> float:
    if not isinstance(value, str) or len(value) > 64:
        raise ValueError(f"{what} must be an RFC 3339 time, got {str(value)[:64]!r}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{what} must be an RFC 3339 time, got {value!r}") from None
    if moment.tzinfo is None:
        raise ValueError(f"{what} must state its time zone, got {value!r}")
    seconds = moment.timestamp()
    if not 0 <= seconds <= MAX_SECONDS:
        raise ValueError(f"{what} {value!r} is before 1970 or absurdly far ahead")
    return seconds


def _metadata(item: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(item.get("metadata"))


def _name(item: Mapping[str, Any]) -> str:
    meta = _metadata(item)
    name = str(meta.get("name") or "")
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace and name else name


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}
