"""The shim API's bodies: YuniKorn's scheduler-interface messages in protobuf-JSON form.

`NodeRequest`, `ApplicationRequest` and `AllocationRequest` carry the field names of `si.proto`
(`nodeID`, `schedulableResource`, `applicationID`, `ugi`, `allocationKey`, `resourcePerAlloc`,
`releases.allocationsToRelease`, ...). As in protobuf-JSON, enums may be given by name or by
number and 64-bit quantities as numbers or decimal strings (never `true` or `false`). Unknown
fields are refused, so a misspelt field is a 400 naming it rather than a silently ignored
request. Every string is bounded (`MAX_NAME` for ids and names, `MAX_TEXT` for tag values and
messages) and holds no control character; a user name follows YuniKorn's user name syntax, as
`/usage/user/{user}` does, so every user the shim names can be looked up. The answers' models
at the end document the responses in the OpenAPI document.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, WithJsonSchema

from quotactor.core.identity import USER_NAME
from quotactor.scheduler.objects.gang import TASK_GROUPS_TAG

__all__ = [
    "AddApplicationRequest",
    "Allocation",
    "AllocationAnswer",
    "AllocationRelease",
    "AllocationReleasesRequest",
    "AllocationRequest",
    "ApplicationAnswer",
    "ApplicationRequest",
    "Decision",
    "Decisions",
    "NodeInfo",
    "NodeRequest",
    "NodeResponse",
    "Quantity",
    "RemoveApplicationRequest",
    "SiResource",
    "TaskGroupSpec",
    "UserGroupInformation",
]

NODE_ACTIONS = ("UNKNOWN_ACTION_FROM_RM", "CREATE", "UPDATE", "DRAIN_NODE", "DECOMISSION",
                "DRAIN_TO_SCHEDULABLE", "CREATE_DRAIN")
TERMINATION_TYPES = ("UNKNOWN_TERMINATION_TYPE", "STOPPED_BY_RM", "TIMEOUT",
                     "PREEMPTED_BY_SCHEDULER", "PLACEHOLDER_REPLACED")
MAX_ITEMS = 10_000
"""Items in one request; larger batches are split by the client."""
MAX_NAME = 1024
"""Characters in an id, a name, a queue or partition name, `rmID`, a tag's or attribute's key."""
MAX_TEXT = 65_536
"""Characters in a tag's or attribute's value (a gang's task-groups tag is JSON) or a message."""
MAX_TAGS = 256
"""Entries in one tags or attributes map."""
PRINTABLE = r"^[^\x00-\x1f\x7f]*$"
"""No control character (NUL included): what every string of a request must match."""
NAMING = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
"""`PRINTABLE`, and not only white space: what an id or a name must match."""


def _enum(names: tuple[str, ...]) -> Any:
    def parse(value: object) -> str:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
            return names[value]
        if isinstance(value, str) and value in names:
            return value
        raise ValueError(f"must be one of {', '.join(names)} (or its number)")
    return BeforeValidator(parse)


def _enum_schema(names: tuple[str, ...], first: int) -> WithJsonSchema:
    """The names and numbers from `first` on: those the server takes (a node action must be
    set, so `UNKNOWN_ACTION_FROM_RM` (0) is left out of it)."""
    return WithJsonSchema({"anyOf": [
        {"type": "string", "enum": list(names[first:])},
        {"type": "integer", "enum": list(range(first, len(names)))},
    ]})


def _integer(value: object) -> object:
    """An integer as protobuf-JSON sends it: a number or a decimal string, never a boolean
    (which pydantic would otherwise take as 0 or 1)."""
    if isinstance(value, bool):
        raise ValueError("must be an integer, not a boolean")
    return value


NodeAction = Annotated[str, _enum(NODE_ACTIONS), _enum_schema(NODE_ACTIONS, 1)]
TerminationType = Annotated[str, _enum(TERMINATION_TYPES), _enum_schema(TERMINATION_TYPES, 0)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME, pattern=NAMING)]
"""An id or a name: 1 to `MAX_NAME` characters, none a control character, not all blank."""
OptionalName = Annotated[str, Field(max_length=MAX_NAME, pattern=PRINTABLE)]
"""A name that may be empty (a default partition, no queue, no task group)."""
Text = Annotated[str, Field(max_length=MAX_TEXT, pattern=PRINTABLE)]
UserName = Annotated[str, Field(min_length=1, max_length=MAX_NAME, pattern=USER_NAME.pattern)]
"""YuniKorn's user name syntax, as `/usage/user/{user}` takes it."""
Tags = Annotated[dict[Annotated[str, Field(min_length=1, max_length=MAX_NAME,
                                           pattern=PRINTABLE)], Text],
                 Field(max_length=MAX_TAGS),
                 WithJsonSchema({"type": "object", "maxProperties": MAX_TAGS,
                                 "propertyNames": {"minLength": 1, "maxLength": MAX_NAME,
                                                   "pattern": PRINTABLE},
                                 "additionalProperties": {"type": "string",
                                                          "maxLength": MAX_TEXT,
                                                          "pattern": PRINTABLE}})]
Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1), BeforeValidator(_integer)]
Int64 = Annotated[int, Field(ge=0, le=2**63 - 1), BeforeValidator(_integer)]
"""A non-negative 64-bit integer (a quantity, a timeout)."""
JSON_SAFE = 2**53 - 1
"""The largest integer the document promises (JSON numbers beyond it lose precision in many
clients); the server takes quantities up to 2^63-1, as decimal strings too."""


