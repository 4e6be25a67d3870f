"""Kubernetes quantities and Koordinator ElasticQuota objects as input."""

from __future__ import annotations

import pytest

from quotactor.elastic import QuotaError, QuotaSpec, load_elastic_quotas, parent_first
from quotactor.elastic.quantity import format_quantity, parse_quantity

GI = 2**30


@pytest.mark.parametrize(("name", "text", "value"), [
    ("cpu", "4", 4000),
    ("cpu", 4, 4000),
    ("cpu", "500m", 500),
    ("cpu", "0.5", 500),
    ("cpu", 1.5, 1500),
    ("cpu", "100u", 1),
    ("memory", "40Gi", 40 * GI),
    ("memory", "1G", 10**9),
    ("memory", "1.5Ki", 1536),
    ("memory", "1e3", 1000),
    ("memory", "0.1", 1),
    ("memory", "2E", 2 * 10**18),
    ("nvidia.com/gpu", "2", 2),
    ("pods", "1500m", 2),
])
def test_quantities_follow_kubernetes_and_fractions_round_up(
        name: str, text: object, value: int) -> None:
    assert parse_quantity(name, text) == value


@pytest.mark.parametrize("text", ["", "abc", "1e", "1Xi", "1.2.3", True, None, [1]])
def test_malformed_quantities_are_refused(text: object) -> None:
    with pytest.raises(QuotaError):
        parse_quantity("memory", text)


def test_quantities_are_shown_in_their_shortest_exact_spelling() -> None:
    assert format_quantity("cpu", 4000) == "4"
    assert format_quantity("cpu", 1500) == "1500m"
    assert format_quantity("memory", 40 * GI) == "40Gi"
    assert format_quantity("memory", 1000) == "1000"
    assert format_quantity("pods", 0) == "0"


QUOTAS = """\
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: team-a
  namespace: team-a
  labels:
    quota.scheduling.koordinator.sh/parent: dept
    quota.scheduling.koordinator.sh/allow-lent-resource: "false"
  annotations:
    quota.scheduling.koordinator.sh/shared-weight: '{"cpu": "4", "memory": "0"}'
spec:
  max: {cpu: 20, memory: 40Gi, nvidia.com/gpu: 2}
  min: {cpu: "10", memory: 20Gi, nvidia.com/gpu: 1}
---
# a comment-only document is skipped
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: dept
  labels:
    quota.scheduling.koordinator.sh/is-parent: "true"
spec:
  max: {cpu: 100, memory: 400Gi, nvidia.com/gpu: 8}
"""


def test_elastic_quota_objects_become_specs_with_koordinator_labels() -> None:
    team, dept = load_elastic_quotas(QUOTAS)
    assert team == QuotaSpec(
        "team-a", parent="dept", is_parent=False,
        min={"cpu": 10_000, "memory": 20 * GI, "nvidia.com/gpu": 1},
        max={"cpu": 20_000, "memory": 40 * GI, "nvidia.com/gpu": 2},
        shared_weight={"cpu": 4000, "memory": 0}, allow_lent=False,
    )
    assert dept == QuotaSpec("dept", is_parent=True,
                             max={"cpu": 100_000, "memory": 400 * GI, "nvidia.com/gpu": 8})
    assert dept.parent is None and dept.allow_lent


def test_an_explicit_zero_weight_is_kept_and_missing_names_take_max() -> None:
    team = load_elastic_quotas(QUOTAS)[0]
    assert team.to_dict()["sharedWeight"] == {"cpu": 4000, "memory": 0, "nvidia.com/gpu": 2}


def test_parents_are_ordered_before_their_children() -> None:
    assert [s.name for s in parent_first(load_elastic_quotas(QUOTAS))] == ["dept", "team-a"]


def test_a_kubectl_list_and_bare_yaml_labels_are_accepted() -> None:
    text = """\
kind: List
items:
- kind: ElasticQuota
  metadata:
    name: a
    labels: {quota.scheduling.koordinator.sh/is-parent: true}
  spec: {max: {cpu: 1}}
- kind: ElasticQuota
  metadata:
    name: b
    labels: {quota.scheduling.koordinator.sh/allow-lent-resource: false}
  spec: {max: {cpu: 1}}
"""
    a, b = load_elastic_quotas(text)
    assert a.is_parent and not b.allow_lent


@pytest.mark.parametrize(("text", "message"), [
    ("kind: ElasticQuota\nmetadata: {}\n", "metadata.name"),
    ("kind: ResourceQuota\nmetadata: {name: a}\n", "is not ElasticQuota"),
    ("kind: ElasticQuota\nmetadata: {name: a}\nspec: {max: {cpu: lots}}\n", "invalid quantity"),
    ("kind: ElasticQuota\nmetadata:\n  name: a\n  annotations:\n"
     "    quota.scheduling.koordinator.sh/shared-weight: '{cpu'\n", "not JSON"),
    ("kind: ElasticQuota\nmetadata: {name: a}\n---\nkind: ElasticQuota\nmetadata: {name: a}\n",
     "more than once"),
    ("kind: [\n", "invalid YAML"),
])
def test_bad_objects_are_refused_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(QuotaError, match=message):
        load_elastic_quotas(text)


def test_a_refusal_names_the_document() -> None:
    with pytest.raises(QuotaError, match="document 2"):
        load_elastic_quotas("kind: ElasticQuota\nmetadata: {name: a}\n---\nkind: Pod\n")
