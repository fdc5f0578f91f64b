"""Images kept by their hash in the state root (``<state root>/images/<sha256>.<png|jpg>``).

A session holds an image as a small part naming its id (``parts.py``), never the bytes: the session
file stays small, and an image shown twice (pasted again, read again) is kept once. The store is
shared by every session of the state root, as checkpoint blobs are; files are written atomically and
never changed (the name is the content's hash). Blocking I/O: call it in a thread.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from shiro_lsp.images.process import Prepared, image_size, prepare, thumbnail_url
from shiro_lsp.state.atomic import write_bytes_atomic

_ID = re.compile(r"[0-9a-f]{64}")
_SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg"}


@dataclass(frozen=True)
class StoredImage:
    id: str
    media_type: str
    width: int
    height: int
    name: str


class ImageStore:
    def __init__(self, root: Path) -> None:
        self.dir = root / "images"

    def add(self, data: bytes, name: str) -> StoredImage:
        """Keep an image the user gave (checked and downscaled first: ``process.prepare``)."""
        return self.keep(prepare(data, name), name)

    def keep(self, prepared: Prepared, name: str) -> StoredImage:
        image_id = hashlib.sha256(prepared.data).hexdigest()
        path = self.dir / f"{image_id}{_SUFFIXES[prepared.media_type]}"
        if not path.exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(path, prepared.data)
        return StoredImage(image_id, prepared.media_type, prepared.width, prepared.height, name)

    def read(self, image_id: str) -> tuple[bytes, str] | None:
        """The image's bytes and media type, or None when the store does not hold it."""
        if not _ID.fullmatch(image_id):
            return None
        for media_type, suffix in _SUFFIXES.items():
            try:
                return (self.dir / f"{image_id}{suffix}").read_bytes(), media_type
            except FileNotFoundError:
                continue
        return None

    def describe(self, image_id: str, name: str) -> StoredImage | None:
        """The kept image ``image_id`` (its size read from the file), or None when the store lacks it."""
        found = self.read(image_id)
        if found is None:
            return None
        width, height = image_size(found[0])
        return StoredImage(image_id, found[1], width, height, name)

    def thumbnail(self, image_id: str) -> str | None:
        """A small ``data:`` URL of the image, or None when it is gone."""
        cached = _thumbnails.get(image_id)
        if cached is not None:
            return cached
        found = self.read(image_id)
        if found is None:
            return None
        if len(_thumbnails) >= THUMBNAILS_KEPT:
            _thumbnails.pop(next(iter(_thumbnails)))
        _thumbnails[image_id] = url = thumbnail_url(found[0])
        return url


THUMBNAILS_KEPT = 256
_thumbnails: dict[str, str] = {}
"""Thumbnails by image id (an id names one content, in every state root): made once a process."""
