"""Pure domain logic: values, queue paths, queue trackers, limit lookup. No threads, no I/O."""

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import UserGroup
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.resources import QuantityError, Resource, parse_quantity, parse_resource_map

__all__ = [
    "InvalidRequest",
    "QuantityError",
    "Resource",
    "UserGroup",
    "parse_quantity",
    "parse_queue_path",
    "parse_resource_map",
]
