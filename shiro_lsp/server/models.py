"""`shiro/models` and `shiro/models/detect`: what an endpoint serves and which local server runs."""

from __future__ import annotations

from shiro_lsp.providers.models import PRESET_NAMES, ModelListing, detect_local
from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, request


def listing_wire(listing: ModelListing) -> p.ModelsResult:
    return p.ModelsResult(
        base_url=listing.base_url,
        preset=listing.preset,
        models=[
            p.ModelEntry(id=m.id, context_window=m.context_window, native_tools=m.native_tools)
            for m in listing.models
        ],
        error=listing.error,
        preset_name=PRESET_NAMES[listing.preset] if listing.preset else None,
    )


def register(server: ShiroServer) -> None:
    @request(server, "shiro/models")
    async def models(ls: ShiroServer, params: p.ModelsParams) -> p.ModelsResult:
        return listing_wire(await ls.shiro.list_models(params.base_url))

    @request(server, "shiro/models/detect")
    async def detect(ls: ShiroServer, params: p.ModelsDetectParams) -> p.ModelsDetectResult:
        found = await detect_local(params.base_urls)
        return p.ModelsDetectResult(
            endpoints=[listing_wire(listing) for listing in found.endpoints], message=found.message
        )
