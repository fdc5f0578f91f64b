"""An image as Shiro keeps and sends it: checked, turned upright, downscaled, stripped, re-encoded.

Pillow reads what the user pastes or attaches (PNG, JPEG, GIF's first frame, WebP, BMP), refuses
anything else or anything over :data:`MAX_INPUT_BYTES` / :data:`MAX_PIXELS` (a decompression bomb),
turns it as its EXIF orientation says, and scales it down to :data:`MAX_SIDE` pixels on its long side
(what vision models resize to anyway: more only costs tokens and upload). It is written anew, so no
metadata (EXIF GPS position, camera serial) leaves with it: a JPEG stays JPEG, the rest become PNG, and
a PNG still over :data:`MAX_OUTPUT_BYTES` becomes a JPEG.

CPU work (tens of milliseconds for a screenshot): run it in a thread.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shiro_lsp.errors import ShiroError

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

MAX_INPUT_BYTES = 20 * 1024 * 1024
MAX_PIXELS = 50_000_000
MAX_SIDE = 1568
MAX_OUTPUT_BYTES = 3_500_000
"""Under every provider's limit for one image (Anthropic's 5 MB of base64 is the lowest)."""
THUMBNAIL_SIDE = 160
JPEG_QUALITY = 85
READABLE_FORMATS = frozenset({"PNG", "JPEG", "GIF", "WEBP", "BMP"})
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"})


class NotAnImage(ShiroError):
    """What the user gave is not an image Shiro can send, said in words."""


@dataclass(frozen=True)
class Prepared:
    data: bytes
    media_type: str
    width: int
    height: int


def prepare(data: bytes, name: str) -> Prepared:
    """``data`` ready to keep and send, or :class:`NotAnImage` saying why not."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    if len(data) > MAX_INPUT_BYTES:
        raise NotAnImage(
            f"{name} is {len(data) / 1e6:.1f} MB; images up to {MAX_INPUT_BYTES // 2**20} MB are taken."
        )
    try:
        with Image.open(io.BytesIO(data)) as opened:
            if opened.format not in READABLE_FORMATS:
                raise NotAnImage(
                    f"{name} is a {opened.format} image; PNG, JPEG, GIF, WebP and BMP are taken."
                )
            if opened.width * opened.height > MAX_PIXELS:
                raise NotAnImage(f"{name} is {opened.width}x{opened.height} pixels, too large to read.")
            source_format = opened.format
            image = ImageOps.exif_transpose(opened)
            image.load()
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError) as error:
        if isinstance(error, NotAnImage):
            raise
        raise NotAnImage(f"{name} is not an image Shiro can read ({error}).") from None
    image.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    if source_format == "JPEG":
        return _encoded(image, "JPEG")
    prepared = _encoded(image, "PNG")
    return prepared if len(prepared.data) <= MAX_OUTPUT_BYTES else _encoded(image, "JPEG")


def _encoded(image: PilImage, format: str) -> Prepared:
    out = io.BytesIO()
    if format == "JPEG":
        rgb = image if image.mode == "RGB" else _flattened(image)
        rgb.save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
        return Prepared(out.getvalue(), "image/jpeg", rgb.width, rgb.height)
    kept = image if image.mode in ("RGB", "RGBA", "L", "LA", "P") else image.convert("RGBA")
    kept.save(out, "PNG", optimize=True)
    return Prepared(out.getvalue(), "image/png", kept.width, kept.height)


def _flattened(image: PilImage) -> PilImage:
    """An image with transparency, on white (JPEG has no alpha)."""
    from PIL import Image

    rgba = image.convert("RGBA")
    ground = Image.new("RGB", rgba.size, (255, 255, 255))
    ground.paste(rgba, mask=rgba.getchannel("A"))
    return ground


def thumbnail_url(data: bytes) -> str:
    """A small PNG of the image as a ``data:`` URL (the panel's chip and the resumed transcript)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as opened:
        opened.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        (opened if opened.mode in ("RGB", "RGBA", "L", "LA", "P") else opened.convert("RGBA")).save(
            out, "PNG"
        )
    return data_url(out.getvalue(), "image/png")


def image_size(data: bytes) -> tuple[int, int]:
    """Width and height of an image Shiro wrote (reads the header only)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as opened:
        return opened.width, opened.height


def data_url(data: bytes, media_type: str) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"
