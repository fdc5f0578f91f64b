"""Image files in the workspace: read through the jail, as every file a tool or the user names."""

from __future__ import annotations

from pathlib import PurePath

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import Roots, locate, relative_posix
from shiro_lsp.fs.reader import read_bytes
from shiro_lsp.fs.secrets import is_secret_path, refusal
from shiro_lsp.images.process import IMAGE_SUFFIXES, MAX_INPUT_BYTES, NotAnImage, image_size
from shiro_lsp.images.store import ImageStore, StoredImage


def is_image_path(path: str) -> bool:
    return PurePath(path).suffix.lower() in IMAGE_SUFFIXES


def read_image_file(workspace: Roots, path: str) -> bytes:
    """The bytes of an image file inside the workspace folders (a ToolError says why not: outside
    them, a secrets file, missing, over the size limit)."""
    root, resolved = locate(workspace, path)
    if is_secret_path(path, relative_posix(root, resolved)):
        raise ToolError(refusal(path))
    data = read_bytes(workspace, path, limit=MAX_INPUT_BYTES + 1, whole=False).data
    if len(data) > MAX_INPUT_BYTES:
        raise ToolError(f"{path} is over {MAX_INPUT_BYTES // 2**20} MB; images up to that size are taken.")
    return data


def image_for_the_model(
    workspace: Roots, path: str, store: ImageStore | None
) -> tuple[str, StoredImage | None]:
    """``read_file`` of an image: what the result says, and the image to show with it (None for a model
    that takes no images, ``store`` None). Blocking."""
    data = read_image_file(workspace, path)
    name = PurePath(path).name
    try:
        if store is None:
            width, height = image_size(data)
            return (
                f"{path} is an image ({width}x{height}). This model cannot see images; describe what you "
                "need from it to the user, or read a text file instead.",
                None,
            )
        kept = store.add(data, name)
    except (NotAnImage, OSError, ValueError) as error:
        raise ToolError(
            getattr(error, "message", f"{path} is not an image Shiro can read ({error}).")
        ) from None
    return f"{path}: an image, shown to you after this result ({kept.width}x{kept.height}).", kept
