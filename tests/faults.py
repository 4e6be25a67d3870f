"""A facade driven through random operations while a fault is armed at one step inside it,
beside a reference manager that sees only the operations that went through: what the fault
tests of the served facades (elastic quota, Kueue) share."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from typing import Any

from quotactor.core.errors import OperationFailed, QuotactorError

Op = Callable[[Any], Any]


def run_with_faults(service: Any, reference: Any, fault: Any, rng: random.Random,
                    next_op: Callable[[random.Random, list[str], int], Op],
                    state: Callable[[Any], Any], refusal: type[Exception],
                    steps: int = 60) -> int:
    """Make `steps` operations on `service` with `fault` armed at a random step of each; an
    operation the fault fails must leave the service as it was and come out as a public
    `OperationFailed`; one refused with `refusal` or done is applied to `reference` too, and
    the two must agree after every step. Returns how many operations the fault failed."""
    items: list[str] = []
    failed = 0
    for serial in range(steps):
        op = next_op(rng, items, serial)
        before = state(reference)
        fault.arm(rng.randint(1, 3))
        try:
            op(service)
        except OperationFailed as error:
            assert isinstance(error, QuotactorError)
            assert "injected fault" in str(error.__cause__)
            failed += 1
            fault.armed = False
            assert state(service) == before, f"operation {serial} left half-done"
            continue
        except refusal:
            pass
        finally:
            fault.armed = False
        with contextlib.suppress(refusal):
            op(reference)
        assert state(service) == state(reference)
    return failed
