"""The exact integer split and the per-dimension water-filling of seed 002."""

from __future__ import annotations

from quotactor.elastic import Claim, redistribute, scaled_mins, split_by_weight


def test_the_seed_example_gives_b_c_d_their_documented_runtimes() -> None:
    # Total 100; A lends 5 of its min 10, so B, C, D share 45 by weights 60/50/80:
    # 14/12/19; B only needs 5 more and gives 9 back, which C and D share 3/6.
    runtime = redistribute(100, [
        Claim("A", request=5, min=10, weight=40, lends=True),
        Claim("B", request=20, min=15, weight=60, lends=True),
        Claim("C", request=40, min=20, weight=50, lends=True),
        Claim("D", request=70, min=15, weight=80, lends=True),
    ])
    assert runtime == {"A": 5, "B": 20, "C": 35, "D": 40}


def test_the_first_weighted_round_of_the_seed_example_is_14_12_19() -> None:
    assert split_by_weight(45, {"B": 60, "C": 50, "D": 80}) == {"B": 14, "C": 12, "D": 19}
    assert split_by_weight(9, {"C": 50, "D": 80}) == {"C": 3, "D": 6}


def test_a_split_always_adds_up_to_the_amount() -> None:
    assert split_by_weight(2, {"a": 1, "b": 1, "c": 1}) == {"a": 1, "b": 1, "c": 0}
    assert sum(split_by_weight(3, {f"q{i}": 1 for i in range(10)}).values()) == 3
    assert sum(split_by_weight(10, {"a": 1, "b": 1, "c": 1}).values()) == 10


def test_split_ties_go_to_the_smaller_name_whatever_the_order() -> None:
    assert split_by_weight(1, {"b": 1, "a": 1}) == {"a": 1, "b": 0}
    assert split_by_weight(1, {"a": 1, "b": 1}) == {"a": 1, "b": 0}


def test_split_gives_nothing_to_zero_weights_and_nothing_of_nothing() -> None:
    assert split_by_weight(5, {"a": 0, "b": 2}) == {"a": 0, "b": 5}
    assert split_by_weight(5, {"a": 0}) == {"a": 0}
    assert split_by_weight(0, {"a": 1}) == {"a": 0}


def test_split_is_exact_for_byte_sized_amounts() -> None:
    big = 7 * 2**40 + 3
    shares = split_by_weight(big, {"a": 3 * 2**30, "b": 5 * 2**30, "c": 1})
    assert sum(shares.values()) == big


def test_a_lender_gets_its_request_and_lends_the_rest_of_its_min() -> None:
    assert redistribute(100, [Claim("a", 5, 50, 1, True), Claim("b", 200, 10, 1, True)]) == {
        "a": 5, "b": 95}


def test_a_quota_that_does_not_lend_keeps_its_whole_min() -> None:
    assert redistribute(100, [Claim("a", 5, 50, 1, False), Claim("b", 200, 10, 1, True)]) == {
        "a": 50, "b": 50}


def test_borrowers_are_capped_at_their_request_and_the_surplus_is_shared_again() -> None:
    runtime = redistribute(100, [Claim("a", 12, 0, 1, True), Claim("b", 100, 0, 1, True),
                                 Claim("c", 100, 0, 1, True)])
    assert runtime == {"a": 12, "b": 44, "c": 44}


def test_a_zero_weight_borrower_gets_its_min_and_nothing_more() -> None:
    assert redistribute(100, [Claim("a", 50, 10, 0, True), Claim("b", 20, 0, 1, True)]) == {
        "a": 10, "b": 20}


def test_when_mins_exceed_the_total_nothing_is_shared() -> None:
    assert redistribute(10, [Claim("a", 30, 20, 1, True), Claim("b", 30, 20, 1, True)]) == {
        "a": 20, "b": 20}


def test_mins_are_scaled_in_proportion_only_when_they_do_not_fit() -> None:
    assert scaled_mins(100, {"a": 30, "b": 50}) == {"a": 30, "b": 50}
    assert scaled_mins(40, {"a": 30, "b": 50}) == {"a": 15, "b": 25}
    assert scaled_mins(10, {"a": 1, "b": 1, "c": 1, "d": 0}) == {"a": 1, "b": 1, "c": 1, "d": 0}
    assert scaled_mins(2, {"a": 1, "b": 1, "c": 1}) == {"a": 0, "b": 0, "c": 0}
    assert scaled_mins(0, {"a": 5}) == {"a": 0}
