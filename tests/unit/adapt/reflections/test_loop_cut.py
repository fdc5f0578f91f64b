"""The loop cut sees a reply repeating one line or a block of lines, and nothing a real answer holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shiro_lsp.adapt.reflections.loop_cut import RepetitionWatch

RECORDINGS = Path(__file__).resolve().parents[3] / "fixtures" / "realmodel"


def cut_at(text: str, chunk: int = 7) -> int | None:
    """Where the watch stopped the stream (fed in small chunks, as it streams), or None."""
    watch = RepetitionWatch()
    for at in range(0, len(text), chunk):
        if watch.feed(text[at : at + chunk]):
            return watch.loop_starts
    return None


@pytest.mark.parametrize(
    ("recording", "kept_ends_with"),
    [
        # Qwen2.5-Coder-0.5B: a numbered comment and its assert, until the 300 s timeout
        ("0.5b-test-cases-loop.txt", "def test_clamp():\n"),
        # the same model: three small listings over and over
        ("0.5b-readme-cycle-loop.txt", "### Naming Files:\n"),
    ],
)
def test_a_recorded_block_repeated_over_and_over_is_cut_where_it_began(
    recording: str, kept_ends_with: str
) -> None:
    text = (RECORDINGS / recording).read_text()
    starts = cut_at(text)
    assert starts is not None
    assert text[:starts].endswith(kept_ends_with)


def test_one_line_shape_repeated_is_cut() -> None:
    text = "def test_clamp():\n" + "".join(f"    assert clamp(10, -{n}, -{n}) == -{n}\n" for n in range(60))
    watch = RepetitionWatch()
    assert any(watch.feed(text[at : at + 7]) for at in range(0, len(text), 7))
    assert text[: watch.loop_starts] == "def test_clamp():\n"
    kept = text[: watch.keep_until]
    assert kept.count("assert") == 8 and kept.endswith("== -7\n")  # the loop's first lines


def test_a_table_and_similar_functions_are_not_cut() -> None:
    table = "| size | count |\n|---|---|\n" + "".join(f"| {n} | {n * 3} |\n" for n in range(35))
    functions = "".join(
        f"def handler_{name}(event):\n    log(event)\n    return {n}\n\n"
        for n, name in enumerate(("open", "close", "save", "load", "move", "copy", "send"))
    )
    cases = "".join(f"    # case {n}\n    assert clamp({n}, 0, 5) == {min(n, 5)}\n" for n in range(12))
    assert cut_at(table + functions + cases) is None


def test_a_recorded_paragraph_repeating_its_sentences_is_cut_after_what_it_said_first() -> None:
    # Qwen2.5-Coder-1.5B: three sentences over and over, no line break
    text = (RECORDINGS / "1.5b-prose-loop.txt").read_text()
    starts = cut_at(text)
    assert starts is not None
    assert "plus one, which is incorrect" in text[:starts]
    assert text[:starts].count("The `run_stats.py` file was also incorrect") <= 1


def test_a_long_line_that_repeats_a_phrase_a_few_times_is_not_cut() -> None:
    line = " ".join(f"item {n} is fine, and so is its neighbour;" for n in range(60))  # numbers differ
    data = json.dumps({f"key{n}": [n, n * 2, "same"] for n in range(200)})  # one long line
    assert cut_at(line + "\n" + data + "\n") is None


def test_one_call_per_character_over_and_over_is_cut_though_its_strings_differ() -> None:
    marks = [chr(c) for c in range(33, 127) if chr(c) not in "\"'\\"] * 3
    text = "def tidy(label):\n" + "".join(f'    label = label.replace("{m}", "")\n' for m in marks)
    starts = cut_at(text)
    assert starts is not None and text[:starts] == "def tidy(label):\n"


def test_a_long_mapping_written_with_sense_is_not_cut() -> None:
    names = [f"{a}{b}" for a in "bcdfgh" for b in "aeiou"] * 3  # 90 entries, one shape, strings aside
    table = "NAMES = {\n" + "".join(f'    "{n}{i}": "{n.upper()}",\n' for i, n in enumerate(names)) + "}\n"
    assert cut_at(table) is None
