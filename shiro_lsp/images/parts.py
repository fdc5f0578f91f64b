"""Images in the message model, and what the model is sent for them.

A session keeps an image as a part naming it in the store (``store.py``), never its bytes::

    {"type": "image", "imageId": "<sha256>", "mediaType": "image/png", "name": "shot.png",
     "width": 1280, "height": 720}

in a user message (an image the user pasted or attached), or in the ``images`` list of a tool result
(``read_file`` of an image). :func:`for_the_model` turns them into what a request carries: for a model
that takes images, each becomes ``{"type": "image", "image": <base64>, "mediaType": ...}`` (the
providers send it as Chat Completions ``image_url`` / Responses ``input_image``), and a tool result's
images follow it in a user message of their own (no wire format carries an image inside a tool
result everywhere); for one that does not, the user's images become a line of text saying so.
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

from shiro_lsp.images.store import ImageStore, StoredImage
from shiro_lsp.messages import Message, Part

TOOL_IMAGES = "images"
"""The key of a tool-result part that carries the images the tool returned."""
_SENT_KEPT = 8


def image_part(image: StoredImage) -> Part:
    return {
        "type": "image",
        "imageId": image.id,
        "mediaType": image.media_type,
        "name": image.name,
        "width": image.width,
        "height": image.height,
    }


def is_stored_image(part: object) -> bool:
    return isinstance(part, dict) and part.get("type") == "image" and isinstance(part.get("imageId"), str)


def stored_images(messages: Sequence[Message]) -> Iterator[Part]:
    """Every stored image part the messages hold (the user's, and those of tool results), in order."""
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if is_stored_image(part):
                yield part
            elif isinstance(part, dict):
                yield from (image for image in part.get(TOOL_IMAGES) or [] if is_stored_image(image))


def has_images(messages: Sequence[Message]) -> bool:
    return next(stored_images(messages), None) is not None


def described(part: Part) -> str:
    """An image part in words: ``shot.png (1280x720)``."""
    name = str(part.get("name") or "image")
    width, height = part.get("width"), part.get("height")
    return f"{name} ({width}x{height})" if isinstance(width, int) and isinstance(height, int) else name


class ModelImages:
    """What one model is sent of a history's images; ``send`` False once it is known not to take them."""

    def __init__(self, store: ImageStore, send: bool) -> None:
        self.store = store
        self.send = send
        self._encoded: OrderedDict[str, str] = OrderedDict()

    def for_the_model(self, messages: list[Message]) -> list[Message]:
        """``messages`` as the request carries them (blocking: reads the store; call it in a thread)."""
        out: list[Message] = []
        for message in messages:
            content = message.get("content")
            if not isinstance(content, list):
                out.append(message)
                continue
            if any(is_stored_image(part) for part in content):
                out.append({**message, "content": [self._user_part(part) for part in content]})
                continue
            out.append(message)
            shown = [
                image for part in content if isinstance(part, dict) for image in part.get(TOOL_IMAGES) or []
            ]
            if shown and self.send and message.get("role") == "tool":
                out.append(self._tool_images(shown))
        return out

    def _user_part(self, part: Any) -> Any:
        if not is_stored_image(part):
            return part
        if not self.send:
            return {
                "type": "text",
                "text": f"[Image {described(part)}: not shown, this model does not take images.]",
            }
        data = self._base64(str(part["imageId"]))
        if data is None:
            return {"type": "text", "text": f"[Image {described(part)}: no longer kept.]"}
        return {"type": "image", "image": data, "mediaType": part.get("mediaType") or "image/png"}

    def _tool_images(self, images: list[Any]) -> Message:
        names = ", ".join(described(image) for image in images if is_stored_image(image))
        return {
            "role": "user",
            "content": [
                {"type": "text", "text": f"The image from the tool result above: {names}"},
                *(self._user_part(image) for image in images if is_stored_image(image)),
            ],
        }

    def _base64(self, image_id: str) -> str | None:
        cached = self._encoded.get(image_id)
        if cached is not None:
            self._encoded.move_to_end(image_id)
            return cached
        found = self.store.read(image_id)
        if found is None:
            return None
        encoded = base64.b64encode(found[0]).decode("ascii")
        self._encoded[image_id] = encoded
        while len(self._encoded) > _SENT_KEPT:
            self._encoded.popitem(last=False)
        return encoded
