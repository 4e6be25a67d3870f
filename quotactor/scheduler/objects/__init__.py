"""The objects a scheduler holds: applications, asks, allocations, queues, nodes and their specs."""
