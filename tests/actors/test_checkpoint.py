"""`Checkpoint`: a change that raises half-way leaves the state as before it, even when the
rebuild itself fails for a while; refusals pass without a rebuild; copies are amortised."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest

from quotactor.actors import checkpoint as checkpoint_module
from quotactor.actors.checkpoint import Checkpoint


class Refused(ValueError):
    """The toy state's refusal: raised before any change."""


class Ledger:
    """Two accounts that must always sum to 100; a transfer changes them in two steps."""

    def __init__(self) -> None:
        self.a = 100
        self.b = 0
        self.fail_between = False

    def transfer(self, amount: int) -> int:
        if amount < 0:
            raise Refused("negative")
        self.a -= amount
        if self.fail_between:
            raise RuntimeError("half-way")
        self.b += amount
        return self.a


def test_a_change_that_raises_half_way_leaves_the_state_as_before() -> None:
    held = Checkpoint(Ledger(), (Refused,))
    assert held.change(lambda s: s.transfer(10)) == 90
    held.state.fail_between = True
    with pytest.raises(RuntimeError, match="half-way"):
        held.change(lambda s: s.transfer(5))
    assert (held.state.a, held.state.b, held.rebuilds) == (90, 10, 1)


def test_a_refusal_passes_without_a_rebuild() -> None:
    held = Checkpoint(Ledger(), (Refused,))
    with pytest.raises(Refused):
        held.change(lambda s: s.transfer(-1))
    assert held.rebuilds == 0


def test_a_rebuild_that_fails_is_owed_and_no_operation_sees_the_half_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    held = Checkpoint(Ledger(), (Refused,))
    held.change(lambda s: s.transfer(10))
    held.state.fail_between = True
    copies = {"fail": True}
    real = checkpoint_module.copy.deepcopy

    def deepcopy(value: object) -> object:
        if copies["fail"]:
            raise MemoryError("no copy now")
        return real(value)

    monkeypatch.setattr(checkpoint_module.copy, "deepcopy", deepcopy)
    with pytest.raises(RuntimeError, match="half-way"):
        held.change(lambda s: s.transfer(5))
    with pytest.raises(MemoryError):  # the owed rebuild runs first, and fails again
        held.read(lambda s: (s.a, s.b))
    copies["fail"] = False
    assert held.read(lambda s: (s.a, s.b)) == (90, 10)


def test_copies_are_amortised_against_the_time_spent_changing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a clock of the test's own (a change takes 1 ms, a copy 5 ms: real timings made this
    test fail when the first copy happened to be slow), a new copy is taken once the changes
    since the last one took more than `REBASE_RATIO` times as long as it: copies cost at most
    a tenth of the time spent changing."""
    now = [0.0]
    monkeypatch.setattr(checkpoint_module, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    real_copy = copy.deepcopy
    copies: list[float] = []

    def slow_copy(value: Any) -> Any:
        now[0] += 0.005
        copies.append(now[0])
        return real_copy(value)

    monkeypatch.setattr(checkpoint_module.copy, "deepcopy", slow_copy)

    def change(state: Ledger) -> int:
        now[0] += 0.001
        return state.transfer(0)

    held = Checkpoint(Ledger(), (Refused,))
    for _ in range(2000):
        held.change(change)
    # the first copy, then one after every 51 changes (51 ms > 10 x 5 ms)
    assert len(copies) == 1 + 2000 // 51
    assert (len(copies) - 1) * 0.005 <= 2000 * 0.001 / checkpoint_module.REBASE_RATIO


def test_a_copy_that_fails_after_a_change_does_not_fail_the_change(
        monkeypatch: pytest.MonkeyPatch) -> None:
    held = Checkpoint(Ledger(), (Refused,))

    def no_copy(value: object) -> object:
        raise MemoryError("no copy now")

    monkeypatch.setattr(checkpoint_module.copy, "deepcopy", no_copy)
    monkeypatch.setattr(checkpoint_module, "REBASE_RATIO", 0.0)  # copy after every change
    assert held.change(lambda s: s.transfer(10)) == 90
    monkeypatch.undo()
    held.state.fail_between = True
    with pytest.raises(RuntimeError, match="half-way"):
        held.change(lambda s: s.transfer(5))
    assert (held.state.a, held.state.b) == (90, 10), "rebuilt from the old base and the log"
