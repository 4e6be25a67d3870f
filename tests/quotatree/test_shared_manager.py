"""SharedQuotaManager: one QuotaManager behind an actor, called from many threads."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from quotactor.actors.runtime import call, live_actors
from quotactor.quotatree import (
    AllocationResponse,
    Mode,
    QuotaManager,
    QuotaManagerActor,
    QuotaTreeError,
    SharedQuotaManager,
)

T = "T"
WIDE = {"R": (None, 1000, False), **{f"L{i}": ("R", 1000, False) for i in range(4)}}
TIGHT = {"R": (None, 12, False), "M": ("R", 8, False),
         **{f"L{i}": ("M" if i < 2 else "R", 3, i % 2 == 1) for i in range(4)}}


def _setup(shared: SharedQuotaManager, build: Any, nodes: Any) -> None:
    shared.add_tree_from_json(build.tree_doc(T, nodes))
    shared.set_mode(Mode.NORMAL)


def _consistent(state: dict[str, Any], requests: dict[str, int]) -> None:
    """allocated = sum of the consumers charged at or below, and within quota."""
    parent = {node: s["parent"] for node, s in state.items()}
    total = dict.fromkeys(state, 0)
    for node, s in state.items():
        for cid in s["consumers"]:
            at: str | None = node
            while at is not None:
                total[at] += requests[cid]
                at = parent[at]
    for node, s in state.items():
        assert s["allocated"]["cpu"] == total[node], node
        assert s["allocated"]["cpu"] <= s["quota"]["cpu"], node


def test_the_shared_manager_answers_like_the_manager(shared: SharedQuotaManager,
                                                     build: Any) -> None:
    assert shared.mode() is Mode.MAINTENANCE
    _setup(shared, build, TIGHT)
    shared.add_consumer(build.consumer("a", T, "L0", 2))
    response = shared.allocate(T, "a")
    assert response == AllocationResponse("a", True)
    assert shared.allocated_node(T, "a") == "L0" and shared.is_allocated(T, "a")
    assert shared.tree_names() == [T] and shared.consumer_ids() == ["a"]
    assert shared.dump(T).splitlines()[0] == "QuotaTree T: "
    assert shared.tree_state(T)["M"]["allocated"] == {"cpu": 2}
    assert shared.deallocate(T, "a")


def test_errors_in_the_actor_reach_the_caller_and_the_actor_keeps_serving(
    shared: SharedQuotaManager, build: Any,
) -> None:
    with pytest.raises(QuotaTreeError, match="invalid tree name nope"):
        shared.allocate("nope", "x")
    with pytest.raises(QuotaTreeError, match="invalid kind"):
        shared.add_tree_from_json('{"kind": "Tree"}')
    _setup(shared, build, TIGHT)
    assert shared.tree_names() == [T]


def test_concurrent_allocations_and_deallocations_keep_the_tree_consistent(
    shared: SharedQuotaManager, build: Any,
) -> None:
    _setup(shared, build, TIGHT)
    requests: dict[str, int] = {}
    for worker in range(8):
        for j in range(6):
            cid = f"w{worker}-{j}"
            requests[cid] = 1 + (worker + j) % 3
            shared.add_consumer(build.consumer(cid, T, f"L{(worker + j) % 4}", requests[cid],
                                               priority=j % 3 - 1))
    start = threading.Barrier(8)

    def work(worker: int) -> int:
        start.wait(timeout=10)
        mine = [f"w{worker}-{j}" for j in range(6)]
        successes = 0
        for round_ in range(15):
            for cid in mine:
                if shared.is_allocated(T, cid) and (round_ + len(cid)) % 2:
                    shared.deallocate(T, cid)
                elif shared.allocate(T, cid).allocated:
                    successes += 1
        return successes

    with ThreadPoolExecutor(8) as pool:
        successes = sum(pool.map(work, range(8), timeout=30))
    assert successes > 0
    state = shared.tree_state(T)
    _consistent(state, requests)
    charged = {cid for s in state.values() for cid in s["consumers"]}
    assert charged == {cid for cid in requests if shared.is_allocated(T, cid)}
    for cid in charged:
        assert shared.deallocate(T, cid)
    assert all(s["allocated"]["cpu"] == 0 for s in shared.tree_state(T).values())


def test_concurrent_trials_keep_exactly_what_their_callers_accepted(
    shared: SharedQuotaManager, build: Any,
) -> None:
    _setup(shared, build, WIDE)
    ids = [f"c{i}" for i in range(64)]
    for i, cid in enumerate(ids):
        shared.add_consumer(build.consumer(cid, T, f"L{i % 4}", 1 + i % 5))

    def decide(cid: str) -> bool:
        outcome = shared.trial(T, cid, lambda response: int(response.consumer_id[1:]) % 3 != 0)
        assert outcome.response.allocated
        return outcome.kept

    with ThreadPoolExecutor(8) as pool:
        kept = dict(zip(ids, pool.map(decide, ids, timeout=30), strict=True))
    for cid in ids:
        assert shared.is_allocated(T, cid) == kept[cid] == (int(cid[1:]) % 3 != 0)
    state = shared.tree_state(T)
    assert state["R"]["allocated"]["cpu"] == sum(1 + i % 5 for i in range(64) if i % 3)


def test_a_trial_whose_decision_raises_is_undone_and_the_error_reaches_the_caller(
    shared: SharedQuotaManager, build: Any,
) -> None:
    _setup(shared, build, WIDE)
    shared.add_consumer(build.consumer("c", T, "L0", 1))

    def explode(response: AllocationResponse) -> bool:
        raise RuntimeError("no decision")

    with pytest.raises(RuntimeError, match="no decision"):
        shared.trial(T, "c", explode)
    assert not shared.is_allocated(T, "c")
    assert shared.tree_state(T)["R"]["allocated"] == {"cpu": 0}
    assert shared.trial(T, "c", lambda response: True).kept


def test_a_refused_trial_leaves_an_earlier_try_of_the_same_consumer_alone(
    shared: SharedQuotaManager, build: Any,
) -> None:
    _setup(shared, build, WIDE)
    shared.add_consumer(build.consumer("c", T, "L0", 1))
    assert shared.try_allocate(T, "c").allocated
    outcome = shared.trial(T, "c", lambda response: False)
    assert outcome.response.message == "consumer c already allocated on tree T"
    assert not outcome.kept and shared.is_allocated(T, "c")
    assert shared.undo_allocate(T, "c") and not shared.is_allocated(T, "c")


def test_concurrent_forest_allocations_are_all_or_nothing(
    shared: SharedQuotaManager, build: Any,
) -> None:
    shared.add_tree_from_json(build.tree_doc("t1", {"R": (None, 20, False),
                                                    "A": ("R", 10, False),
                                                    "B": ("R", 10, False)}))
    shared.add_tree_from_json(build.tree_doc("t2", {"X": (None, 9, True)}, ("gpu",)))
    shared.add_forest("F")
    shared.add_tree_to_forest("F", "t1")
    shared.add_tree_to_forest("F", "t2")
    shared.set_mode(Mode.NORMAL)
    ids = [f"j{i}" for i in range(40)]
    for i, cid in enumerate(ids):
        shared.add_consumer(build.forest_consumer(
            cid, {"t1": ("AB"[i % 2], {"cpu": 1 + i % 3}), "t2": ("X", {"gpu": 1 + i % 2})},
            priority=i % 3,
        ))

    def churn(cid: str) -> bool:
        response = shared.allocate_forest("F", cid)
        if response.allocated and int(cid[1:]) % 4 == 0:
            shared.deallocate_forest("F", cid)
        return response.allocated

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(churn, ids, timeout=30))
    assert any(results)
    for cid in ids:
        assert shared.is_allocated("t1", cid) == shared.is_allocated("t2", cid), cid
    on_t1 = {c for s in shared.tree_state("t1").values() for c in s["consumers"]}
    on_t2 = {c for s in shared.tree_state("t2").values() for c in s["consumers"]}
    assert on_t1 == on_t2
    gpu = sum(1 + int(c[1:]) % 2 for c in on_t2)
    assert shared.tree_state("t2")["X"]["allocated"] == {"gpu": gpu} and gpu <= 9


def test_tree_cache_edits_are_applied_by_the_actor(shared: SharedQuotaManager,
                                                   build: Any) -> None:
    shared.add_tree_by_name("Grown")
    cache = shared.tree_cache("Grown")
    cache.add_resource_names(["cpu"])
    cache.add_node_specs({"Root": {"parent": "nil", "quota": {"cpu": "4"}},
                          "Team": {"parent": "Root", "quota": {"cpu": "2"}}})
    cache.rename_node("Team", "Crew")
    assert cache.node_names() == ["Crew", "Root"] and cache.renamed_node("Team") == "Crew"
    assert cache.resource_names() == ("cpu",)
    ids, response = shared.update_tree("Grown")
    assert ids == [] and response.is_clean()
    assert list(shared.tree_state("Grown")) == ["Root", "Crew"]
    with pytest.raises(QuotaTreeError, match="quota is missing"):
        cache.add_node_spec("Bad", {"parent": "Root"})
    with pytest.raises(QuotaTreeError):
        shared.tree_cache("missing")


def test_a_shared_manager_serves_a_given_manager_and_stops_only_its_actor(build: Any) -> None:
    qm = QuotaManager()
    qm.add_tree_from_json(build.tree_doc(T, WIDE))
    other = SharedQuotaManager.start()
    try:
        with SharedQuotaManager.start(qm, timeout=5.0) as shared:
            assert shared.running and shared.tree_names() == [T]
        assert not shared.running
        with pytest.raises(RuntimeError, match="stopped"):
            shared.tree_names()
        shared.stop()
        assert other.tree_names() == []
    finally:
        other.stop()
    assert live_actors() == {}


def test_the_actor_refuses_messages_it_does_not_know(shared: SharedQuotaManager) -> None:
    actor = shared._served.actor
    assert isinstance(actor, QuotaManagerActor)
    with pytest.raises(TypeError, match="cannot handle"):
        call(actor, "tree_cache", 5)  # type: ignore[arg-type]
    assert shared.tree_names() == []
