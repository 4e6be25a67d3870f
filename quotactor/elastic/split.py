"""Exact integer splitting of an amount by weight (largest remainder, ties by name).

Koordinator rounded each share on its own for years, which lost or invented units (three equal
borrowers of 2 GPUs got 1 each). Hamilton's method hands out the floors first and the leftover
units one by one to the largest remainders, so the shares always add up to the amount; breaking
ties by name makes the result independent of the order the parties are given in.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["split_by_weight"]


def split_by_weight(amount: int, weights: Mapping[str, int]) -> dict[str, int]:
    """Split `amount` into integer shares proportional to `weights`.

    Parties with a weight <= 0 get 0. When `amount` <= 0 or no weight is positive, everyone
    gets 0. Otherwise the shares sum to exactly `amount`.
    """
    shares = dict.fromkeys(weights, 0)
    positive = {name: w for name, w in weights.items() if w > 0}
    total_weight = sum(positive.values())
    if amount <= 0 or total_weight <= 0:
        return shares
    remainders: list[tuple[int, str]] = []
    handed_out = 0
    for name, weight in positive.items():
        share, remainder = divmod(weight * amount, total_weight)
        shares[name] = share
        handed_out += share
        remainders.append((-remainder, name))
    remainders.sort()
    for _, name in remainders[: amount - handed_out]:
        shares[name] += 1
    return shares
