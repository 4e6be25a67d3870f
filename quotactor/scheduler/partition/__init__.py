"""A partition and its scheduling cycle, and its recovery after a restart."""
