"""The runtime split of one parent's resource, one dimension at a time (seed 002).

This is the heart of Koordinator's elastic quota: every child first gets the "min part" of its
runtime (borrowers their min, lenders only what they request, non-lenders their whole min);
what is left of the parent's amount is then poured into the borrowers by shared weight, each
capped at its request, and what the capped ones could not take is poured again among the rest.
When the children's mins add up to more than the parent has, the mins are first scaled down in
proportion, so that the guarantees that are given can be kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from quotactor.elastic.split import split_by_weight

__all__ = ["Claim", "redistribute", "scaled_mins"]


@dataclass(frozen=True, slots=True)
class Claim:
    """One child's stake in one resource dimension of its parent."""

    name: str
    request: int
    """The child's limited request: min(request, max)."""
    min: int
    """The effective (possibly scaled) min."""
    weight: int
    lends: bool


def redistribute(total: int, claims: Iterable[Claim]) -> dict[str, int]:
    """Each child's runtime out of `total` (the water-filling of seed 002, exact integers)."""
    runtime: dict[str, int] = {}
    borrowers: dict[str, Claim] = {}
    pool = total
    for claim in claims:
        if claim.request > claim.min:
            runtime[claim.name] = claim.min
            borrowers[claim.name] = claim
        else:
            runtime[claim.name] = claim.request if claim.lends else claim.min
        pool -= runtime[claim.name]
    while pool > 0 and borrowers:
        shares = split_by_weight(pool, {name: c.weight for name, c in borrowers.items()})
        if not any(shares.values()):
            break
        pool = 0
        hungry: dict[str, Claim] = {}
        for name, claim in borrowers.items():
            given = runtime[name] + shares[name]
            if given < claim.request:
                runtime[name] = given
                hungry[name] = claim
            else:
                pool += given - claim.request
                runtime[name] = claim.request
        borrowers = hungry
    return runtime


def scaled_mins(total: int, mins: Mapping[str, int]) -> Mapping[str, int]:
    """The mins in effect when the parent has `total` of a dimension.

    Unchanged while their sum fits (so they come back by themselves when the cluster grows);
    otherwise each is scaled to floor(total * min / sum), which never adds up to more than
    `total`. Koordinator computes the same with float64 and truncation.
    """
    wanted = sum(mins.values())
    if wanted <= total:
        return mins
    if total <= 0:
        return dict.fromkeys(mins, 0)
    return {name: total * m // wanted for name, m in mins.items()}

