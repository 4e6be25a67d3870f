"""Koordinator `ElasticQuota` objects (multi-document YAML) into `QuotaSpec`s.

Reads what a cluster admin would `kubectl apply`: `spec.min`/`spec.max` as Kubernetes
quantities, and Koordinator's labels and annotations for the tree and the sharing rules.
`List` objects (`kubectl get -o yaml`) are accepted too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from quotactor.elastic.errors import QuotaError
from quotactor.elastic.quantity import parse_quantity, parse_resource_list
from quotactor.elastic.spec import QuotaSpec

__all__ = [
    "ALLOW_LENT_LABEL",
    "IS_PARENT_LABEL",
    "PARENT_LABEL",
    "SHARED_WEIGHT_ANNOTATION",
    "load_elastic_quotas",
    "parent_first",
]

PREFIX = "quota.scheduling.koordinator.sh/"
PARENT_LABEL = PREFIX + "parent"
LEGACY_PARENT_LABEL = PREFIX + "parent-quota-name"
IS_PARENT_LABEL = PREFIX + "is-parent"
ALLOW_LENT_LABEL = PREFIX + "allow-lent-resource"
SHARED_WEIGHT_ANNOTATION = PREFIX + "shared-weight"


def load_elastic_quotas(yaml_text: str) -> list[QuotaSpec]:
    """Every `ElasticQuota` of the YAML stream, in document order.

    Raises `QuotaError` naming the document (1-based) for YAML errors, other kinds, missing
    names or bad quantities. The tree itself is validated when the specs are upserted.
    """
    try:
        documents = list(yaml.safe_load_all(yaml_text))
    except yaml.YAMLError as exc:
        raise QuotaError(f"invalid YAML: {exc}") from None
    specs: list[QuotaSpec] = []
    for number, document in enumerate(documents, start=1):
        if document is None:
            continue
        for item in _objects(document, number):
            try:
                specs.append(_spec(item))
            except QuotaError as exc:
                raise QuotaError(f"document {number}: {exc}") from None
    names = [spec.name for spec in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise QuotaError(f"quota {duplicates[0]} is declared more than once")
    return specs


def parent_first(specs: list[QuotaSpec]) -> list[QuotaSpec]:
    """`specs` reordered so that each comes after its parent when both are in the list
    (Koordinator refuses a quota whose parent does not exist yet)."""
    by_name = {spec.name: spec for spec in specs}
    ordered: list[QuotaSpec] = []
    placed: set[str] = set()

    def place(spec: QuotaSpec, path: tuple[str, ...]) -> None:
        if spec.name in placed or spec.name in path:
            return
        parent = by_name.get(spec.parent) if spec.parent is not None else None
        if parent is not None:
            place(parent, (*path, spec.name))
        placed.add(spec.name)
        ordered.append(spec)

    for spec in specs:
        place(spec, ())
    return ordered


def _objects(document: Any, number: int) -> list[Mapping[str, Any]]:
    if not isinstance(document, Mapping):
        raise QuotaError(f"document {number}: not a Kubernetes object")
    kind = document.get("kind")
    if kind in ("List", "ElasticQuotaList"):
        items = document.get("items") or []
        if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
            raise QuotaError(f"document {number}: items must be a list of objects")
        for item in items:
            if item.get("kind", "ElasticQuota") != "ElasticQuota":
                raise QuotaError(f"document {number}: kind {item.get('kind')} is not "
                                 f"ElasticQuota")
        return list(items)
    if kind != "ElasticQuota":
        raise QuotaError(f"document {number}: kind {kind} is not ElasticQuota")
    return [document]


def _spec(item: Mapping[str, Any]) -> QuotaSpec:
    metadata = _mapping(item.get("metadata"), "metadata")
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise QuotaError("metadata.name is missing")
    labels = _mapping(metadata.get("labels"), f"labels of quota {name}")
    annotations = _mapping(metadata.get("annotations"), f"annotations of quota {name}")
    body = _mapping(item.get("spec"), f"spec of quota {name}")
    parent = labels.get(PARENT_LABEL) or labels.get(LEGACY_PARENT_LABEL) or None
    return QuotaSpec(
        name=name,
        parent=str(parent) if parent is not None else None,
        is_parent=str(labels.get(IS_PARENT_LABEL, "")).lower() == "true",
        min=parse_resource_list(body.get("min"), f"min of quota {name}"),
        max=parse_resource_list(body.get("max"), f"max of quota {name}"),
        shared_weight=_shared_weight(name, annotations.get(SHARED_WEIGHT_ANNOTATION)),
        allow_lent=str(labels.get(ALLOW_LENT_LABEL, "true")).lower() != "false",
    )


def _shared_weight(name: str, text: object) -> dict[str, int] | None:
    """The annotation as a mapping that keeps zeros (an explicit 0 means "never borrows")."""
    if text is None or text == "":
        return None
    try:
        values = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise QuotaError(f"shared-weight of quota {name} is not JSON: {exc}") from None
    weights = _mapping(values, f"shared-weight of quota {name}")
    return {str(key): parse_quantity(str(key), value) for key, value in weights.items()}

def _mapping(value: object, what: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise QuotaError(f"{what} must be a mapping")
    return value
