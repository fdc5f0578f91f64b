"""Line diffs: hunks are the changed regions, revert puts chosen ones back, the card diff applies."""

from __future__ import annotations

import random

from shiro_lsp import diffs
from shiro_lsp.tools.edits import apply_hunks, parse_patch

BASE = "".join(f"line {i}\n" for i in range(1, 31))


def test_three_separate_edits_are_three_hunks_and_one_can_be_put_back() -> None:
    edited = BASE.replace("line 2\n", "two\n").replace("line 15\n", "fifteen\n").replace("line 28\n", "")
    found = diffs.hunks(BASE, edited)
    assert [(h.header(), h.old_lines, h.new_lines) for h in found] == [
        ("@@ -2 +2 @@", 1, 1),
        ("@@ -15 +15 @@", 1, 1),
        ("@@ -28 +27,0 @@", 1, 0),
    ]
    middle_back = diffs.revert(BASE, edited, [1])
    assert "line 15\n" in middle_back and "two\n" in middle_back and "line 28\n" not in middle_back
    assert diffs.revert(BASE, edited, [0, 1, 2]) == BASE
    assert diffs.counts(BASE, edited) == (2, 3)


def test_the_card_diff_is_a_patch_that_turns_before_into_after() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a = [rng.choice(["x\n", "y\n", "\n", "z\n"]) for _ in range(rng.randint(0, 30))]
        b = list(a)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(b))
            if rng.random() < 0.5:
                b.insert(at, rng.choice(["new\n", "x\n", "\n"]))
            elif b:
                del b[min(at, len(b) - 1)]
        before, after = "".join(a), "".join(b)
        added, deleted, text = diffs.card(before, after, "f.txt", limit=10**9)
        assert (added, deleted) == diffs.counts(before, after)
        if before == after:
            assert text == ""
            continue
        (patch,) = parse_patch(text)
        assert apply_hunks(before, patch.hunks, "f.txt") == after


def test_a_long_diff_is_cut_and_says_so() -> None:
    text = diffs.unified("", "".join(f"{i}\n" for i in range(5000)), "big.txt", limit=500)
    assert len(text) < 600 and "[diff cut," in text


def _whole(before: str, after: str, context: int) -> tuple[list[diffs.Opcode], str]:
    """The opcodes and card diff of the whole texts, every line split (the reference)."""
    a, b = diffs.lines(before), diffs.lines(after)
    codes = diffs.opcodes(a, b)
    return codes, diffs._unified(a, b, codes, True, True, "f.txt", 10**9)


def test_a_diff_found_in_a_window_is_the_diff_of_the_whole_texts() -> None:
    """The card and the hunks split only the lines around the change (an edit of a big file is
    cheap); they must say exactly what splitting every line says, whatever the line breaks."""
    rng = random.Random(11)
    pieces = ["x\n", "y\n", "\n", "z", "xy\n", "\r\n", "\r", "x\r\n", "\u2028", "é\n"]
    for round_ in range(3000):
        plain = round_ % 2 == 0  # half the texts use "\n" only: the window is taken
        choices = [p for p in pieces if plain is ("\r" not in p and "\u2028" not in p)] if plain else pieces
        a = [rng.choice(choices) for _ in range(rng.randint(0, 40))]
        b = list(a)
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(b))
            roll = rng.random()
            if roll < 0.4:
                b.insert(at, rng.choice(choices))
            elif roll < 0.7 and b:
                del b[min(at, len(b) - 1)]
            elif b:
                b[min(at, len(b) - 1)] = rng.choice(choices)
        before, after = "".join(a), "".join(b)
        codes, text = _whole(before, after, 3)
        added, deleted, card = diffs.card(before, after, "f.txt", limit=10**9)
        assert card == text, (before, after)
        assert (added, deleted) == (
            sum(j2 - j1 for tag, _, _, j1, j2 in codes if tag != "equal"),
            sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag != "equal"),
        )
        expected = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in codes if tag != "equal"]
        found = [(h.old_start, h.old_end, h.new_start, h.new_end) for h in diffs.hunks(before, after)]
        assert found == expected, (before, after)


def test_an_edit_in_the_middle_of_a_long_file_has_its_own_line_numbers() -> None:
    before = "".join(f"line {i}\n" for i in range(1, 1001))
    after = before.replace("line 500\n", "five hundred\n")
    added, deleted, text = diffs.card(before, after, "f.txt")
    assert (added, deleted) == (1, 1)
    assert text.splitlines()[2:] == [
        "@@ -497,7 +497,7 @@",
        " line 497",
        " line 498",
        " line 499",
        "-line 500",
        "+five hundred",
        " line 501",
        " line 502",
        " line 503",
    ]
    assert [h.header() for h in diffs.hunks(before, after)] == ["@@ -500 +500 @@"]
