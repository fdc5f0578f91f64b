"""Images as Shiro keeps and sends them: checked, upright, downscaled, stripped; kept by hash; sent as
image parts to a model that takes them and as words to one that does not."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from shiro_lsp.images.parts import TOOL_IMAGES, ModelImages, image_part, stored_images
from shiro_lsp.images.process import MAX_SIDE, NotAnImage, prepare
from shiro_lsp.images.store import ImageStore


def picture(width: int, height: int, format: str = "PNG", **save: object) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format, **save)
    return out.getvalue()


def test_a_large_screenshot_is_downscaled_to_the_long_side() -> None:
    prepared = prepare(picture(3000, 1500), "wide.png")
    assert (prepared.width, prepared.height) == (MAX_SIDE, MAX_SIDE // 2)
    assert prepared.media_type == "image/png"
    with Image.open(io.BytesIO(prepared.data)) as opened:
        assert opened.size == (MAX_SIDE, MAX_SIDE // 2)


def test_a_small_image_keeps_its_size_and_a_jpeg_stays_jpeg() -> None:
    prepared = prepare(picture(300, 200, "JPEG"), "photo.jpg")
    assert (prepared.width, prepared.height, prepared.media_type) == (300, 200, "image/jpeg")


def test_exif_orientation_is_applied_and_metadata_is_not_kept() -> None:
    image = Image.new("RGB", (400, 100), (0, 0, 255))
    exif = image.getexif()
    exif[0x0112] = 6  # rotated 90 degrees
    exif[0x010F] = "CameraMaker"
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif)
    prepared = prepare(out.getvalue(), "phone.jpg")
    assert (prepared.width, prepared.height) == (100, 400)
    with Image.open(io.BytesIO(prepared.data)) as opened:
        assert not opened.getexif()
    assert b"CameraMaker" not in prepared.data


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"not an image at all", "is not an image Shiro can read"),
        (picture(10, 10, "TIFF"), "is a TIFF image"),
    ],
)
def test_what_is_not_a_usable_image_is_refused_in_words(data: bytes, said: str) -> None:
    with pytest.raises(NotAnImage, match=said):
        prepare(data, "thing.bin")


def test_the_store_keeps_an_image_once_by_hash(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    first = store.add(picture(64, 32), "a.png")
    again = store.add(picture(64, 32), "b.png")
    assert first.id == again.id and len(first.id) == 64
    assert [p.name for p in (tmp_path / "images").iterdir()] == [f"{first.id}.png"]
    assert store.read(first.id) is not None and store.read("../../etc/passwd") is None
    described = store.describe(first.id, "a.png")
    assert described is not None and (described.width, described.height) == (64, 32)
    thumb = store.thumbnail(first.id)
    assert thumb is not None and thumb.startswith("data:image/png;base64,")


def test_a_model_that_takes_images_gets_them_and_one_that_does_not_gets_words(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    kept = store.add(picture(64, 32), "shot.png")
    user = {"role": "user", "content": [{"type": "text", "text": "what is wrong here?"}, image_part(kept)]}
    sent = ModelImages(store, send=True).for_the_model([user])
    assert sent[0]["content"][1]["type"] == "image" and sent[0]["content"][1]["mediaType"] == "image/png"
    assert len(sent[0]["content"][1]["image"]) > 40
    words = ModelImages(store, send=False).for_the_model([user])
    assert words[0]["content"][1] == {
        "type": "text",
        "text": "[Image shot.png (64x32): not shown, this model does not take images.]",
    }
    assert user["content"][1] == image_part(kept)  # the history itself is left as it was


def test_a_tool_results_image_follows_it_in_a_user_message(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    kept = store.add(picture(20, 20), "icon.png")
    result = {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "read_file",
        "output": {"type": "text", "value": "icon.png: a 20x20 image"},
        TOOL_IMAGES: [image_part(kept)],
    }
    history = [{"role": "tool", "content": [result]}]
    sent = ModelImages(store, send=True).for_the_model(history)
    assert [m["role"] for m in sent] == ["tool", "user"]
    assert sent[1]["content"][0]["text"] == "The image from the tool result above: icon.png (20x20)"
    assert sent[1]["content"][1]["type"] == "image"
    assert [m["role"] for m in ModelImages(store, send=False).for_the_model(history)] == ["tool"]
    assert [p["imageId"] for p in stored_images(history)] == [kept.id]


def test_an_image_no_longer_kept_is_said_so(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    kept = store.add(picture(8, 8), "gone.png")
    (tmp_path / "images" / f"{kept.id}.png").unlink()
    sent = ModelImages(store, send=True).for_the_model([{"role": "user", "content": [image_part(kept)]}])
    assert sent[0]["content"] == [{"type": "text", "text": "[Image gone.png (8x8): no longer kept.]"}]
