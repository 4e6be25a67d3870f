"""Preemption and reservations: making room for asks that fit no node as it stands."""
