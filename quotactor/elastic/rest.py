"""The elastic quota tree over HTTP, as a router for `quotactor.rest.start_rest_server`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from quotactor.elastic.service import ElasticQuotaService

__all__ = ["elastic_router"]


def elastic_router(service: ElasticQuotaService) -> APIRouter:
    """`GET /elastic/quotas`: every quota group's min, max, request, runtime and used.

    The answer is one consistent view taken through the engine's actor, in engine units (cpu
    in millicores, memory in bytes), nested through each group's `children`.
    """
    router = APIRouter(tags=["elastic quota"])

    @router.get("/elastic/quotas", summary="The elastic quota tree with runtime figures")
    def quota_tree() -> dict[str, Any]:
        return service.view()

    return router