def _resources_schema(least: int, entries: int) -> dict[str, Any]:
    """A `Resource.resources` map as the document states it: names as every name, quantities
    from `least`, at least `entries` of them."""
    return {"type": "object", "minProperties": entries, "maxProperties": 64,
            "propertyNames": {"minLength": 1, "maxLength": MAX_NAME, "pattern": NAMING},
            "additionalProperties": {
                "type": "object", "additionalProperties": False,
                "properties": {"value": {"type": "integer", "minimum": least,
                                         "maximum": JSON_SAFE}}}}


ASK_RESOURCE: dict[str, Any] = {
    "type": "object", "required": ["resources"], "additionalProperties": False,
    "properties": {"resources": {**_resources_schema(1, 1), "additionalProperties": {
        **_resources_schema(1, 1)["additionalProperties"], "required": ["value"]}}},
    "description": "what one allocation holds: at least one quantity above 0 (stated here as "
                   "every quantity above 0)",
}
"""An ask's `resourcePerAlloc` as the document states it (the server takes zeros beside a
positive quantity: the document is the stricter)."""


def _node_rules(schema: dict[str, Any]) -> None:
    """A node created (`CREATE`, `CREATE_DRAIN`) states its capacity."""
    schema["if"] = {"required": ["action"],
                    "properties": {"action": {"enum": ["CREATE", "CREATE_DRAIN", 1, 6]}}}
    schema["then"] = {"required": ["schedulableResource"],
                      "properties": {"schedulableResource": {"type": "object"}}}


def _application_rules(schema: dict[str, Any]) -> None:
    """A gang's fields (`placeholderAsk`, `gangSchedulingStyle`) need its task-groups tag."""
    schema["allOf"] = [
        {"if": {"required": [field], "properties": {field: condition}},
         "then": {"required": ["tags"],
                  "properties": {"tags": {"required": [TASK_GROUPS_TAG]}}}}
        for field, condition in (("placeholderAsk", {"type": "object"}),
                                 ("gangSchedulingStyle", {"minLength": 1}))
    ]


def _allocation_rules(schema: dict[str, Any]) -> None:
    """Every allocation states its resource; a (recovered) placeholder its node and task
    group."""
    schema.setdefault("required", []).append("resourcePerAlloc")
    schema["if"] = {"required": ["placeholder"],
                    "properties": {"placeholder": {"const": True}}}
    schema["then"] = {"required": ["nodeID", "taskGroupName"],
                      "properties": {"nodeID": {"minLength": 1},
                                     "taskGroupName": {"minLength": 1}}}


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


