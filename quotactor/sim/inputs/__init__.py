"""What a replay reads: workloads from traces, job files and generators, and its cluster."""
