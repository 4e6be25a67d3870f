"""The user group routes: usage, the config they enforce, health and metrics of the managers."""