class Quantity(_Message):
    value: Int64 = 0


class SiResource(_Message):
    resources: Annotated[dict[Name, Quantity], WithJsonSchema(_resources_schema(0, 0))] = Field(
        default_factory=dict, max_length=64)

    def quantities(self) -> dict[str, int]:
        return {name: quantity.value for name, quantity in self.resources.items()}


class NodeInfo(_Message):
    model_config = ConfigDict(json_schema_extra=_node_rules)

    nodeID: Name
    action: NodeAction
    attributes: Tags = Field(default_factory=dict)
    schedulableResource: SiResource | None = None


class NodeRequest(_Message):
    nodes: list[NodeInfo] = Field(default_factory=list, max_length=MAX_ITEMS)
    rmID: OptionalName = ""


class UserGroupInformation(_Message):
    user: UserName
    groups: list[Name] = Field(default_factory=list, max_length=256)


class AddApplicationRequest(_Message):
    model_config = ConfigDict(json_schema_extra=_application_rules)

    applicationID: Name
    queueName: OptionalName = ""
    partitionName: OptionalName = ""
    ugi: UserGroupInformation
    tags: Tags = Field(default_factory=dict, description=(
        f"`{TASK_GROUPS_TAG}` makes a gang: its value is a JSON list of TaskGroupSpec"))
    executionTimeoutMilliSeconds: Annotated[Int64, WithJsonSchema(
        {"type": "integer", "minimum": 0, "maximum": JSON_SAFE})] = Field(
        default=0, description="a gang's placeholder timeout (0: 15 minutes)")
    placeholderAsk: SiResource | None = Field(default=None, description=(
        "a gang's placeholder total; must equal the task groups' (tag "
        "yunikorn.apache.org/task-groups)"))
    gangSchedulingStyle: Annotated[str, Field(max_length=MAX_NAME, pattern=PRINTABLE),
                                   WithJsonSchema({"type": "string",
                                                   "enum": ["", "Soft", "Hard"]})] = Field(
        default="", description="Soft (default) or Hard")


class TaskGroupSpec(_Message):
    """One task group of the `yunikorn.apache.org/task-groups` application tag."""

    name: Name
    minMember: Annotated[int, Field(ge=1, le=MAX_ITEMS), BeforeValidator(_integer)]
    minResource: dict[Name, Int64] = Field(max_length=64)


TASK_GROUPS = TypeAdapter(list[TaskGroupSpec])


class RemoveApplicationRequest(_Message):
    applicationID: Name
    partitionName: OptionalName = ""


class ApplicationRequest(_Message):
    new: list[AddApplicationRequest] = Field(default_factory=list, max_length=MAX_ITEMS)
    remove: list[RemoveApplicationRequest] = Field(default_factory=list, max_length=MAX_ITEMS)
    rmID: OptionalName = ""


REQUIRED_NODE_TAG = "yunikorn.apache.org/requiredNode"
"""The allocation tag that pins an ask to one node (a daemon-set pod), as YuniKorn's shim sets
it: such an ask reserves that node and preempts there (see
`quotactor.scheduler.preemption.required_node`)."""


class PreemptionPolicy(_Message):
    """YuniKorn's per-ask preemption flags. Given, they are taken as sent (YuniKorn's shim
    always sends them: `allowPreemptSelf` false for the `allow-preemption: "false"` annotation,
    `allowPreemptOther` false for a priority class with `preemptionPolicy: Never`); an ask
    without a policy may preempt and be preempted (YuniKorn's core would let a policy-less ask
    preempt nothing, but no YuniKorn shim sends one)."""

    allowPreemptSelf: bool = False
    allowPreemptOther: bool = False


