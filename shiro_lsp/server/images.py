"""`shiro/images/add`: an image the user pasted, dropped or attached, kept for the next prompt."""

from __future__ import annotations

import base64
import binascii

from shiro_lsp.errors import BadParams
from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, request


def register(server: ShiroServer) -> None:
    @request(server, "shiro/images/add")
    async def add(ls: ShiroServer, params: p.ImageAddParams) -> p.ImageInfo:
        data: bytes | None = None
        if params.data is not None:
            try:
                data = base64.b64decode(params.data, validate=True)
            except (binascii.Error, ValueError):
                raise BadParams(f"{params.name}: the image data is not base64.") from None
        kept, thumbnail = await ls.shiro.add_image(params.name, data=data, path=params.path)
        return p.ImageInfo(
            id=kept.id,
            name=kept.name,
            media_type=kept.media_type,
            width=kept.width,
            height=kept.height,
            thumbnail=thumbnail,
        )
