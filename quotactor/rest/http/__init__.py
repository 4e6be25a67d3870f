"""HTTP hardening shared by every route: raw-path routing and name decoding (`names`), bounded,
timed and always-JSON bodies (`body`), headers and connections (`protocol`), one error shape
(`errors`), and the access log (`access_log`)."""