class Allocation(_Message):
    model_config = ConfigDict(json_schema_extra=_allocation_rules)

    allocationKey: Name
    allocationTags: Tags = Field(default_factory=dict)
    resourcePerAlloc: Annotated[SiResource | None, WithJsonSchema(ASK_RESOURCE)] = None
    priority: Int32 = 0
    nodeID: OptionalName = Field(default="", description=(
        "set: an existing allocation the shim recovers (booked without limit checks)"))
    applicationID: Name
    partitionName: OptionalName = ""
    taskGroupName: OptionalName = Field(default="", description=(
        "a real ask of this task group replaces one of its placeholders"))
    placeholder: bool = Field(default=False, description=(
        "only on a recovered placeholder: the scheduler creates placeholders"))
    originator: bool = False
    preemptionPolicy: PreemptionPolicy | None = None


class AllocationRelease(_Message):
    partitionName: OptionalName = ""
    applicationID: Name
    terminationType: TerminationType = "STOPPED_BY_RM"
    message: Text = ""
    allocationKey: Name


class AllocationReleasesRequest(_Message):
    allocationsToRelease: list[AllocationRelease] = Field(default_factory=list,
                                                          max_length=MAX_ITEMS)


class AllocationRequest(_Message):
    releases: AllocationReleasesRequest | None = None
    rmID: OptionalName = ""
    allocations: list[Allocation] = Field(default_factory=list, max_length=MAX_ITEMS)


# -- answers (documented in the OpenAPI document; the handlers build them as plain JSON) ------


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class AcceptedNode(_Answer):
    nodeID: str


class RejectedNode(_Answer):
    nodeID: str
    reason: str


class NodeResponse(_Answer):
    """`si.NodeResponse`: what happened to each node of the request."""

    accepted: list[AcceptedNode]
    rejected: list[RejectedNode]


class AcceptedApplication(_Answer):
    applicationID: str


class RejectedApplication(_Answer):
    applicationID: str
    reason: str


class ApplicationAnswer(_Answer):
    """`si.ApplicationResponse`'s accepted and rejected, plus the IDs actually removed."""

    accepted: list[AcceptedApplication]
    rejected: list[RejectedApplication]
    removed: list[str]


class RejectedAllocation(_Answer):
    allocationKey: str
    applicationID: str
    reason: str


class ReleasedAllocation(_Answer):
    """`si.AllocationRelease` of something the request released (or an ask it withdrew)."""

    partitionName: str
    applicationID: str
    allocationKey: str
    terminationType: str
    message: str


class AllocationAnswer(_Answer):
    """The asks (and recovered allocations) the scheduler refused at once, what the releases
    released, and the real allocations that took the place of placeholders whose release the
    scheduler had asked for (`PLACEHOLDER_REPLACED`), also sent as a decision."""

    rejectedAllocations: list[RejectedAllocation]
    released: list[ReleasedAllocation]
    new: list[dict[str, Any]]


class Decision(_Answer):
    """One decision: exactly one of `allocationResponse` (`new`, `released`,
    `rejectedAllocations`), `applicationResponse` or `nodeResponse`, for the shim `rmID`.

    `allocationResponse.released` with `terminationType` `PLACEHOLDER_REPLACED`, `TIMEOUT` or
    `PREEMPTED_BY_SCHEDULER` is the scheduler asking the shim to release an allocation: usage
    changes only when the shim releases it with the same `terminationType`."""

    id: int
    rmID: str
    allocationResponse: dict[str, list[dict[str, Any]]] | None = None
    applicationResponse: dict[str, list[dict[str, Any]]] | None = None
    nodeResponse: dict[str, list[dict[str, Any]]] | None = None


class Decisions(_Answer):
    """A page of the decision log: pass `position` as the next `after` (0: from the start of
    the service's run). Positions name the run: they count from its start time, so a position
    of another run (the service restarted) is `restarted` and `missed`, and the page starts at
    this run's beginning; the shim must then register its nodes and applications again and
    recover its running allocations (asks with `nodeID`), as after its own restart. `missed`
    alone: decisions after `after` were already dropped (the log keeps the newest 100,000).
    With `rmID`, the other shims' decisions are passed over before `limit` counts, and
    `position` moves past them."""

    position: int
    lowest: int
    missed: bool
    restarted: bool
    decisions: list[Decision]
