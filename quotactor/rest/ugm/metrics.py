"""Prometheus text for every served partition, from the managers' private registries.

Concatenating the registries' outputs would repeat `# HELP`/`# TYPE` for each family, which
Prometheus rejects; the families are merged instead: one family per metric name, holding the
samples of every partition (each labelled with its partition, so none collide). The format is
negotiated as prometheus_client's own handlers do (OpenMetrics when the scraper asks for it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from prometheus_client import generate_latest
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from quotactor.logs import get_logger
from quotactor.ugm import UserGroupManager

__all__ = ["PROMETHEUS_TEXT", "render_all"]

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"
"""The classic text format, understood by every Prometheus (spelled out: older clients lack it)."""

log = get_logger()


class _Merged(Collector):
    """The families of several registries, merged by name, then those of `extra` collectors."""

    def __init__(self, managers: Iterable[UserGroupManager],
                 extra: Sequence[Collector] = ()) -> None:
        self._managers = list(managers)
        self._extra = list(extra)

    def collect(self) -> Iterable[Metric]:
        merged: dict[str, Metric] = {}
        for manager in self._managers:
            try:
                # Refreshes the gauges read on scrape (tracked users/groups, live actors).
                manager.render_metrics()
            except RuntimeError:
                log.debug("rest.metrics_skipped", partition=manager.partition)
                continue
            for family in manager.metrics.registry.collect():
                into = merged.get(family.name)
                if into is None:
                    into = merged[family.name] = Metric(
                        family.name, family.documentation, family.type, family.unit)
                into.samples.extend(family.samples)
        return list(merged.values()) + [m for c in self._extra for m in c.collect()]


def render_all(managers: Mapping[str, UserGroupManager], accept: str | None = None,
               extra: Sequence[Collector] = ()) -> tuple[bytes, str]:
    """Every manager's metrics, one family per name, then `extra`'s (a served scheduler's
    per-tenant gauges), and their content type for `accept`."""
    try:
        encode, content_type = choose_encoder(accept or "")
    except (TypeError, ValueError):
        # prometheus_client trips over malformed versions in Accept; answer the classic format.
        encode, content_type = generate_latest, PROMETHEUS_TEXT
    return encode(_Merged(managers.values(), extra)), content_type
