"""Replaying a workload under a quota model, and what the replay records as it runs."""
