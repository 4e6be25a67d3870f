"""The shim API: YuniKorn scheduler-interface messages in, decisions out (`routes`, `models`)."""
