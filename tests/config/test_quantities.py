"""Config quantities keep explicit zeros and compare as YuniKorn compares them."""

from __future__ import annotations

import pytest

from quotactor.config import Quantities
from quotactor.config.quantities import format_value
from quotactor.core.resources import Resource


def test_explicit_zeros_are_kept_and_mean_none_allowed() -> None:
    limit = Quantities({"memory": 10, "gpu": 0})
    assert dict(limit) == {"memory": 10, "gpu": 0}
    assert limit.exceeded_by({"gpu": 1}) == ("gpu",)
    assert limit.resource == Resource({"memory": 10})


def test_names_a_maximum_leaves_out_are_unlimited() -> None:
    assert Quantities({"memory": 10}).exceeded_by({"vcore": 10**9}) == ()
    assert Quantities().exceeded_by({"memory": 1}) == ()


def test_the_tighter_of_two_maximums_keeps_every_name() -> None:
    tight = Quantities({"memory": 10, "vcore": 5}).min_with({"memory": 7, "gpu": 1})
    assert dict(tight) == {"memory": 7, "vcore": 5, "gpu": 1}


def test_zero_means_all_zero_or_nothing_stated() -> None:
    assert Quantities().is_zero() and Quantities({"a": 0}).is_zero()
    assert not Quantities({"a": 0, "b": 1}).is_zero()


def test_sums_add_per_name() -> None:
    assert dict(Quantities({"a": 1}) + {"a": 2, "b": 3}) == {"a": 3, "b": 3}


@pytest.mark.parametrize(("name", "value", "text"), [
    ("memory", 300 * 10**9, "300G"),
    ("memory", 2**30, "1Gi"),
    ("memory", 1500, "1500"),
    ("memory", 0, "0"),
    ("vcore", 2000, "2"),
    ("vcore", 500, "500m"),
    ("vcore", 3_000_000, "3k"),
])
def test_values_are_written_as_in_a_config(name: str, value: int, text: str) -> None:
    assert format_value(name, value) == text


def test_quantities_are_integers_with_names() -> None:
    with pytest.raises(ValueError):
        Quantities({"memory": 1.5})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        Quantities({"": 1})
