"""Invariants of the runtime computation and admission over random valid trees (hypothesis)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quotactor.core.resources import Resource
from quotactor.elastic import (
    DEFAULT_QUOTA,
    ROOT_QUOTA,
    ElasticQuotaManager,
    QuotaError,
    QuotaSpec,
    QuotaStatus,
    compute_figures,
)

DIMS = ("cpu", "memory", "gpu")
FAST = settings(max_examples=100, deadline=None)


@dataclass(frozen=True)
class Scenario:
    specs: list[QuotaSpec]
    """Parents before children, as the webhook requires."""
    pods: list[tuple[str, str | None, dict[str, int], int, bool]]
    """(id, quota, request, priority, assigned)."""
    total: dict[str, int]
    scale_min: bool


@st.composite
def scenarios(draw: st.DrawFn, zero_weights: bool = True, scale_min: bool | None = None,
              ) -> Scenario:
    """A tree the webhook accepts (mins within maxes and within the parent's min, child
    names within the parent's), pods on its leaves and the default group, and a total."""
    dims = draw(st.lists(st.sampled_from(DIMS), min_size=1, max_size=3, unique=True))
    specs: list[QuotaSpec] = []
    low_weight = 0 if zero_weights else 1

    def grow(parent: QuotaSpec | None, depth: int) -> None:
        budget = dict(parent.min) if parent is not None else None
        names = sorted(parent.max) if parent is not None else dims
        for index in range(draw(st.integers(1 if parent is None else 0, 4))):
            name = f"{parent.name if parent else 'q'}-{index}"
            high = {d: draw(st.integers(1, 60)) for d in names}
            low: dict[str, int] = {}
            for d in names:
                cap = high[d] if budget is None else min(high[d], budget.get(d, 0))
                low[d] = draw(st.integers(0, cap))
                if budget is not None:
                    budget[d] = budget.get(d, 0) - low[d]
            weight = draw(st.none() | st.fixed_dictionaries(
                {d: st.integers(low_weight, 9) for d in names}))
            spec = QuotaSpec(name, parent=parent.name if parent else None,
                             is_parent=depth < 3 and draw(st.booleans()), min=low, max=high,
                             shared_weight=weight, allow_lent=draw(st.booleans()))
            specs.append(spec)
            if spec.is_parent:
                grow(spec, depth + 1)

    grow(None, 1)
    leaves = [s.name for s in specs if not s.is_parent]
    pods = []
    for index in range(draw(st.integers(0, 25))):
        quota = draw(st.sampled_from([*leaves, None])) if leaves else None
        request = {d: draw(st.integers(0, 30)) for d in dims}
        pods.append((f"pod-{index}", quota, request, draw(st.integers(0, 3)),
                     draw(st.booleans())))
    total = {d: draw(st.integers(0, 200)) for d in dims}
    return Scenario(specs, pods, total,
                    draw(st.booleans()) if scale_min is None else scale_min)


def build(scenario: Scenario, shuffle: random.Random | None = None) -> ElasticQuotaManager:
    eq = ElasticQuotaManager(total=scenario.total, scale_min=scenario.scale_min)
    specs = list(scenario.specs)
    pods = list(scenario.pods)
    if shuffle is not None:
        depth = {s.name: 0 for s in specs}
        for spec in specs:
            depth[spec.name] = depth.get(spec.parent or "", 0) + 1
        shuffle.shuffle(specs)
        specs.sort(key=lambda s: depth[s.name])
        shuffle.shuffle(pods)
    for spec in specs:
        eq.upsert(spec)
    for pod_id, quota, request, priority, assigned in pods:
        eq.add_pod(pod_id, quota, request, priority)
        if assigned:
            eq.assign_pod(pod_id)
    return eq


def normal(eq: ElasticQuotaManager) -> list[QuotaStatus]:
    return [s for s in eq.statuses() if s.depth > 0 and s.spec.max
            and s.name != DEFAULT_QUOTA]


def figures(status: QuotaStatus) -> tuple[Resource, ...]:
    return (status.request, status.limited_request, status.used, status.runtime,
            status.effective_min)


def assert_matches_full_recompute(eq: ElasticQuotaManager) -> None:
    expected = compute_figures(eq.specs(), eq.pods(), eq.total, eq.scale_min)
    for status in eq.statuses():
        full = expected[status.name]
        assert figures(status) == (full.request, full.limited_request, full.used,
                                   full.runtime, full.effective_min), status.name


@pytest.mark.slow
@FAST
@given(scenarios())
def test_runtime_never_exceeds_max(scenario: Scenario) -> None:
    for status in normal(build(scenario)):
        assert status.runtime.fits_within(status.spec.max), status.name


@pytest.mark.slow
@FAST
@given(scenarios(zero_weights=False))
def test_runtime_reaches_min_when_requested_and_the_cluster_holds_the_mins(
        scenario: Scenario) -> None:
    eq = build(scenario)
    first_level = [s for s in normal(eq) if s.depth == 1]
    available = eq.available()
    for dim in scenario.total:
        if sum(s.spec.min.get(dim, 0) for s in first_level) > available.get(dim, 0):
            return
    for status in normal(eq):
        for dim, low in status.spec.min.items():
            if status.limited_request.get(dim, 0) >= low:
                assert status.runtime.get(dim, 0) >= low, (status.name, dim)


@pytest.mark.slow
@FAST
@given(scenarios(scale_min=True))
def test_children_never_get_more_than_their_parent_when_mins_scale(scenario: Scenario) -> None:
    eq = build(scenario)
    by_name = {s.name: s for s in eq.statuses()}
    for parent in by_name.values():
        if not parent.spec.is_parent:
            continue
        children = [by_name[c] for c in parent.children if by_name[c].spec.max
                    and c != DEFAULT_QUOTA and by_name[c].depth > 0]
        given_out = sum((c.runtime for c in children), Resource())
        if parent.name == ROOT_QUOTA:
            given_out = given_out.restricted_to({d for c in children for d in c.spec.max})
        assert given_out.fits_within_strict(parent.runtime), parent.name


@pytest.mark.slow
@FAST
@given(scenarios(), st.randoms(use_true_random=False))
def test_the_result_does_not_depend_on_the_order_of_children_or_pods(
        scenario: Scenario, rng: random.Random) -> None:
    one, other = build(scenario), build(scenario, shuffle=rng)
    assert [(s.name, figures(s)) for s in one.statuses()] == [
        (s.name, figures(s)) for s in other.statuses()]


@pytest.mark.slow
@FAST
@given(scenarios(), st.randoms(use_true_random=False))
def test_admission_never_lets_used_exceed_runtime(scenario: Scenario,
                                                  rng: random.Random) -> None:
    pending = Scenario(scenario.specs, [(i, q, r, p, False) for i, q, r, p, _ in scenario.pods],
                       scenario.total, scenario.scale_min)
    eq = build(pending)
    order = [pod[0] for pod in pending.pods]
    rng.shuffle(order)
    for pod_id in order:
        decision = eq.reserve(pod_id)
        status = eq.status(decision.quota)
        if decision.ok and status.spec.max:
            assert status.used.restricted_to(status.spec.max).fits_within_strict(
                status.runtime), pod_id
        assert eq.pod(pod_id).assigned == decision.ok


@pytest.mark.slow
@FAST
@given(scenarios(), st.data())
def test_incremental_recompute_equals_a_full_recompute_after_random_changes(
        scenario: Scenario, data: st.DataObject) -> None:
    eq = build(scenario)
    eq.statuses()
    for step in range(data.draw(st.integers(1, 12))):
        _random_change(eq, data, f"new-{step}")
        if data.draw(st.booleans()):
            assert_matches_full_recompute(eq)
    assert_matches_full_recompute(eq)


def _random_change(eq: ElasticQuotaManager, data: st.DataObject, new_pod: str) -> None:
    pods = [p.id for p in eq.pods()]
    specs = [s for s in eq.specs() if s.name != DEFAULT_QUOTA]
    names = sorted({d for s in specs for d in s.max} | set(eq.total) | {"cpu"})
    kind = data.draw(st.sampled_from(["pod", "assign", "unassign", "remove-pod", "total",
                                      "respec", "move", "remove-quota"]))
    amounts = st.fixed_dictionaries({d: st.integers(0, 40) for d in names})
    if kind == "pod" or (not pods and kind in ("assign", "unassign", "remove-pod")):
        quotas = [s.name for s in specs if not s.is_parent] + [DEFAULT_QUOTA]
        eq.add_pod(new_pod, data.draw(st.sampled_from(quotas)), data.draw(amounts))
    elif kind in ("assign", "unassign", "remove-pod"):
        pod_id = data.draw(st.sampled_from(pods))
        {"assign": eq.assign_pod, "unassign": eq.unassign_pod,
         "remove-pod": eq.remove_pod}[kind](pod_id)
    elif kind == "total":
        eq.set_total(data.draw(amounts))
    elif specs:
        spec = data.draw(st.sampled_from(specs))
        _try_respec(eq, spec, kind, data)


def _try_respec(eq: ElasticQuotaManager, spec: QuotaSpec, kind: str,
                data: st.DataObject) -> None:
    """A change the webhook may refuse; a refusal must leave everything as it was."""
    before = [(s.name, figures(s)) for s in eq.statuses()]
    try:
        if kind == "remove-quota":
            eq.remove(spec.name)
        elif kind == "move":
            parents = [s.name for s in eq.specs() if s.is_parent] + [ROOT_QUOTA]
            eq.upsert(QuotaSpec(spec.name, data.draw(st.sampled_from(parents)), spec.is_parent,
                                spec.min, spec.max, spec.shared_weight, spec.allow_lent))
        else:
            scale = data.draw(st.integers(0, 3))
            eq.upsert(QuotaSpec(spec.name, spec.parent, spec.is_parent,
                                Resource({d: v * scale // 2 for d, v in spec.min.items()}),
                                Resource({d: v * scale for d, v in spec.max.items()}),
                                data.draw(st.none() | st.just({d: 1 for d in spec.max})),
                                data.draw(st.booleans())))
    except QuotaError:
        assert [(s.name, figures(s)) for s in eq.statuses()] == before
