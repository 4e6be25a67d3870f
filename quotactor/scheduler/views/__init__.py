"""Read-only views of a scheduler: snapshots for callers, YuniKorn-shaped dicts for REST."""
