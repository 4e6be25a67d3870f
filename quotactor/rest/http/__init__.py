"""HTTP hardening shared by every route: raw-path routing and name decoding, bounded and timed
bodies and headers, one error shape, JSON rendering, and the access log."""
