"""Booking asks onto nodes and the partition state a booking moves: usage, backlog, timers."""
