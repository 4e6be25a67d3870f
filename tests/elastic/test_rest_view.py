from __future__ import annotations

import httpx

from quotactor import Resource
from quotactor.elastic import ElasticQuotaService, QuotaSpec
from quotactor.elastic.rest import elastic_router
from quotactor.rest import start_rest_server
from quotactor.ugm import UserGroupManager


def test_the_quota_tree_is_served_with_runtime_figures() -> None:
    with ElasticQuotaService.start(total=Resource({"cpu": 100})) as service, \
            UserGroupManager.start() as ugm:
        service.upsert(QuotaSpec(name="a", parent=None, is_parent=False, min={"cpu": 10},
                                 max={"cpu": 80}, shared_weight=None, allow_lent=True))
        service.add_pod("p1", "a", {"cpu": 30})
        server = start_rest_server({"default": ugm}, routers=[elastic_router(service)])
        try:
            body = httpx.get(f"{server.url}/elastic/quotas", timeout=10).json()
            assert body == service.view()
            assert "a" in str(body)
            spec = httpx.get(f"{server.url}/openapi.json", timeout=10).json()
            assert "/ws/v1/elastic/quotas" in spec["paths"]
            assert httpx.get(f"{server.url}/elastic/nope", timeout=10).status_code == 404
        finally:
            server.stop()
