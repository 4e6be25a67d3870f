from __future__ import annotations

import copy
import pickle
import re
from collections.abc import Mapping, MutableMapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quotactor.core.resources import (
    QuantityError,
    Resource,
    parse_quantity,
    parse_resource_map,
    sum_of,
)


def test_zero_entries_are_pruned_so_equal_values_compare_equal() -> None:
    assert Resource({"memory": 0, "vcore": 5}) == Resource({"vcore": 5})
    assert hash(Resource({"a": 0})) == hash(Resource())
    assert not Resource({"gpu": 0})


def test_arithmetic_is_per_name_with_missing_names_as_zero() -> None:
    a = Resource({"memory": 10, "vcore": 1000})
    b = Resource({"memory": 4, "gpu": 1})
    assert a + b == {"memory": 14, "vcore": 1000, "gpu": 1}
    assert a - b == {"memory": 6, "vcore": 1000, "gpu": -1}
    assert (a - a).is_empty()
    assert -b == {"memory": -4, "gpu": -1}


def test_resource_is_immutable() -> None:
    r = Resource({"memory": 1})
    with pytest.raises(TypeError):
        r["memory"] = 3  # type: ignore[index]
    with pytest.raises(TypeError):
        del r["memory"]  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        r.memory = 3  # type: ignore[attr-defined]
    assert r + r == {"memory": 2} and -r == {"memory": -1} and r.scaled(3) == {"memory": 3}
    assert r == {"memory": 1}


def test_a_sum_or_difference_with_nothing_shares_its_operand() -> None:
    # values are immutable: no copy is made where nothing changes (a node's bookkeeping on
    # unit-size nodes then makes no new value per task)
    r = Resource({"vcore": 1000})
    empty = Resource()
    assert r + empty is r and empty + r is r and r - empty is r
    assert empty + empty is empty and (r - r) is (-empty) is sum_of([]) is r.restricted_to(["gpu"])
    assert (r - r) == {} and not (r - r)
    assert r.scaled(1) is r and r.scaled(2) == {"vcore": 2000} and r.scaled(0) is empty.scaled(5)


def test_resource_is_a_read_only_mapping() -> None:
    r = Resource({"memory": 4, "vcore": 1000})
    assert isinstance(r, Mapping) and not isinstance(r, MutableMapping)
    assert dict(r) == {"memory": 4, "vcore": 1000} and {**r} == dict(r)
    assert sorted(r) == ["memory", "vcore"] and len(r) == 2 and "memory" in r
    assert r.get("gpu") == 0 and r.get("gpu", None) is None and r["vcore"] == 1000
    assert r != {"memory": 4} and r == {"memory": 4, "vcore": 1000, "gpu": 0}
    assert pickle.loads(pickle.dumps(r)) == r and copy.deepcopy(r) is r


def test_non_integer_quantities_are_rejected() -> None:
    for bad in (1.5, "3", None, True):
        with pytest.raises(QuantityError):
            Resource({"memory": bad})  # type: ignore[dict-item]
    with pytest.raises(QuantityError):
        Resource({"": 1})


@pytest.mark.parametrize("bad", [5, 1.5, "vcore", b"vcore", object(), [1, 2], [("vcore",)],
                                 [("vcore", 1, 2)]])
def test_what_is_neither_a_mapping_nor_pairs_is_refused_alike_in_both_builds(bad: Any) -> None:
    with pytest.raises(QuantityError):
        Resource(bad)
    assert Resource([("vcore", 2), ("memory", 0)]) == {"vcore": 2}


def test_fits_within_treats_names_absent_from_the_limit_as_unlimited() -> None:
    usage = Resource({"memory": 10, "vcore": 5000})
    assert usage.fits_within({"memory": 10})
    assert not usage.fits_within({"memory": 9})
    assert usage.fits_within({})
    assert usage.exceeded_names({"memory": 9, "vcore": 1}) == ("memory", "vcore")
    assert not usage.fits_within_strict({"memory": 10})


def test_component_min_and_max_cover_the_union_of_names() -> None:
    a = Resource({"x": 3, "y": 1})
    b = Resource({"x": 1, "z": 2})
    assert a.component_min(b) == {"x": 1}
    assert a.component_max(b) == {"x": 3, "y": 1, "z": 2}


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("vcore", "1", 1000),
        ("vcore", "500m", 500),
        ("vcore", "2k", 2_000_000),
        ("memory", "250G", 250_000_000_000),
        ("memory", "10", 10),
        ("memory", "1Gi", 2**30),
        ("memory", " 4 Mi ", 4 * 2**20),
        ("nvidia.com/gpu", 2, 2),
        ("memory", "1E", 10**18),
    ],
)
def test_yunikorn_quantities_parse_to_base_units(name: str, text: object, value: int) -> None:
    assert parse_quantity(name, text) == value


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("memory", "100m", "invalid suffix"),
        ("memory", "1K", "invalid suffix"),
        ("memory", "1ki", "invalid suffix"),
        ("memory", "-1", "invalid quantity"),
        ("memory", "1.5G", "invalid quantity"),
        ("memory", "", "invalid quantity"),
        ("memory", "10E", "overflow"),
        ("vcore", True, "invalid quantity"),
    ],
)
def test_bad_quantities_are_rejected_with_the_yunikorn_reason(
    name: str, text: object, reason: str
) -> None:
    with pytest.raises(QuantityError, match=reason):
        parse_quantity(name, text)


def test_a_resource_map_from_config_parses_each_name() -> None:
    assert parse_resource_map({"memory": "1Gi", "vcore": "500m"}) == {
        "memory": 2**30, "vcore": 500,
    }


@given(st.dictionaries(st.one_of(st.text(max_size=3), st.integers(-1, 1)),
                       st.one_of(st.integers(-2**40, 2**40), st.booleans(),
                                 st.floats(allow_nan=False), st.none()), max_size=4))
def test_of_a_plain_dict_is_the_checked_constructor_result(values: dict[Any, Any]) -> None:
    """`Resource.of` of a dict (its own fast path) equals `Resource(dict)`, raises what it
    raises, and keeps no reference to the caller's dict."""
    try:
        want = Resource(values)
    except QuantityError as exc:
        with pytest.raises(QuantityError, match=re.escape(str(exc))):
            Resource.of(values)
        return
    got = Resource.of(values)
    assert got == want and hash(got) == hash(want) and dict(got.items()) == dict(want.items())
    values["extra"] = 1
    assert "extra" not in got


def test_sum_of_adds_resources_and_mappings_and_prunes_zeros() -> None:
    one = Resource({"vcore": 1000, "memory": 2})
    assert sum_of([one, one, one]) == Resource({"vcore": 3000, "memory": 6})
    assert sum_of([one, -one]) == Resource() and not sum_of([one, -one])
    assert dict(sum_of([one, Resource({"memory": -2})]).items()) == {"vcore": 1000}
    assert sum_of([one, {"vcore": 1}]) == Resource({"vcore": 1001, "memory": 2})
    assert sum_of([]) == Resource()
    with pytest.raises(QuantityError):
        sum_of([one, {"vcore": 1.5}])  # type: ignore[list-item]
