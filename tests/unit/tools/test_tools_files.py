"""read_file, read_many_files, write_file, edit_file, multi_edit on a real temp workspace."""

from __future__ import annotations

import asyncio
import tracemalloc
from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from shiro_lsp.tools import MAX_OUTPUT
from tool_helpers import RunTool


async def test_read_file_numbers_lines_like_cat_n(run: RunTool, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\ngamma\n")
    assert await run("read_file", path="a.txt") == "     1\talpha\n     2\tbeta\n     3\tgamma"


async def test_read_file_offset_and_limit(run: RunTool, workspace: Path) -> None:
    (workspace / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await run("read_file", path="a.txt", offset=4, limit=2)
    assert result == "     4\tline 4\n     5\tline 5\n... [more lines follow; continue with offset=6]"


async def test_read_file_offset_past_the_end(run: RunTool, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolError, match=r"a.txt has 2 lines; offset 9 is past the end"):
        await run("read_file", path="a.txt", offset=9)


async def test_read_file_missing_directory_and_empty(run: RunTool, workspace: Path) -> None:
    with pytest.raises(ToolError, match=r"No such file: nope.txt"):
        await run("read_file", path="nope.txt")
    (workspace / "d").mkdir()
    with pytest.raises(ToolError, match=r"d is a directory"):
        await run("read_file", path="d")
    (workspace / "empty.txt").write_text("")
    assert await run("read_file", path="empty.txt") == "empty.txt is empty."


async def test_binary_files_are_refused(run: RunTool, workspace: Path) -> None:
    (workspace / "data.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolError, match=r"^data.bin is a binary file"):
        await run("read_file", path="data.bin")
    with pytest.raises(ToolError, match=r"binary file"):
        await run("edit_file", path="data.bin", oldString="PNG", newString="GIF")


async def test_an_image_file_is_described_to_a_model_that_takes_no_images(
    run: RunTool, workspace: Path
) -> None:
    from PIL import Image

    Image.new("RGB", (30, 20)).save(workspace / "logo.png")
    text = await run("read_file", path="logo.png")
    assert text.startswith("logo.png is an image (30x20). This model cannot see images")
    (workspace / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolError, match=r"^broken.png is not an image Shiro can read"):
        await run("read_file", path="broken.png")


async def test_read_of_a_50_mb_file_is_capped_without_loading_it(run: RunTool, workspace: Path) -> None:
    big = workspace / "big.log"
    line = "x" * 99 + "\n"
    with big.open("w") as f:
        for _ in range(50):
            f.write(line * 10_000)
    assert big.stat().st_size == 50_000_000
    tracemalloc.start()
    try:
        result = await run("read_file", path="big.log", limit=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(result) <= MAX_OUTPUT + 200
    assert "continue with offset=" in result.splitlines()[-1]
    assert peak < 5_000_000


async def test_a_single_huge_line_is_cut(run: RunTool, workspace: Path) -> None:
    (workspace / "min.js").write_text("a" * 5_000_000 + "\nsecond\n")
    result = await run("read_file", path="min.js")
    first, second = result.splitlines()
    assert first.endswith(" ... [line cut]") and len(first) < 2_100
    assert second == "     2\tsecond"


async def test_read_many_files_reports_failures_in_place(run: RunTool, workspace: Path) -> None:
    (workspace / "a.txt").write_text("A\n")
    (workspace / "b.txt").write_text("B1\nB2\n")
    result = await run(
        "read_many_files", files=[{"path": "a.txt"}, {"path": "missing.txt"}, {"path": "b.txt", "offset": 2}]
    )
    assert result == (
        "===== a.txt =====\n     1\tA\n\n"
        "===== missing.txt =====\n[unreadable: No such file: missing.txt]\n\n"
        "===== b.txt =====\n     2\tB2"
    )


async def test_write_file_creates_parents(run: RunTool, workspace: Path) -> None:
    result = await run("write_file", path="src/deep/new.py", content="print('hi')\n")
    assert result == "Wrote 12 chars to src/deep/new.py"
    assert (workspace / "src/deep/new.py").read_text() == "print('hi')\n"


async def test_write_file_of_the_content_a_file_already_holds_says_nothing_changed(
    run: RunTool, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    with pytest.raises(ToolError, match=r"a\.py already holds exactly this content, so nothing would change"):
        await run("write_file", path="a.py", content="x = 1\n")


async def test_write_file_warns_about_a_collapsed_rewrite(run: RunTool, workspace: Path) -> None:
    (workspace / "a.py").write_text("".join(f"x{i} = {i}\n" for i in range(20)))
    squeezed = "; ".join(f"x{i} = {i}" for i in range(20))
    result = await run("write_file", path="a.py", content=squeezed)
    assert "collapsed 21 lines into 1" in result


async def test_write_file_refuses_a_directory(run: RunTool, workspace: Path) -> None:
    (workspace / "d").mkdir()
    with pytest.raises(ToolError, match=r"d is a directory"):
        await run("write_file", path="d", content="x")


async def test_edit_file_replaces_exactly_once(run: RunTool, workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    assert await run("edit_file", path="a.py", oldString="y = 2", newString="y = 3") == (
        "Replaced 1 occurrence(s) in a.py"
    )
    assert (workspace / "a.py").read_text() == "x = 1\ny = 3\n"


async def test_edit_file_errors(run: RunTool, workspace: Path) -> None:
    target = workspace / "a.py"
    target.write_text("v = 1\nv = 1\n")
    with pytest.raises(ToolError, match=r"a.py: oldString not found"):
        await run("edit_file", path="a.py", oldString="w = 1", newString="w = 2")
    with pytest.raises(
        ToolError, match=r"a.py: oldString appears 2 times\. Add surrounding context or set replaceAll"
    ):
        await run("edit_file", path="a.py", oldString="v = 1", newString="v = 2")
    with pytest.raises(ToolError, match=r"oldString and newString are identical"):
        await run("edit_file", path="a.py", oldString="v = 1", newString="v = 1")
    with pytest.raises(ToolError, match=r"No such file: b.py"):
        await run("edit_file", path="b.py", oldString="a", newString="b")
    assert target.read_text() == "v = 1\nv = 1\n"


async def test_edit_file_replace_all(run: RunTool, workspace: Path) -> None:
    (workspace / "a.py").write_text("v = 1\nv = 1\n")
    assert "Replaced 2 occurrence(s)" in await run(
        "edit_file", path="a.py", oldString="v = 1", newString="v = 2", replaceAll=True
    )
    assert (workspace / "a.py").read_text() == "v = 2\nv = 2\n"


async def test_edit_file_keeps_crlf_endings(run: RunTool, workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await run("edit_file", path="w.txt", oldString="one\ntwo", newString="uno\ndos")
    assert (workspace / "w.txt").read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_multi_edit_applies_in_order(run: RunTool, workspace: Path) -> None:
    (workspace / "a.py").write_text("a = 1\nb = 2\n")
    result = await run(
        "multi_edit",
        path="a.py",
        edits=[
            {"oldString": "a = 1", "newString": "a = 10"},
            {"oldString": "a = 10\nb", "newString": "a = 10\nc"},
        ],
    )
    assert result == "Applied 2 edit(s) to a.py (1x, 1x)"
    assert (workspace / "a.py").read_text() == "a = 10\nc = 2\n"


async def test_multi_edit_is_all_or_nothing(run: RunTool, workspace: Path) -> None:
    (workspace / "a.py").write_text("a = 1\nb = 2\n")
    with pytest.raises(ToolError, match=r"(?s)edit 2 in a.py: oldString not found.*No edits were applied\."):
        await run(
            "multi_edit",
            path="a.py",
            edits=[{"oldString": "a = 1", "newString": "a = 10"}, {"oldString": "zzz", "newString": "y"}],
        )
    assert (workspace / "a.py").read_text() == "a = 1\nb = 2\n"


async def test_multi_edit_that_cancels_out_is_refused(run: RunTool, workspace: Path) -> None:
    (workspace / "a.py").write_text("a = 1\n")
    with pytest.raises(ToolError, match=r"the edits cancel out"):
        await run(
            "multi_edit",
            path="a.py",
            edits=[
                {"oldString": "a = 1", "newString": "a = 2"},
                {"oldString": "a = 2", "newString": "a = 1"},
            ],
        )


async def test_filesystem_refusals_reach_the_model_as_tool_errors(run: RunTool, workspace: Path) -> None:
    (workspace / "plain.txt").write_text("I am a file\n")
    with pytest.raises(ToolError, match=r"^write_file failed: "):
        await run("write_file", path="plain.txt/child.txt", content="x")


async def test_big_reads_leave_the_event_loop_free(run: RunTool, workspace: Path) -> None:
    big = workspace / "big.txt"
    with big.open("w") as f:
        for _ in range(20):
            f.write("y" * 99 + "\n" * 1 + ("z" * 99 + "\n") * 9_999)
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await run("read_file", path="big.txt", offset=199_000, limit=10)
    done.set()
    await task
    assert ticks > 1


CONFIG = '{\n  "database": {\n    "user": "app",\n    "password": "changeme-9"\n  }\n}\n'
SHOWN = CONFIG.replace("changeme-9", "[redacted key field]")


async def test_a_file_rewritten_as_the_model_saw_it_keeps_its_hidden_secret(
    run: RunTool, workspace: Path
) -> None:
    (workspace / "config.json").write_text(CONFIG)
    await run("write_file", path="config.json", content=SHOWN.replace('"app"', '"service"'))
    assert (workspace / "config.json").read_text() == CONFIG.replace('"app"', '"service"')


async def test_a_hidden_secret_is_never_replaced_by_a_value_the_model_made_up(
    run: RunTool, workspace: Path
) -> None:
    (workspace / "config.json").write_text(CONFIG)
    invented = SHOWN.replace("[redacted key field]", "your_production_password")
    with pytest.raises(ToolError, match=r"Not written: config.json: line 4 gives password a value of yours"):
        await run("write_file", path="config.json", content=invented)
    with pytest.raises(ToolError, match=r"Not written: config.json: line 4 gives password a value"):
        await run("edit_file", path="config.json", oldString='"password": "', newString='"password": "x')
    assert (workspace / "config.json").read_text() == CONFIG


async def test_a_redaction_marker_never_lands_in_a_file(run: RunTool, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("token\n")
    with pytest.raises(ToolError, match=r"line 2 holds a \[redacted …\] marker"):
        await run("write_file", path="notes.txt", content="token\nAPI_KEY=[redacted secret assignment]\n")
    assert (workspace / "notes.txt").read_text() == "token\n"
